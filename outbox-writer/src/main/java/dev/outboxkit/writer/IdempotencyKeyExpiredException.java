package dev.outboxkit.writer;

import java.time.Instant;

/**
 * A late retry: the key's full record was purged after its retention window, but its compact
 * tombstone shows the same request was seen before. The work did NOT run again, and the original
 * response is no longer available. Not retriable with this key. HTTP: 410 Gone in the example.
 */
public class IdempotencyKeyExpiredException extends IdempotencyException {
    private static final long serialVersionUID = 1L;

    private final Instant firstUsedAt;
    private final Instant purgedAt;

    public IdempotencyKeyExpiredException(String scope, String key, Instant firstUsedAt, Instant purgedAt) {
        super(scope, key, "idempotency key '" + key + "' in scope '" + scope + "' was first used at " + firstUsedAt
                + " and its stored response was purged at " + purgedAt + " (retention window passed); this late retry "
                + "was recognised and NOT executed again. If it is really a new request, send it with a new key");
        this.firstUsedAt = firstUsedAt;
        this.purgedAt = purgedAt;
    }

    public Instant firstUsedAt() {
        return firstUsedAt;
    }

    public Instant purgedAt() {
        return purgedAt;
    }

    /** 410 Gone. */
    @Override
    public int httpStatus() {
        return 410;
    }
}
