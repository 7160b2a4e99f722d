package dev.outboxkit.relay.cdc.internal;

import dev.outboxkit.runtime.PublishFailures;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The counted failures of rows that Kafka keeps refusing ({@link PublishFailures#isAttempt}), so that the CDC relay
 * parks a row after {@code maxAttempts} as the polling relay does, instead of replaying it for ever while it holds
 * the slot and everything behind it. The polling relay keeps the count in the row ({@code outbox_event.attempts});
 * the CDC relay streams rows it never updates, so the count lives here, for the life of the relay instance, across
 * its sessions (each failure ends a session and the stream is replayed from the stored offset). A restart of the
 * process starts counting again: at worst {@code maxAttempts} more tries before the row is parked.
 *
 * <p>Only rows that failed are held, and only the most recent {@value #MAX_ROWS}; thread-safe (a failure is recorded
 * on the poll thread, or on the producer's when a batch is settled later).
 */
final class RowAttempts {

    /** A row to park instead of sending: how often it failed, and the last failure. */
    record Exhausted(int attempts, PublishFailures.Classified lastFailure) {
    }

    private record Count(int attempts, PublishFailures.Classified lastFailure) {
    }

    static final int MAX_ROWS = 1024;

    private final int maxAttempts;
    /** Whether any row is counted: read without the lock on every acknowledgement, the hot path. */
    private volatile boolean any;
    private final Map<String, Count> counts = new LinkedHashMap<>(16, 0.75f, false) {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Count> eldest) {
            return size() > MAX_ROWS;
        }
    };

    RowAttempts(int maxAttempts) {
        this.maxAttempts = maxAttempts;
    }

    /** Records one counted failure of {@code row}'s record; returns how many it has now. */
    synchronized int failed(OutboxRow row, PublishFailures.Classified failure) {
        Count before = counts.get(key(row));
        int n = before == null ? 1 : before.attempts() + 1;
        counts.put(key(row), new Count(n, failure));
        any = true;
        return n;
    }

    /** The row's count once it reached {@code maxAttempts} (park it, do not send it), else null. */
    Exhausted exhausted(OutboxRow row) {
        if (!any) {
            return null;
        }
        synchronized (this) {
            Count c = counts.get(key(row));
            return c == null || c.attempts() < maxAttempts ? null : new Exhausted(c.attempts(), c.lastFailure());
        }
    }

    /** Forgets {@code row} (acknowledged or parked). */
    void forget(OutboxRow row) {
        if (!any) {
            return;
        }
        synchronized (this) {
            counts.remove(key(row));
            any = !counts.isEmpty();
        }
    }

    int maxAttempts() {
        return maxAttempts;
    }

    /** Seq for a row; the event id for a logical decoding message (seq 0), the same every time it is replayed. */
    private static String key(OutboxRow row) {
        return row.seq() > 0 ? Long.toString(row.seq()) : "id:" + row.id();
    }
}
