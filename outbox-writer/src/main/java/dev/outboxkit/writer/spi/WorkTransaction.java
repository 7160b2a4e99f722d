package dev.outboxkit.writer.spi;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * Not API: what {@link IdempotencyEngine} needs from the transaction a request's work runs in. Each adapter
 * (the library's {@code IdempotencyKeys.execute} on a connection it manages, the Spring filter on a Spring
 * transaction) implements it once; the engine decides what to call when.
 */
public interface WorkTransaction {

    /**
     * Runs {@code completion} inside the work's transaction and commits both, or neither. On failure the
     * transaction is rolled back before this throws.
     *
     * @throws dev.outboxkit.writer.CommitOutcomeUnknownException when the COMMIT may or may not have committed
     * @throws SQLException the completion or the commit was refused ({@code IdempotencySql.isClaimLost} tells a lost
     *                      claim); nothing committed
     */
    void commit(RoundTrip completion) throws SQLException;

    /** Rolls the work back; never throws (a failing rollback is added to {@code cause}, when there is one). */
    void rollback(Throwable cause);

    /** After {@link #rollback}: runs one of the key's own statements on a connection with autocommit on. */
    <T> T alone(KeyStatement<T> statement) throws SQLException;

    /** A statement on the key's own row, committed alone. */
    @FunctionalInterface
    interface KeyStatement<T> {
        T run(Connection c) throws SQLException;
    }
}
