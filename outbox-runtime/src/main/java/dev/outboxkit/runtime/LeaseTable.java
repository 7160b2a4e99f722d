package dev.outboxkit.runtime;

import dev.outboxkit.core.OutboxTables;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Not API: every statement on {@code outbox_relay_lease} and {@code outbox_fence_seq}, for both relays (the poller's
 * {@code poll/<partition>} leases and the CDC relay's {@code cdc/<slot>} lease). Each method runs in the caller's
 * transaction on the caller's connection; expiry is judged by the database clock, so instances need no synchronised
 * clocks. Table names are validated and quoted; every value is a bind parameter.
 *
 * <p>The protocol in one paragraph: taking a lease locks what it can ({@code FOR UPDATE SKIP LOCKED}: a row another
 * transaction holds, such as a poller claim that locks its leases {@code FOR KEY SHARE}, is left alone), deletes the
 * expired rows among them and inserts the free keys with a new fencing token from the sequence. Renewal and release
 * name the token, so only the instance holding that token can extend or give back a lease. Two fence checks serve two
 * purposes: {@link #countHeld} (holder, token, not expired) before work starts, and {@link #currentFence} (the token
 * alone, no lock) before recording work that Kafka already acknowledged.
 *
 * <p>Giving leases back also sends {@link #RELEASED_CHANNEL} (payload: the schema) at commit, so that other instances
 * ({@link Liveness#awaitRelease}) take them within milliseconds instead of at their next look.
 */
public final class LeaseTable {

    /** A lease taken: its key, its new fencing token, who held the key before (null: nobody) and why it was free. */
    public record Taken(String key, long fence, String previousHolder, From from) {
    }

    /** Why a lease could be taken: nobody held it, or it was taken over from a holder for one of three reasons. */
    public enum From {
        FREE(null),
        /** The holder's process is gone (its liveness lock vanished with its connection): taken before expiry. */
        HOLDER_GONE("holder_gone"),
        /** The holder did not renew in time (frozen, cut off, or gone without the server noticing). */
        EXPIRED("expired"),
        /** Held under this instance's own id by an earlier process (restarted under the same name). */
        SAME_INSTANCE("same_instance");

        private final String tag;

        From(String tag) {
            this.tag = tag;
        }

        /** The {@code reason} tag of {@code outbox.relay.takeovers}; null for {@link #FREE}. */
        public String tag() {
            return tag;
        }
    }

    /** Who holds a key now. */
    public record Holder(String holder, long fence, boolean live) {
    }

    /** The NOTIFY channel on which lease releases are announced, with the schema as the payload. */
    public static final String RELEASED_CHANNEL = "outboxkit_lease_released";

    private final String schema;
    private final String lockSql;
    private final String deleteSql;
    private final String insertSql;
    private final String renewSql;
    private final String releaseSql;
    private final String releaseAllSql;
    private final String countHeldSql;
    private final String fenceSql;
    private final String holderSql;
    private final String liveKeysSql;

    public LeaseTable(String schema) {
        this.schema = schema;
        OutboxTables tables = OutboxTables.in(schema);
        String lease = tables.relayLease();
        String sequence = tables.fenceSequence();
        String expiresIn = "statement_timestamp() + ? * interval '1 millisecond'";
        String matching = " FROM unnest(?::text[], ?::bigint[]) AS m(k, fence) WHERE l.lease_key = m.k AND l.fence = m.fence"
                + " AND l.holder = ?";
        lockSql = "SELECT lease_key, holder, expires_at <= statement_timestamp() FROM " + lease
                + " WHERE lease_key = ANY (?::text[]) FOR UPDATE SKIP LOCKED";
        deleteSql = "DELETE FROM " + lease + " WHERE lease_key = ANY (?::text[])";
        insertSql = "INSERT INTO " + lease + " (lease_key, holder, fence, acquired_at, renewed_at, expires_at)"
                + " SELECT k, ?, nextval('" + sequence + "'), statement_timestamp(), statement_timestamp(), " + expiresIn
                + " FROM unnest(?::text[]) AS k ON CONFLICT (lease_key) DO NOTHING RETURNING lease_key, fence";
        renewSql = "UPDATE " + lease + " l SET renewed_at = statement_timestamp(), expires_at = " + expiresIn + matching
                + " AND l.expires_at > statement_timestamp() RETURNING l.lease_key";
        releaseSql = "DELETE FROM " + lease + " l USING unnest(?::text[], ?::bigint[]) AS m(k, fence)"
                + " WHERE l.lease_key = m.k AND l.fence = m.fence AND l.holder = ?";
        releaseAllSql = "DELETE FROM " + lease + " WHERE holder = ? AND starts_with(lease_key, ?)";
        countHeldSql = "SELECT count(*) FROM " + lease + " l JOIN unnest(?::text[], ?::bigint[]) AS m(k, fence)"
                + " ON l.lease_key = m.k AND l.fence = m.fence WHERE l.holder = ? AND l.expires_at > statement_timestamp()";
        fenceSql = "SELECT fence FROM " + lease + " WHERE lease_key = ?";
        holderSql = "SELECT holder, fence, expires_at > statement_timestamp() FROM " + lease + " WHERE lease_key = ?";
        liveKeysSql = "SELECT lease_key, holder FROM " + lease + " WHERE starts_with(lease_key, ?) AND expires_at > statement_timestamp()";
    }

    /**
     * Takes those of {@code keys} that are free or expired — and, with {@code reclaimOwn}, those {@code holder}
     * itself holds (a process restarted under the same name takes its lease back at once; the new token fences out
     * the old process should it still run). Keys locked by another transaction are skipped.
     *
     * @return the leases taken, in no particular order
     */
    public List<Taken> take(Connection c, Collection<String> keys, String holder, Duration duration, boolean reclaimOwn)
            throws SQLException {
        return take(c, keys, holder, duration, reclaimOwn, Set.of());
    }

    /**
     * {@link #take(Connection, Collection, String, Duration, boolean)}, and also the unexpired leases of the
     * {@code goneHolders} ({@link Liveness#gone}: their process is gone). The dead holder's transactions were rolled
     * back by the server when its connection closed, so no claim of it still holds a lease row locked; the new token
     * fences it out should it be alive after all.
     */
    public List<Taken> take(Connection c, Collection<String> keys, String holder, Duration duration, boolean reclaimOwn,
                            Set<String> goneHolders) throws SQLException {
        if (keys.isEmpty()) {
            return List.of();
        }
        Map<String, String> deletable = new HashMap<>();
        Map<String, From> from = new HashMap<>();
        Set<String> present = new HashSet<>();
        try (PreparedStatement ps = c.prepareStatement(lockSql)) {
            ps.setArray(1, c.createArrayOf("text", keys.toArray()));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    String key = rs.getString(1);
                    String current = rs.getString(2);
                    From why = rs.getBoolean(3) ? From.EXPIRED
                            : reclaimOwn && holder.equals(current) ? From.SAME_INSTANCE
                            : goneHolders.contains(current) ? From.HOLDER_GONE : null;
                    if (why != null) {
                        deletable.put(key, current);
                        from.put(key, why);
                    }
                    present.add(key);
                }
            }
        }
        if (!deletable.isEmpty()) {
            try (PreparedStatement ps = c.prepareStatement(deleteSql)) {
                ps.setArray(1, c.createArrayOf("text", deletable.keySet().toArray()));
                ps.executeUpdate();
            }
        }
        // Keys not locked above are either free or locked by someone else: the insert takes the free ones only.
        List<String> insertable = new ArrayList<>(deletable.keySet());
        for (String key : keys) {
            if (!present.contains(key)) {
                insertable.add(key);
            }
        }
        if (insertable.isEmpty()) {
            return List.of();
        }
        List<Taken> taken = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(insertSql)) {
            ps.setString(1, holder);
            ps.setLong(2, duration.toMillis());
            ps.setArray(3, c.createArrayOf("text", insertable.toArray()));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    String key = rs.getString(1);
                    taken.add(new Taken(key, rs.getLong(2), deletable.get(key), from.getOrDefault(key, From.FREE)));
                }
            }
        }
        return taken;
    }

    /** Extends the given leases (key to token) that {@code holder} still holds and that have not expired; returns those. */
    public Set<String> renew(Connection c, Map<String, Long> leases, String holder, Duration duration) throws SQLException {
        Set<String> renewed = new HashSet<>();
        if (leases.isEmpty()) {
            return renewed;
        }
        try (PreparedStatement ps = c.prepareStatement(renewSql)) {
            ps.setLong(1, duration.toMillis());
            bindLeases(c, ps, 2, leases, holder);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    renewed.add(rs.getString(1));
                }
            }
        }
        return renewed;
    }

    /** Gives back the given leases (key to token) of {@code holder}, so others can take them at once. */
    public int release(Connection c, Map<String, Long> leases, String holder) throws SQLException {
        if (leases.isEmpty()) {
            return 0;
        }
        try (PreparedStatement ps = c.prepareStatement(releaseSql)) {
            bindLeases(c, ps, 1, leases, holder);
            return announced(c, ps.executeUpdate());
        }
    }

    /** Gives back every lease of {@code holder} whose key starts with {@code keyPrefix} (graceful stop). */
    public int releaseAll(Connection c, String holder, String keyPrefix) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(releaseAllSql)) {
            ps.setString(1, holder);
            ps.setString(2, keyPrefix);
            return announced(c, ps.executeUpdate());
        }
    }

    /** Tells the other instances (at commit: NOTIFY is transactional) that {@code released} leases are free now. */
    private int announced(Connection c, int released) throws SQLException {
        if (released > 0) {
            try (PreparedStatement ps = c.prepareStatement("SELECT pg_notify('" + RELEASED_CHANNEL + "', ?)")) {
                ps.setString(1, schema);
                ps.execute();
            }
        }
        return released;
    }

    /** How many of the given leases {@code holder} still holds under those tokens, unexpired. */
    public int countHeld(Connection c, Map<String, Long> leases, String holder) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(countHeldSql)) {
            bindLeases(c, ps, 1, leases, holder);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }

    /** The key's current fencing token, -1 when nobody holds it. Takes no lock. */
    public long currentFence(Connection c, String key) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(fenceSql)) {
            ps.setString(1, key);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getLong(1) : -1;
            }
        }
    }

    /** Who holds {@code key}, or null when nobody does. */
    public Holder holder(Connection c, String key) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(holderSql)) {
            ps.setString(1, key);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? new Holder(rs.getString(1), rs.getLong(2), rs.getBoolean(3)) : null;
            }
        }
    }

    /** The unexpired keys that start with {@code keyPrefix} and who holds each. */
    public Map<String, String> liveKeys(Connection c, String keyPrefix) throws SQLException {
        Map<String, String> keys = new HashMap<>();
        try (PreparedStatement ps = c.prepareStatement(liveKeysSql)) {
            ps.setString(1, keyPrefix);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    keys.put(rs.getString(1), rs.getString(2));
                }
            }
        }
        return keys;
    }

    private static void bindLeases(Connection c, PreparedStatement ps, int first, Map<String, Long> leases, String holder)
            throws SQLException {
        Map<String, Long> ordered = new LinkedHashMap<>(leases);
        ps.setArray(first, c.createArrayOf("text", ordered.keySet().toArray()));
        ps.setArray(first + 1, c.createArrayOf("int8", ordered.values().toArray()));
        ps.setString(first + 2, holder);
    }
}
