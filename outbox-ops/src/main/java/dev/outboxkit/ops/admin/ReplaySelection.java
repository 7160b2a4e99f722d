package dev.outboxkit.ops.admin;

import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.UUID;

/** Which events {@link OutboxAdmin#replay} publishes again: by id, or by creation time. Immutable. */
public final class ReplaySelection {

    private final List<UUID> ids;
    private final Instant from;
    private final Instant to;

    private ReplaySelection(List<UUID> ids, Instant from, Instant to) {
        this.ids = ids;
        this.from = from;
        this.to = to;
    }

    /**
     * These events (at least one).
     *
     * @throws IllegalArgumentException when {@code ids} is empty or holds null
     */
    public static ReplaySelection ids(Collection<UUID> ids) {
        return new ReplaySelection(DeadLetterFilter.requireIds(ids, "select by time with createdBetween"), null, null);
    }

    /**
     * Events created at or after {@code from} and before {@code to}; a null {@code to} means the time of the replay.
     * A range with {@code to} not after {@code from} selects nothing.
     *
     * @throws IllegalArgumentException when {@code from} is null
     */
    public static ReplaySelection createdBetween(Instant from, Instant to) {
        if (from == null) {
            throw new IllegalArgumentException("from is required (events created at or after it are replayed)");
        }
        return new ReplaySelection(null, from, to);
    }

    /** The ids named, in the given order (repeats removed); empty for a time range. */
    public List<UUID> ids() {
        return ids == null ? List.of() : ids.stream().distinct().toList();
    }

    boolean byIds() {
        return ids != null;
    }

    Instant from() {
        return from;
    }

    Instant to() {
        return to;
    }

    @Override
    public String toString() {
        return ids != null ? "events " + ids() : "events created in [" + from + ", " + (to == null ? "now" : to) + ")";
    }
}
