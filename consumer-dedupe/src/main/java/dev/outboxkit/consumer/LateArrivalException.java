package dev.outboxkit.consumer;

import java.time.Instant;
import java.util.Objects;
import java.util.UUID;

/**
 * A new event older than the inbox's retention window: its id may have been recorded and purged
 * already, so applying it could apply it twice. Neither applied nor recorded; route it to a
 * review topic (what {@link DedupeConsumer} does by default) rather than retrying it.
 */
public final class LateArrivalException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final UUID eventId;
    private final Instant createdAt;

    public LateArrivalException(UUID eventId, Instant createdAt, Instant lateBefore) {
        super("late arrival: event " + eventId + " created " + createdAt + " is older than the retention window (before "
                + lateBefore + "), so its id may have been purged from processed_event; not applied. Review it, then "
                + "replay it (or apply it by hand) if it is new");
        this.eventId = Objects.requireNonNull(eventId, "eventId");
        this.createdAt = Objects.requireNonNull(createdAt, "createdAt");
    }

    public UUID eventId() {
        return eventId;
    }

    public Instant createdAt() {
        return createdAt;
    }
}
