package dev.outboxkit.writer;

import java.sql.Connection;

/** The effect of an idempotent request; see {@link IdempotencyKeys#execute}. */
@FunctionalInterface
public interface IdempotentWork {

    /**
     * Performs the effect on {@code c} (autocommit off) and returns the response to store. The
     * effect, any outbox events written on {@code c} and the key's completion commit together
     * after this returns. Must not commit, roll back or change autocommit. Throw
     * {@link TerminalFailureException} to store a known, final failure; any other exception rolls
     * back and releases the key so a retry can run.
     */
    StoredResponse run(Connection c) throws Exception;
}
