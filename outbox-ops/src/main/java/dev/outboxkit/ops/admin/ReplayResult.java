package dev.outboxkit.ops.admin;

import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * What {@link OutboxAdmin#replay} did or, in a dry run, would do.
 *
 * @param dryRun      nothing was changed
 * @param replayed    the events whose {@code published_at} was cleared (or would be): the relay sends them again
 *                    under their original ids, and consumers that applied them already skip them
 * @param notReplayed for a selection by id, each id that could not be replayed and why, in the order given
 */
public record ReplayResult(boolean dryRun, List<Event> replayed, Map<UUID, NotReplayed> notReplayed) {

    public ReplayResult {
        replayed = List.copyOf(replayed);
        notReplayed = java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(notReplayed));
    }

    /** An event replayed. */
    public record Event(UUID id, String aggregateType, String aggregateId) {
    }

    /** Why an event named by id was not replayed. */
    public enum NotReplayed {
        /** It is in {@code outbox_event} but not published yet: the relay will send it; there is nothing to replay. */
        UNPUBLISHED,
        /** It is parked as a dead letter: retry it instead ({@link OutboxAdmin#retryDeadLetters}). */
        PARKED,
        /**
         * Its row is gone: deleted after publication (relays keep rows only in {@code MARK} mode), or never written.
         * The intent ledger keeps its payload hash, not its payload.
         */
        NOT_KEPT
    }
}
