package dev.outboxkit.ops.admin;

import java.time.Duration;
import java.time.Instant;

/**
 * The state of one request idempotency key ({@link OutboxAdmin#idempotencyKey}), without its stored response: the
 * response body and headers may hold personal data and are never read. The table records no owner of a key.
 *
 * @param state          {@code in_progress} while the first request runs, {@code completed} once its outcome is stored
 * @param requestHash    SHA-256 of the canonical request, in lower-case hex; the same key with another request is refused
 * @param lockedUntil    lease of an {@code in_progress} claim; null when completed, or when the last attempt released
 *                       its claim after a transient failure (the next retry may run at once)
 * @param responseStatus the stored status code; null until completed
 * @param attempt        claim number: 1 for the first request, one more for each retry that took over
 * @param completedAt    when the outcome was stored; null until completed
 * @param age            how long ago the key was first claimed, by the database clock
 */
public record IdempotencyKeyState(String scope, String key, String state, String requestHash, Instant lockedUntil,
                                  Integer responseStatus, int attempt, Instant createdAt, Instant completedAt,
                                  Duration age) {

    /** True once the outcome is stored. */
    public boolean completed() {
        return "completed".equals(state);
    }
}
