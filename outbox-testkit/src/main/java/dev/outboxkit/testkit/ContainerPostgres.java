package dev.outboxkit.testkit;

import org.testcontainers.containers.PostgreSQLContainer;

/**
 * PostgreSQL in a container (Testcontainers), for machines with a Docker engine. Testcontainers
 * is an optional dependency: add {@code org.testcontainers:postgresql} to use this mode.
 */
final class ContainerPostgres extends TestPostgres {

    private final PostgreSQLContainer<?> container;

    @SuppressWarnings("resource")
    ContainerPostgres(String image) {
        container = new PostgreSQLContainer<>(image)
                .withCommand("postgres", "-c", "wal_level=logical", "-c", "max_replication_slots=32",
                        "-c", "max_wal_senders=32", "-c", "max_connections=300", "-c", "fsync=off");
        container.start();
    }

    @Override
    protected String baseUrl() {
        return "jdbc:postgresql://" + container.getHost() + ":" + container.getMappedPort(5432) + "/";
    }

    @Override
    public String adminUser() {
        return container.getUsername();
    }

    @Override
    public String adminPassword() {
        return container.getPassword();
    }

    @Override
    public String describe() {
        return "PostgreSQL container " + container.getDockerImageName();
    }

    @Override
    public void close() {
        container.stop();
    }
}
