package dev.outboxkit.core.spi;

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

    /**
     * {@code work} on {@code c} in one transaction; its value once committed. When it fails, the failure is what
     * the caller gets: a rollback or a reset of auto-commit that fails as well (a broken connection) is only added to it
     * as suppressed, so the cause (a server shutting down, say) is not hidden behind "connection is closed".
     */
    public static <T> T inTransaction(Connection c, Work<T> work) throws SQLException {
        boolean autoCommit = c.getAutoCommit();
        c.setAutoCommit(false);
        T value;
        try {
            value = work.run(c);
            c.commit();
        } catch (SQLException | RuntimeException e) {
            try {
                c.rollback();
            } catch (SQLException rollback) {
                e.addSuppressed(rollback);
            }
            try {
                c.setAutoCommit(autoCommit);
            } catch (SQLException reset) {
                e.addSuppressed(reset);
            }
            throw e;
        }
        c.setAutoCommit(autoCommit);
        return value;
    }
}
