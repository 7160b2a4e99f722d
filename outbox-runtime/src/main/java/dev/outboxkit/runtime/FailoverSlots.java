package dev.outboxkit.runtime;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * Not API: shared by the CDC relay (metrics, health) and {@code outbox status}.
 *
 * <p>Whether a standby promoted now would have a logical slot, as far as the primary can tell. PostgreSQL 17 and later
 * copy a <em>failover</em> slot to standbys that run {@code sync_replication_slots = on}; the primary's
 * {@code synchronized_standby_slots} names the standbys' physical slots, and a logical walsender then never sends (so a
 * relay never confirms) WAL those standbys have not received. What the primary sees: the slot is a failover slot, that
 * setting is not empty, and each physical slot named there is streamed now. Whether a standby runs
 * {@code sync_replication_slots} only the standby knows ({@code pg_replication_slots.synced} there). Before 17 no
 * logical slot survives a promotion.
 */
public final class FailoverSlots {

    /**
     * What the primary sees of one slot: {@code code} is the {@code outbox.relay.cdc.slot_failover_ready} value
     * ({@link #READY}, {@link #NOT_READY}, {@link #NOT_SUPPORTED}), {@code detail} says why in one line.
     */
    public record State(int code, String detail) {
    }

    public static final int READY = 1;
    public static final int NOT_READY = 0;
    public static final int NOT_SUPPORTED = -1;

    private FailoverSlots() {
    }

    /**
     * {@code primarySide} ({@link #of}) corrected by what the standbys hold: a standby reached whose copy of the slot is
     * missing or not synced yet (a standby that joined a moment ago gets it once the slot's restart position passes the
     * WAL it started from) makes it not ready. {@code copies} maps each standby ({@code host:port}) to whether it holds a
     * synced copy (true), holds none (false), or could not be asked (null: not counted).
     */
    public static State withStandbys(State primarySide, java.util.Map<String, Boolean> copies) {
        if (primarySide.code() != READY) {
            return primarySide;
        }
        List<String> lacking = new ArrayList<>();
        copies.forEach((standby, synced) -> {
            if (Boolean.FALSE.equals(synced)) {
                lacking.add(standby);
            }
        });
        if (!lacking.isEmpty()) {
            return new State(NOT_READY, "a failover slot, but standby " + String.join(", ", lacking) + " has no synced copy"
                    + " yet (a standby that joined a moment ago gets it once the slot moves past the WAL it started from; "
                    + "else check sync_replication_slots there): a promotion of it now would lose the slot");
        }
        long asked = copies.values().stream().filter(java.util.Objects::nonNull).count();
        return asked == 0 ? primarySide
                : new State(READY, primarySide.detail() + "; synced on " + String.join(", ", copies.keySet()));
    }

    /**
     * Whether the standby {@code c} is connected to holds a synced, persistent copy of {@code slotName} (PostgreSQL 17+).
     * A copy still temporary (the standby lacks the WAL from the slot's restart position on) would not survive a
     * promotion.
     */
    public static boolean syncedOnStandby(Connection c, String slotName) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT coalesce((to_jsonb(s) ->> 'synced')::boolean, false) "
                + "AND NOT temporary FROM pg_replication_slots s WHERE slot_name = ? AND pg_is_in_recovery()")) {
            ps.setString(1, slotName);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() && rs.getBoolean(1);
            }
        }
    }

    /** The state of slot {@code slotName} on the server {@code c} is connected to (the primary). */
    public static State of(Connection c, String slotName) throws SQLException {
        int version;
        try (PreparedStatement ps = c.prepareStatement("SELECT current_setting('server_version_num')::int");
             ResultSet rs = ps.executeQuery()) {
            rs.next();
            version = rs.getInt(1);
        }
        if (version < 170000) {
            return new State(NOT_SUPPORTED, "PostgreSQL " + version / 10000 + " keeps no logical slot on a standby: a "
                    + "promoted standby has none");
        }
        Boolean failover = null;
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT (to_jsonb(s) ->> 'failover')::boolean FROM pg_replication_slots s WHERE slot_name = ?")) {
            ps.setString(1, slotName);
            try (ResultSet rs = ps.executeQuery()) {
                if (rs.next()) {
                    failover = rs.getBoolean(1);
                }
            }
        }
        if (failover == null) {
            return new State(NOT_READY, "no slot " + slotName);
        }
        if (!failover) {
            return new State(NOT_READY, "not a failover slot: a promoted standby will not have it");
        }
        String standbySlots;
        try (PreparedStatement ps = c.prepareStatement("SELECT current_setting('synchronized_standby_slots', true)");
             ResultSet rs = ps.executeQuery()) {
            rs.next();
            standbySlots = rs.getString(1) == null ? "" : rs.getString(1).trim();
        }
        if (standbySlots.isEmpty()) {
            return new State(NOT_READY, "a failover slot, but synchronized_standby_slots is empty on the primary: a standby "
                    + "may lack WAL that was confirmed; name the standbys' physical slots there");
        }
        List<String> idle = new ArrayList<>();
        for (String name : standbySlots.split(",")) {
            String standby = name.trim().replace("\"", "");
            try (PreparedStatement ps = c.prepareStatement(
                    "SELECT active FROM pg_replication_slots WHERE slot_name = ? AND slot_type = 'physical'")) {
                ps.setString(1, standby);
                try (ResultSet rs = ps.executeQuery()) {
                    if (!rs.next() || !rs.getBoolean(1)) {
                        idle.add(standby);
                    }
                }
            }
        }
        return idle.isEmpty()
                ? new State(READY, "a failover slot, kept on the standbys of " + standbySlots)
                : new State(NOT_READY, "a failover slot, but standby slot(s) " + String.join(", ", idle)
                + " named in synchronized_standby_slots are not streamed now: a promotion now may lose the slot");
    }
}
