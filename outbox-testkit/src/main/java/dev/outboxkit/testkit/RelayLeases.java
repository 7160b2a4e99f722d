package dev.outboxkit.testkit;

import dev.outboxkit.core.OutboxTables;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The relays' leases as a test reads them from the lease table ({@link OutboxTables#RELAY_LEASE}): who holds a unit of
 * work, with which fencing token, since and until when. A failover test asks, for example, whether a standby took the
 * CDC relay's lease only once it had expired, or how many of the polling relay's partitions each instance holds.
 *
 * <pre>{@code
 * Timestamp expiresAt = RelayLeases.held(db, RelayLeases.cdcRelayKey(slot)).expiresAt();
 * // ... cut the holder off, wait for the standby ...
 * assertThat(RelayLeases.held(db, RelayLeases.cdcRelayKey(slot)).acquiredAt()).isAfterOrEqualTo(expiresAt);
 * assertThat(RelayLeases.partitionsByHolder(db)).containsEntry("b", 64);   // all 64 polling partitions
 * }</pre>
 *
 * <p>Times are the database's ({@code live} compares {@code expires_at} with the server's {@code now()}), so they can
 * be compared with each other and with other timestamps the server wrote, not with the test JVM's clock.
 */
public final class RelayLeases {

    private static final String COLUMNS = "lease_key, holder, fence, acquired_at, expires_at, expires_at > now()";

    /**
     * One lease row: {@code key} (the unit of work), {@code holder} (the relay's instance id), {@code fence} (its
     * fencing token), when it was {@code acquiredAt} and {@code expiresAt}, and whether it was {@code live} (not yet
     * expired by the database's clock) when read.
     */
    public record Lease(String key, String holder, long fence, Timestamp acquiredAt, Timestamp expiresAt, boolean live) {
    }

    private RelayLeases() {
    }

    /** The key of the CDC relay's lease on replication slot {@code slot}: {@code cdc/<slot>}. */
    public static String cdcRelayKey(String slot) {
        return "cdc/" + slot;
    }

    /**
     * The old name of {@link #cdcRelayKey(String)}, which it calls.
     *
     * @deprecated use {@link #cdcRelayKey(String)}; removed in 0.2.0
     */
    @Deprecated(since = "0.1.0", forRemoval = true)
    public static String walRelayKey(String slot) {
        return cdcRelayKey(slot);
    }

    /** The lease {@code key} as it is now, live or expired; empty when no instance holds or held it. */
    public static Optional<Lease> find(TestDatabase db, String key) throws SQLException {
        try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement(
                "SELECT " + COLUMNS + " FROM " + OutboxTables.RELAY_LEASE + " WHERE lease_key = ?")) {
            ps.setString(1, key);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? Optional.of(lease(rs)) : Optional.empty();
            }
        }
    }

    /**
     * The lease {@code key}, which must exist (live or expired).
     *
     * @throws AssertionError when there is no such lease row
     */
    public static Lease held(TestDatabase db, String key) throws SQLException {
        return find(db, key).orElseThrow(() -> new AssertionError("lease " + key + " held: no row in "
                + OutboxTables.RELAY_LEASE + " of " + db.name()));
    }

    /**
     * How many of the polling relay's partitions (leases {@code poll/<partition>}) each instance holds now, by live
     * lease; instances holding none are absent.
     */
    public static Map<String, Integer> partitionsByHolder(TestDatabase db) throws SQLException {
        Map<String, Integer> out = new HashMap<>();
        try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement("SELECT holder, count(*) FROM "
                + OutboxTables.RELAY_LEASE + " WHERE starts_with(lease_key, 'poll/') AND expires_at > now() GROUP BY holder")) {
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.put(rs.getString(1), rs.getInt(2));
                }
            }
        }
        return out;
    }

    private static Lease lease(ResultSet rs) throws SQLException {
        return new Lease(rs.getString(1), rs.getString(2), rs.getLong(3), rs.getTimestamp(4), rs.getTimestamp(5),
                rs.getBoolean(6));
    }
}
