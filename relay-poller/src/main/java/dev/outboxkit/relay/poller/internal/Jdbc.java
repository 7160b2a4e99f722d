package dev.outboxkit.relay.poller.internal;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;

/** Small JDBC helpers the lease manager, the claim and the settlement share. */
final class Jdbc {

    /** Lease, membership and probe transactions last milliseconds; one idle this long belongs to a frozen process. */
    static final long IDLE_TRANSACTION_MILLIS = 2000;

    private Jdbc() {
    }

    /** The statement timeout {@link #setTimeouts} sets for a lock timeout: room for the statement after the lock. */
    static long statementTimeout(long lockTimeoutMillis) {
        return lockTimeoutMillis + 10_000;
    }

    /**
     * Timeouts of the current transaction. The idle one matters most: should this instance freeze
     * inside a lease transaction, the server ends it, so it cannot block the others' takeovers.
     */
    static void setTimeouts(Connection c, long lockTimeoutMillis) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT set_config('lock_timeout', ?, true), "
                + "set_config('statement_timeout', ?, true), set_config('idle_in_transaction_session_timeout', ?, true)")) {
            ps.setString(1, Long.toString(lockTimeoutMillis));
            ps.setString(2, Long.toString(statementTimeout(lockTimeoutMillis)));
            ps.setString(3, Long.toString(IDLE_TRANSACTION_MILLIS));
            ps.executeQuery().close();
        }
    }

    static Array ints(Connection c, int[] values) throws SQLException {
        Integer[] boxed = new Integer[values.length];
        for (int i = 0; i < values.length; i++) {
            boxed[i] = values[i];
        }
        return c.createArrayOf("int4", boxed);
    }

    static Array longs(Connection c, long[] values) throws SQLException {
        Long[] boxed = new Long[values.length];
        for (int i = 0; i < values.length; i++) {
            boxed[i] = values[i];
        }
        return c.createArrayOf("int8", boxed);
    }

    static void rollbackQuietly(Connection c) {
        try {
            c.rollback();
        } catch (SQLException ignored) {
            // the connection is broken; the server rolled back already
        }
    }

    static void closeQuietly(Connection c) {
        try {
            c.close();
        } catch (SQLException ignored) {
            // broken connection: the pool discards it
        }
    }
}
