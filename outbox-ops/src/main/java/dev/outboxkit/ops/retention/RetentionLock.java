package dev.outboxkit.ops.retention;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The schema's retention lock: one purge at a time per schema, whether a sidecar's
 * {@link RetentionSchedule} or {@code outbox purge} runs it. A session-level advisory lock on a key
 * derived from the schema name (the same on every instance), held on one connection for the round;
 * if that connection dies the server releases it. It saves work and noise: every purge step is
 * idempotent and chunked, so safety never depends on it.
 */
final class RetentionLock implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(RetentionLock.class);
    private static final String TRY_LOCK = "SELECT pg_try_advisory_lock(hashtext('outboxkit.retention'), hashtext(?))";
    private static final String UNLOCK = "SELECT pg_advisory_unlock(hashtext('outboxkit.retention'), hashtext(?))";
    private static final long POLL_MILLIS = 200;

    private final Connection connection;
    private final String schema;

    private RetentionLock(Connection connection, String schema) {
        this.connection = connection;
        this.schema = schema;
    }

    /** The lock on {@code connection} if no other session holds it now, else null. */
    static RetentionLock tryAcquire(Connection connection, String schema) throws SQLException {
        return call(connection, TRY_LOCK, schema) ? new RetentionLock(connection, schema) : null;
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

    @Override
    public void close() {
        try {
            call(connection, UNLOCK, schema);
        } catch (SQLException e) {
            log.debug("retention on schema {}: unlock failed (the session ends with the connection)", schema, e);
        }
    }

    private static boolean call(Connection c, String sql, String schema) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, schema);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getBoolean(1);
            }
        }
    }
}
