package dev.outboxkit.writer;

/** A request was not executed because of the state of its idempotency key. */
public abstract class IdempotencyException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String scope;
    private final String key;

    protected IdempotencyException(String scope, String key, String message) {
        super(message);
        this.scope = scope;
        this.key = key;
    }

    public String scope() {
        return scope;
    }

    public String key() {
        return key;
    }
}
