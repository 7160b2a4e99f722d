package dev.outboxkit.ops.retention;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The schema's retention lock: one purge at a time per schema, whether a sidecar's
 * {@link RetentionSchedule} or {@code outbox purge} runs it. A transaction-level advisory lock on a key
 * derived from the schema name (the same on every instance), taken in a transaction that stays open on
 * the lock's own connection for the round and rolled back to release it; if that connection dies the
 * server releases it. Transaction-level, not session-level, so that it also holds through a pooler in
 * transaction pooling mode (PgBouncer): the open transaction keeps the server session with this
 * connection, where a session-level lock would stay on a server session the pooler hands to other
 * clients. The transaction runs at READ COMMITTED and only takes the lock, so it holds no snapshot
 * (it does not hold back vacuum) and no table lock while it waits. It saves work and noise: every
 * purge step is idempotent and chunked, so safety never depends on it (a server that ends idle
 * transactions, {@code idle_in_transaction_session_timeout}, ends the lock early and at worst lets
 * two rounds overlap).
 */
final class RetentionLock implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(RetentionLock.class);
    private static final String TRY_LOCK = "SELECT pg_try_advisory_xact_lock(hashtext('outboxkit.retention'), hashtext(?))";
    private static final long POLL_MILLIS = 200;

    private final Connection connection;
    private final String schema;
    private final boolean autoCommit;

    private RetentionLock(Connection connection, String schema, boolean autoCommit) {
        this.connection = connection;
        this.schema = schema;
        this.autoCommit = autoCommit;
    }

    /**
     * The lock on {@code connection} if no other session holds it now, else null. While it is held the connection is
     * in the lock's transaction: use it for nothing else until {@link #close()}.
     */
    static RetentionLock tryAcquire(Connection connection, String schema) throws SQLException {
        boolean autoCommit = connection.getAutoCommit();
        connection.setAutoCommit(false);
        boolean held = false;
        try {
            try (Statement s = connection.createStatement()) {
                // the first statement of the transaction: no snapshot kept between statements, whatever the default
                s.execute("SET TRANSACTION ISOLATION LEVEL READ COMMITTED");
            }
            try (PreparedStatement ps = connection.prepareStatement(TRY_LOCK)) {
                ps.setString(1, schema);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    held = rs.getBoolean(1);
                }
            }
            return held ? new RetentionLock(connection, schema, autoCommit) : null;
        } finally {
            if (!held) {
                end(connection, autoCommit);
            }
        }
    }

    /** The lock, waiting up to {@code wait} for another session to release it; null when it did not. */
    static RetentionLock acquire(Connection connection, String schema, Duration wait) throws SQLException, InterruptedException {
        long deadline = System.nanoTime() + wait.toNanos();
        while (true) {
            RetentionLock lock = tryAcquire(connection, schema);
            if (lock != null || System.nanoTime() >= deadline) {
                return lock;
            }
            Thread.sleep(POLL_MILLIS); // polled, not pg_advisory_lock: a blocked call would outlive the wait
        }
    }

    /** Releases the lock: rolls its transaction back (nothing else ran in it) and restores the connection's autocommit. */
    @Override
    public void close() {
        try {
            end(connection, autoCommit);
        } catch (SQLException e) {
            log.debug("retention on schema {}: releasing the lock failed (it ends with the connection)", schema, e);
        }
    }

    private static void end(Connection c, boolean autoCommit) throws SQLException {
        try {
            c.rollback();
        } finally {
            c.setAutoCommit(autoCommit);
        }
    }
}
