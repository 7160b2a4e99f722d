package dev.outboxkit.writer.internal;

import dev.outboxkit.writer.WorkFailedException;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Set;
import org.postgresql.core.BaseConnection;
import org.postgresql.core.TransactionState;

/**
 * Not API: public for the writer and idempotency keys in {@code dev.outboxkit.writer}.
 *
 * <p>How the writer tells a refused statement from a lost connection.
 */
public final class WriteFailures {

    /** admin_shutdown, crash_shutdown, cannot_connect_now, idle_in_transaction_session_timeout, idle_session_timeout. */
    private static final Set<String> SESSION_ENDED = Set.of("57P01", "57P02", "57P03", "25P03", "57P05");

    private WriteFailures() {
    }

    /**
     * True when {@code e} means the session is gone: the server may have done more than the client
     * was told (a COMMIT that was sent may have committed). False for errors the server reported on
     * a live session, which leave nothing half done.
     */
    public static boolean sessionLost(SQLException e, Connection c) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof SQLException s && s.getSQLState() != null
                    && (s.getSQLState().startsWith("08") || SESSION_ENDED.contains(s.getSQLState()))) {
                return true;
            }
        }
        try {
            return c.isClosed();
        } catch (SQLException closedCheckFailed) {
            return true;
        }
    }

    /** True when PostgreSQL already aborted the connection's transaction (pgjdbc only; false otherwise). */
    public static boolean transactionAborted(Connection c) throws SQLException {
        if (c.isWrapperFor(BaseConnection.class)) {
            return c.unwrap(BaseConnection.class).getTransactionState() == TransactionState.FAILED;
        }
        return false;
    }

    /**
     * Rethrows what the caller's work threw: SQLExceptions are returned for the caller to throw,
     * unchecked exceptions and errors are thrown as they are, other checked exceptions are wrapped
     * in {@link WorkFailedException}.
     */
    public static SQLException rethrow(Throwable t, String context) {
        if (t instanceof SQLException s) {
            return s;
        }
        if (t instanceof RuntimeException r) {
            throw r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        if (t instanceof InterruptedException) {
            Thread.currentThread().interrupt();
        }
        throw new WorkFailedException(context + " (rolled back): " + t, t);
    }
}
