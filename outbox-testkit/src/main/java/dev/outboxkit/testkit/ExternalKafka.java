package dev.outboxkit.testkit;

/** Brokers someone else runs, from {@code OUTBOXKIT_TEST_KAFKA_BOOTSTRAP}. */
final class ExternalKafka extends TestKafka {

    private final String bootstrap;

    ExternalKafka(String bootstrap) {
        if (bootstrap == null || bootstrap.isBlank()) {
            throw new IllegalArgumentException("OUTBOXKIT_TEST_KAFKA_BOOTSTRAP must name the brokers (host:port,...)");
        }
        this.bootstrap = bootstrap;
    }

    @Override
    public String bootstrapServers() {
        return bootstrap;
    }

    @Override
    public String describe() {
        return "external Kafka at " + bootstrap;
    }

    @Override
    public void close() {
        // not ours to stop
    }
}
