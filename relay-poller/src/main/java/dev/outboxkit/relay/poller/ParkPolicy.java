package dev.outboxkit.relay.poller;

/**
 * What happens to an aggregate's later events once one of its events was parked in
 * {@code outbox_dead_letter} (Kafka refused it for good, or it failed {@code maxAttempts} times).
 */
public enum ParkPolicy {

    /**
     * Default: later events of the aggregate keep flowing (liveness). The parked event can be
     * retried later, after them; consumers of that aggregate see a gap until then.
     */
    CONTINUE,

    /**
     * Later events of the aggregate wait in {@code outbox_event} until the parked event is retried
     * or discarded ({@code outbox dead-letters}), so the aggregate's order is never broken.
     * Within a batch the relay then publishes an aggregate's events one at a time (one Kafka
     * round trip per event of the same aggregate in the batch), which costs throughput when a
     * few aggregates carry most events.
     */
    HOLD_AGGREGATE
}
