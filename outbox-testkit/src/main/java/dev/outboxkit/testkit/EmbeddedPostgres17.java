package dev.outboxkit.testkit;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * PostgreSQL 17 from the zonky binaries on the classpath, started in a temporary directory with
 * {@code wal_level=logical}. The default for tests, the demo and benchmarks: needs nothing
 * installed.
 */
final class EmbeddedPostgres17 extends TestPostgres {

    private final EmbeddedPostgres pg;

    EmbeddedPostgres17(int port, boolean durable) {
        try {
            EmbeddedPostgres.Builder builder = EmbeddedPostgres.builder()
                    .setPGStartupWait(java.time.Duration.ofSeconds(60));
            PostgresSettings.forTests(durable).forEach(builder::setServerConfig);
            if (port > 0) {
                builder.setPort(port);
            }
            pg = builder.start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start embedded PostgreSQL 17: " + e.getMessage(), e);
        }
    }

    @Override
    protected String baseUrl() {
        return "jdbc:postgresql://127.0.0.1:" + pg.getPort() + "/";
    }

    @Override
    public int port() {
        return pg.getPort();
    }

    @Override
    public String adminUser() {
        return "postgres";
    }

    @Override
    public String adminPassword() {
        return "postgres";
    }

    @Override
    public String describe() {
        return "embedded PostgreSQL 17 on 127.0.0.1:" + pg.getPort();
    }

    @Override
    public void close() {
        try {
            pg.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
