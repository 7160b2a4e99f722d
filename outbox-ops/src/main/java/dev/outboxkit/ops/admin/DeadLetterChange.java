package dev.outboxkit.ops.admin;

import java.util.List;
import java.util.UUID;

/**
 * What a retry or a discard did, in one transaction.
 *
 * @param action  what was done
 * @param rows    each row moved back to {@code outbox_event} (with the {@code seq} it has there) or deleted
 *                (with the {@code seq} it was parked with), by seq
 * @param missing ids the filter named that were not parked (already retried or discarded, or never parked); empty
 *                for a filter without ids
 */
public record DeadLetterChange(Action action, List<Row> rows, List<UUID> missing) {

    public DeadLetterChange {
        rows = List.copyOf(rows);
        missing = List.copyOf(missing);
    }

    /** The two things an operator does with a dead letter. */
    public enum Action {
        /** Moved back into {@code outbox_event}: the relay publishes it again. */
        RETRY,
        /** Deleted for good. */
        DISCARD
    }

    /** One row retried or discarded. */
    public record Row(UUID id, String aggregateType, String aggregateId, long seq) {
    }
}
