package dev.outboxkit.ops.admin;

import java.sql.SQLException;

/**
 * A retry found an event with the same {@code seq} or id in {@code outbox_event}; nothing was moved (the whole
 * retry rolled back). The cause is the database's unique violation, whose message names the key. Fatal for this
 * request: retrying it unchanged fails again.
 */
public final class DeadLetterConflictException extends IllegalStateException {

    private static final long serialVersionUID = 1L;

    DeadLetterConflictException(String message, SQLException cause) {
        super(message, cause);
    }

    /** The database's message, which names the conflicting key (e.g. {@code Key (seq)=(3) already exists}). */
    public String databaseMessage() {
        return getCause().getMessage();
    }
}
