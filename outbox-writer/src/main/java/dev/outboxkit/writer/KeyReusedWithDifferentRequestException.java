package dev.outboxkit.writer;

/**
 * The key was already used with a different request (its canonical hash differs). Nothing ran.
 * Not retriable with this key: the client reused a key for another request. HTTP: 422.
 */
public class KeyReusedWithDifferentRequestException extends IdempotencyException {
    private static final long serialVersionUID = 1L;

    public KeyReusedWithDifferentRequestException(String scope, String key) {
        super(scope, key, "idempotency key '" + key + "' in scope '" + scope + "' was already used for a different request; "
                + "a key identifies one request: send a new key for a new request, or resend the original request unchanged");
    }

    /** 422 Unprocessable Content. */
    @Override
    public int httpStatus() {
        return 422;
    }
}
