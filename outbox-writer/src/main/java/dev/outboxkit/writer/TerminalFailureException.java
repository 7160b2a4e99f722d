package dev.outboxkit.writer;

import java.util.Objects;

/**
 * Thrown by idempotent work to report a known, final failure (for example a 4xx decision such as
 * "insufficient funds"): the work's changes are rolled back, {@link #response()} is stored as the
 * key's outcome and replayed to every retry, and {@link IdempotencyKeys#execute} returns it
 * (not replayed) instead of throwing. Throw it only when retrying can never succeed; for anything
 * else throw another exception, which releases the key so a retry can run.
 */
public class TerminalFailureException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final StoredResponse response;

    public TerminalFailureException(StoredResponse response) {
        this(response, "terminal failure, status " + Objects.requireNonNull(response, "response").status());
    }

    public TerminalFailureException(StoredResponse response, String message) {
        super(message);
        this.response = Objects.requireNonNull(response, "response");
    }

    public StoredResponse response() {
        return response;
    }
}
