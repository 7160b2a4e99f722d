package dev.outboxkit.core.internal;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * Not API: runs work in one JDBC transaction on a connection the caller holds: commits when the work returns, rolls
 * back and rethrows when it throws, and gives the connection back with the auto-commit it had (a pooled connection
 * is returned as it was borrowed).
 */
public final class Transactions {

    /** Work inside the transaction, returning a value. */
    @FunctionalInterface
    public interface Work<T> {
        T run(Connection c) throws SQLException;
    }

    private Transactions() {
    }

    /** {@code work} on {@code c} in one transaction; its value once committed. */
    public static <T> T inTransaction(Connection c, Work<T> work) throws SQLException {
        boolean autoCommit = c.getAutoCommit();
        c.setAutoCommit(false);
        try {
            T value = work.run(c);
            c.commit();
            return value;
        } catch (SQLException | RuntimeException e) {
            c.rollback();
            throw e;
        } finally {
            c.setAutoCommit(autoCommit);
        }
    }
}
