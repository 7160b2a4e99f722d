package dev.outboxkit.writer;

import java.time.Duration;

/**
 * Another request with the same key and request is running now (or its holder crashed and its
 * lease has not expired yet). Nothing ran. Retriable: retry after {@link #retryAfter()} with the
 * same key, and get the stored response or run the work. HTTP: 409 with {@code Retry-After}.
 */
public class RequestInProgressException extends IdempotencyException {
    private static final long serialVersionUID = 1L;

    private final Duration retryAfter;

    public RequestInProgressException(String scope, String key, Duration retryAfter) {
        super(scope, key, "a request with idempotency key '" + key + "' in scope '" + scope + "' is still in progress; "
                + "retry with the same key in " + retryAfter.toSeconds() + " s");
        this.retryAfter = retryAfter;
    }

    /** When a retry may find the outcome or take the key over (whole seconds, at least 1 s). */
    public Duration retryAfter() {
        return retryAfter;
    }

    /** 409 Conflict, with {@code Retry-After: }{@link #retryAfter()}. */
    @Override
    public int httpStatus() {
        return 409;
    }
}
