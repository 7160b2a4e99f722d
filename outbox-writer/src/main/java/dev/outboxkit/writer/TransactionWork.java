package dev.outboxkit.writer;

import java.sql.Connection;

/**
 * Work that {@link OutboxWriter#inTransaction} runs in a transaction it commits for you; with
 * {@code T = StoredResponse}, the work of an idempotent request ({@link IdempotencyKeys#execute}).
 *
 * @param <T> what the work returns
 */
@FunctionalInterface
public interface TransactionWork<T> {

    /**
     * Changes business state on {@code c} and adds its events to {@code tx}. Must not commit,
     * roll back or change autocommit: the writer commits the events and the work together, in
     * one round trip, after this returns. Throwing rolls everything back.
     */
    T run(Connection c, OutboxTransaction tx) throws Exception;
}
