package dev.outboxkit.testkit;

import org.testcontainers.kafka.KafkaContainer;

/** Kafka in a container (Testcontainers, optional dependency {@code org.testcontainers:kafka}). */
final class ContainerKafka extends TestKafka {

    private final KafkaContainer container;

    @SuppressWarnings("resource")
    ContainerKafka(String image) {
        container = new KafkaContainer(image);
        container.start();
    }

    @Override
    public String bootstrapServers() {
        return container.getBootstrapServers();
    }

    @Override
    public String describe() {
        return "Kafka container " + container.getDockerImageName();
    }

    @Override
    public void close() {
        container.stop();
    }
}
