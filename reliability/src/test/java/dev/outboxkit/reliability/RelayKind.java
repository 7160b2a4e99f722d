package dev.outboxkit.reliability;

import java.util.Locale;

/**
 * Which relay a {@link Harness} runs (system property {@code reliability.relay} for the randomized
 * mode and the soak).
 */
enum RelayKind {
    /** The polling relay ({@code relay-poller}, {@link PollRelayMain}); the writer keeps rows. */
    POLL,
    /**
     * The CDC relay ({@code relay-debezium}, {@link CdcRelayMain}) in its default mode: the writer keeps
     * rows, the relay deletes them after Kafka acknowledged them ({@code deleteAfterPublish(true)}).
     */
    CDC,
    /**
     * The CDC relay with {@code deleteAfterPublish(false)} and the writer's {@code INSERT_AND_DELETE}
     * mode: the WAL is the only copy of an event until Kafka has it, so every event goes through
     * Debezium's decoding and its resume from the stored offset.
     */
    CDC_WAL;

    /** {@code poll}, {@code cdc} or {@code cdc-wal} (case-insensitive). */
    static RelayKind parse(String value) {
        String v = value.trim().toUpperCase(Locale.ROOT).replace('-', '_');
        for (RelayKind k : values()) {
            if (k.name().equals(v)) {
                return k;
            }
        }
        throw new IllegalArgumentException("reliability.relay must be poll, cdc or cdc-wal, got '" + value + "'");
    }

    /** From {@code -Dreliability.relay} (default poll). */
    static RelayKind fromSystemProperty() {
        return parse(System.getProperty("reliability.relay", "poll"));
    }

    boolean cdc() {
        return this != POLL;
    }

    String label() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }
}
