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

    /**
     * The HTTP status that answers this refusal, as the IETF draft "The Idempotency-Key HTTP Header Field" has it
     * (409, 422; 410 for a purged key is not in the draft). The Spring filter and the JDK HTTP example send it.
     */
    public abstract int httpStatus();
}
