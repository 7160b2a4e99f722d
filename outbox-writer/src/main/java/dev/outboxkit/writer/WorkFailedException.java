package dev.outboxkit.writer;

/**
 * The caller's work threw a checked exception that is not an {@link java.sql.SQLException}; the
 * transaction was rolled back (and an idempotency claim released) before this was thrown.
 * {@link #getCause()} is the work's exception. Unchecked exceptions and SQLExceptions from the
 * work are rethrown as they are.
 */
public class WorkFailedException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public WorkFailedException(String message, Throwable cause) {
        super(message, cause);
    }
}
