package dev.outboxkit.relay.cdc.internal;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.OptionalLong;
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
        acquireSql = "INSERT INTO " + lease + " AS l (lease_key, holder, fence, acquired_at, renewed_at, expires_at) "
                + "VALUES (?, ?, nextval('" + sequence + "'), now(), now(), now() + make_interval(secs => ?)) "
                + "ON CONFLICT (lease_key) DO UPDATE SET holder = EXCLUDED.holder, fence = EXCLUDED.fence, "
                + "acquired_at = now(), renewed_at = now(), expires_at = EXCLUDED.expires_at "
                + "WHERE l.expires_at < now() RETURNING fence";
        renewSql = "UPDATE " + lease + " SET renewed_at = now(), expires_at = now() + make_interval(secs => ?) "
                + "WHERE lease_key = ? AND holder = ? AND fence = ?";
        releaseSql = "UPDATE " + lease + " SET expires_at = now() - interval '1 millisecond' "
                + "WHERE lease_key = ? AND holder = ? AND fence = ?";
        holderSql = "SELECT holder, fence, expires_at > now() FROM " + lease + " WHERE lease_key = ?";
        fenceSql = "SELECT fence FROM " + lease + " WHERE lease_key = ? FOR SHARE";
    }

    String leaseKey() {
        return leaseKey;
    }

    /** A new fencing token when the lease was free or expired; empty while another holder's lease is live. */
    OptionalLong tryAcquire() throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(acquireSql)) {
            c.setAutoCommit(true);
            ps.setString(1, leaseKey);
            ps.setString(2, instanceId);
            ps.setDouble(3, duration.toMillis() / 1000.0);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? OptionalLong.of(rs.getLong(1)) : OptionalLong.empty();
            }
        }
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

    /**
     * Inside the caller's transaction: locks the lease row (shared) and throws {@link FencedWriteException}
     * unless {@code fence} is still the lease's token. A takeover waits for the caller's commit, so the
     * write that follows cannot land after another instance took the lease.
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
