package dev.outboxkit.writer;

import java.sql.Connection;

/**
 * Like {@link IdempotentWork}, with an {@link OutboxTransaction} whose buffered events are sent in
 * the same round trip as the key's completion and the COMMIT.
 */
@FunctionalInterface
public interface IdempotentOutboxWork {

    /** See {@link IdempotentWork#run}; add events with {@code tx.add(...)} and do not commit {@code tx}. */
    StoredResponse run(Connection c, OutboxTransaction tx) throws Exception;
}
