package dev.outboxkit.relay.cdc.internal;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * The lease {@code cdc/<slot>} in {@code outbox_relay_lease}: only its holder streams the slot.
 * Taking it draws a new fencing token from {@code outbox_fence_seq}; every offset write, delete and
 * dead-letter insert of the holder checks that the token is still the lease's (see {@link #checkFence}).
 * Expiry is judged by the database clock, so instances need no synchronised clocks.
 */
final class LeaseKeeper {

    /** Who holds the lease now (for health and logs). */
    record Holder(String holder, long fence, boolean live) {
    }

    private final DataSource dataSource;
    private final String leaseKey;
    private final String instanceId;
    private final Duration duration;
    private final String acquireSql;
    private final String renewSql;
    private final String releaseSql;
    private final String holderSql;
    private final String fenceSql;

    LeaseKeeper(DataSource dataSource, CdcSettings settings) {
        this.dataSource = dataSource;
        this.leaseKey = settings.leaseKey();
        this.instanceId = settings.instanceId();
        this.duration = settings.leaseDuration();
        String lease = settings.table("outbox_relay_lease");
        String sequence = settings.table("outbox_fence_seq");
        acquireSql = "WITH previous AS (SELECT holder FROM " + lease + " WHERE lease_key = ?) "
                + "INSERT INTO " + lease + " AS l (lease_key, holder, fence, acquired_at, renewed_at, expires_at) "
                + "VALUES (?, ?, nextval('" + sequence + "'), now(), now(), now() + make_interval(secs => ?)) "
                + "ON CONFLICT (lease_key) DO UPDATE SET holder = EXCLUDED.holder, fence = EXCLUDED.fence, "
                + "acquired_at = now(), renewed_at = now(), expires_at = EXCLUDED.expires_at "
                + "WHERE l.expires_at < now() OR l.holder = EXCLUDED.holder RETURNING fence, (SELECT holder FROM previous)";
        renewSql = "UPDATE " + lease + " SET renewed_at = now(), expires_at = now() + make_interval(secs => ?) "
                + "WHERE lease_key = ? AND holder = ? AND fence = ?";
        releaseSql = "UPDATE " + lease + " SET expires_at = now() - interval '1 millisecond' "
                + "WHERE lease_key = ? AND holder = ? AND fence = ?";
        holderSql = "SELECT holder, fence, expires_at > now() FROM " + lease + " WHERE lease_key = ?";
        fenceSql = "SELECT fence FROM " + lease + " WHERE lease_key = ?";
    }

    String leaseKey() {
        return leaseKey;
    }

    /**
     * A new fencing token when the lease was free, expired, or held under this instance's own id (a process
     * restarted after a crash takes its lease back at once; should the old one still run, the new token
     * fences it out). Empty while another holder's lease is live.
     */
    Optional<Acquired> tryAcquire() throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(acquireSql)) {
            c.setAutoCommit(true);
            ps.setString(1, leaseKey);
            ps.setString(2, leaseKey);
            ps.setString(3, instanceId);
            ps.setDouble(4, duration.toMillis() / 1000.0);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? Optional.of(new Acquired(rs.getLong(1), rs.getString(2))) : Optional.empty();
            }
        }
    }

    /** A taken lease: the new fencing token, and who held the lease before (null when nobody did). */
    record Acquired(long fence, String previousHolder) {
    }

    /** Extends the lease; false when it is no longer ours (another instance took it). */
    boolean renew(long fence) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(renewSql)) {
            c.setAutoCommit(true);
            ps.setDouble(1, duration.toMillis() / 1000.0);
            ps.setString(2, leaseKey);
            ps.setString(3, instanceId);
            ps.setLong(4, fence);
            return ps.executeUpdate() == 1;
        }
    }

    /** Lets a standby take over at once (graceful stop). */
    void release(long fence) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(releaseSql)) {
            c.setAutoCommit(true);
            ps.setString(1, leaseKey);
            ps.setString(2, instanceId);
            ps.setLong(3, fence);
            ps.executeUpdate();
        }
    }

    Holder holder() throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(holderSql)) {
            c.setAutoCommit(true);
            ps.setString(1, leaseKey);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? new Holder(rs.getString(1), rs.getLong(2), rs.getBoolean(3)) : null;
            }
        }
    }

    /** Work done in a fenced transaction. */
    interface SqlWork {
        void run(Connection c) throws SQLException;
    }

    /**
     * Runs {@code work} in one transaction on {@code c} that first checks {@code fence} ({@link #checkFence});
     * commits, or rolls back and rethrows. The connection's auto-commit setting is restored.
     */
    void inFencedTransaction(Connection c, long fence, SqlWork work) throws SQLException {
        boolean autoCommit = c.getAutoCommit();
        c.setAutoCommit(false);
        try {
            checkFence(c, fence);
            work.run(c);
            c.commit();
        } catch (SQLException | RuntimeException e) {
            c.rollback();
            throw e;
        } finally {
            c.setAutoCommit(autoCommit);
        }
    }

    /**
     * Inside the caller's transaction: throws {@link FencedWriteException} unless {@code fence} is still the
     * lease's token. It takes no lock on purpose: a holder frozen in the middle of a transaction must not
     * block the takeover (the new holder ends the old holder's sessions right after taking the lease, see
     * {@link SlotGuard#terminateSessionsOf}). A write that checked just before the takeover and commits
     * just after it is harmless: it records only what Kafka had acknowledged, and offsets never go to a
     * smaller token once the new holder wrote.
     */
    void checkFence(Connection c, long fence) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(fenceSql)) {
            ps.setString(1, leaseKey);
            try (ResultSet rs = ps.executeQuery()) {
                long current = rs.next() ? rs.getLong(1) : -1;
                if (current != fence) {
                    throw new FencedWriteException("lease " + leaseKey + " now has fencing token " + current
                            + ", this instance (" + instanceId + ") holds " + fence + ": another instance took over");
                }
            }
        }
    }
}
