package dev.outboxkit.core;

/**
 * An event that can never be published as it is (illegal topic, reserved header, bad JSON).
 * Fatal for that event: relays park it in the dead-letter table, writers refuse it before
 * anything reaches the database. Never retried.
 */
public class InvalidEventException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    public InvalidEventException(String message) {
        super(message);
    }

    public InvalidEventException(String message, Throwable cause) {
        super(message, cause);
    }
}
