package dev.outboxkit.writer;

/**
 * What {@link IdempotencyKeys#execute} returns.
 *
 * @param response the response to send: the work's, or the stored one
 * @param replayed true when the work did not run now and {@code response} is the stored outcome
 *                 of an earlier request with the same key (e.g. set {@code Idempotent-Replayed: true})
 */
public record IdempotentResult(StoredResponse response, boolean replayed) {
}
