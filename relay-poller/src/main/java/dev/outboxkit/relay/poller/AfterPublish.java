package dev.outboxkit.relay.poller;

/** What the relay does with an outbox row once Kafka acknowledged its record. */
public enum AfterPublish {

    /** Delete the row (default): the table stays small and the claim query stays fast. */
    DELETE,

    /**
     * Keep the row and set {@code published_at} (to the time of the claim that published it).
     * Useful for audit; the application must purge published rows itself, or the table grows.
     */
    MARK
}
