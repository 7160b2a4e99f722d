package dev.outboxkit.relay.cdc.internal;

import dev.outboxkit.core.Identifiers;
import dev.outboxkit.core.OutboxTables;
import dev.outboxkit.core.spi.RoleGrants;
import dev.outboxkit.relay.cdc.CdcStartupException;
import dev.outboxkit.runtime.DatabaseLogin;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The publication and the replication slot: created when missing, inspected before every start
 * and for the metrics. Everything that could make the relay skip events fails here, loudly.
 */
final class SlotGuard {

    private static final Logger log = LoggerFactory.getLogger(SlotGuard.class);

    /**
     * One row of {@code pg_replication_slots}, with the lag computed by the server.
     *
     * @param failover whether it is a failover slot (PostgreSQL 17+; false before)
     */
    record SlotState(String plugin, String slotType, String database, boolean temporary, boolean active, Integer activePid,
                     String walStatus, long confirmedFlush, long restartLsn, long retainedBytes, long lagBytes,
                     String invalidationReason, boolean failover) {

        boolean invalidated() {
            return "lost".equals(walStatus) || invalidationReason != null;
        }
    }

    /** SQLSTATE insufficient_privilege: what pg_terminate_backend raises for a backend the role may not signal. */
    private static final String NOT_PERMITTED = "42501";
    /** How long pg_terminate_backend waits for the walsender to exit, so that Debezium finds the slot free. */
    private static final Duration TERMINATE_WAIT = Duration.ofSeconds(5);

    private final SlotTerms terms;
    private final String instanceId;
    /** The relay's name in messages ({@code SharedSettings#logPrefix}). */
    private final String logPrefix;
    /** The login of the replication connection that makes the slot a failover slot. */
    private final DatabaseLogin login;
    private final AtomicBoolean warnedNotPermitted = new AtomicBoolean();

    SlotGuard(SlotTerms terms, String instanceId, String logPrefix, DatabaseLogin login) {
        this.terms = terms;
        this.instanceId = instanceId;
        this.logPrefix = logPrefix;
        this.login = login;
    }

    /** Throws unless the schema has every table the relay uses (outboxkit's migrations up to V4). */
    void requireSchema(Connection c) throws SQLException {
        List<String> missing = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT to_regclass(?) IS NOT NULL")) {
            for (String table : List.of(OutboxTables.OUTBOX_EVENT, OutboxTables.DEAD_LETTER, OutboxTables.RELAY_LEASE,
                    OutboxTables.FENCE_SEQUENCE, OutboxTables.CDC_SLOT, OutboxTables.CDC_OFFSET, OutboxTables.CDC_HEARTBEAT)) {
                ps.setString(1, terms.table(table));
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    if (!rs.getBoolean(1)) {
                        missing.add(table);
                    }
                }
            }
        }
        if (missing.isEmpty()) {
            try (PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM pg_attribute WHERE attrelid = to_regclass(?) "
                    + "AND attname = 'wal_only_seen_at' AND NOT attisdropped")) {
                ps.setString(1, terms.table(OutboxTables.CDC_SLOT));
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    if (rs.getInt(1) == 0) {
                        missing.add(OutboxTables.CDC_SLOT + "'s columns of schema version 11");
                    }
                }
            }
        }
        if (!missing.isEmpty()) {
            throw new CdcStartupException("schema " + terms.schema() + " lacks " + String.join(", ", missing)
                    + ": apply outboxkit's migrations first (outbox migrate, or Migrations.migrate(dataSource, \""
                    + terms.schema() + "\"))");
        }
    }

    /**
     * Throws {@link dev.outboxkit.core.MissingGrantsException} with the statements to run unless the relay's role
     * holds what relay-debezium/README.md lists for it: the least-privilege grants, and REPLICATION.
     */
    void requireGrants(Connection c) throws SQLException {
        RoleGrants.cdcRelay(terms.schema(), terms.deleteAfterPublish()).require(c, "the " + logPrefix);
    }

    /**
     * Creates the publication {@code FOR TABLE outbox_event, outbox_cdc_heartbeat WITH (publish = 'insert')}
     * when it is missing; checks a pre-created one (an administrator's) covers both tables and inserts.
     */
    void ensurePublication(Connection c) throws SQLException {
        String pub = terms.publicationName();
        Boolean insert = null;
        boolean allTables = false;
        try (PreparedStatement ps = c.prepareStatement("SELECT pubinsert, puballtables FROM pg_publication WHERE pubname = ?")) {
            ps.setString(1, pub);
            try (ResultSet rs = ps.executeQuery()) {
                if (rs.next()) {
                    insert = rs.getBoolean(1);
                    allTables = rs.getBoolean(2);
                }
            }
        }
        if (insert == null) {
            String sql = "CREATE PUBLICATION " + Identifiers.quote("publicationName", pub) + " FOR TABLE "
                    + terms.outboxTable() + ", " + terms.table(OutboxTables.CDC_HEARTBEAT) + " WITH (publish = 'insert')";
            try (Statement s = c.createStatement()) {
                s.execute(sql);
            } catch (SQLException e) {
                throw new CdcStartupException("cannot create publication " + pub + " (" + e.getMessage().trim()
                        + "). Either grant the relay's role CREATE on the database and ownership of "
                        + terms.outboxTable() + ", or let an administrator run: " + sql, e);
            }
            log.info("created publication {} for {} and the heartbeat table (inserts only)", pub, terms.outboxTable());
            return;
        }
        if (!insert) {
            throw new CdcStartupException("publication " + pub + " does not publish inserts: run ALTER PUBLICATION "
                    + pub + " SET (publish = 'insert')");
        }
        if (allTables) {
            log.warn("publication {} is FOR ALL TABLES: every change of the database is decoded and sent to the relay, "
                    + "which ignores all but the outbox; a publication FOR TABLE {} is much cheaper", pub, terms.outboxTable());
            return;
        }
        Set<String> tables = new HashSet<>();
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT tablename FROM pg_publication_tables WHERE pubname = ? AND schemaname = ?")) {
            ps.setString(1, pub);
            ps.setString(2, terms.schema());
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    tables.add(rs.getString(1));
                }
            }
        }
        for (String table : new String[] {OutboxTables.OUTBOX_EVENT, OutboxTables.CDC_HEARTBEAT}) {
            if (!tables.contains(table)) {
                throw new CdcStartupException("publication " + pub + " exists but does not include "
                        + terms.table(table) + (table.equals(OutboxTables.OUTBOX_EVENT)
                        ? ": the relay would never see an event."
                        : ": without it heartbeats cannot move the slot while the outbox is idle, and WAL piles up.")
                        + " Run: ALTER PUBLICATION " + pub + " ADD TABLE " + terms.table(table));
            }
        }
    }

    /** The slot, or null when there is none. */
    SlotState slot(Connection c) throws SQLException {
        String sql = """
                SELECT plugin, slot_type, database, temporary, active, active_pid, wal_status,
                       confirmed_flush_lsn::text, restart_lsn::text,
                       coalesce(pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn), 0)::bigint,
                       coalesce(pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn), 0)::bigint,
                       to_jsonb(s) ->> 'invalidation_reason', coalesce((to_jsonb(s) ->> 'failover')::boolean, false)
                  FROM pg_replication_slots s WHERE slot_name = ?
                """;
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, terms.slotName());
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return null;
                }
                int pid = rs.getInt(6);
                return new SlotState(rs.getString(1), rs.getString(2), rs.getString(3), rs.getBoolean(4), rs.getBoolean(5),
                        rs.wasNull() ? null : pid, rs.getString(7), Lsns.parse(rs.getString(8)), Lsns.parse(rs.getString(9)),
                        rs.getLong(10), rs.getLong(11), rs.getString(12), rs.getBoolean(13));
            }
        }
    }

    /**
     * Creates the slot (pgoutput) on {@code server} and returns its consistent point: a failover slot (synced to
     * standbys that run {@code sync_replication_slots}) on PostgreSQL 17 and later unless {@code failoverSlot} is off.
     */
    long createSlot(Connection c, Server server) throws SQLException {
        boolean failover = server.hasFailoverSlots() && terms.failoverSlot();
        try (PreparedStatement ps = c.prepareStatement(failover
                ? "SELECT lsn::text FROM pg_create_logical_replication_slot(?, 'pgoutput', false, false, true)"
                : "SELECT lsn::text FROM pg_create_logical_replication_slot(?, 'pgoutput')")) {
            ps.setString(1, terms.slotName());
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                long lsn = Lsns.parse(rs.getString(1));
                log.info("created replication slot {} (pgoutput{}) at {} on {}", terms.slotName(),
                        failover ? ", failover" : "", Lsns.format(lsn), server.describe());
                return lsn;
            } catch (SQLException e) {
                throw new CdcStartupException("cannot create replication slot " + terms.slotName() + " ("
                        + e.getMessage().trim() + "): the relay's role needs the REPLICATION attribute "
                        + "(ALTER ROLE <role> REPLICATION) and a free slot (max_replication_slots)", e);
            }
        }
    }

    /** Drops the (inactive) slot: one PostgreSQL invalidated, before it is created again. */
    void dropSlot(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT pg_drop_replication_slot(?)")) {
            ps.setString(1, terms.slotName());
            ps.execute();
        }
    }

    /**
     * Makes the (inactive) slot a failover slot ({@code ALTER_REPLICATION_SLOT … (FAILOVER true)}, a command of the
     * replication protocol, so on a replication connection to {@code target}'s one host) when the server has failover
     * slots, {@code failoverSlot} is on and it is not one yet. A refusal is reported once (the relay streams on; only a
     * promotion would then lose the slot) with the command to run.
     */
    void ensureFailover(Connection c, Server server, JdbcTarget target) throws SQLException {
        SlotState slot = slot(c);
        if (slot == null || slot.failover() || !server.hasFailoverSlots() || !terms.failoverSlot()) {
            return;
        }
        String command = "ALTER_REPLICATION_SLOT " + Identifiers.quote("slotName", terms.slotName()) + " ( FAILOVER true )";
        java.util.Properties props = new java.util.Properties();
        props.setProperty("user", login.user());
        if (login.password() != null) {
            props.setProperty("password", login.password().reveal());
        }
        try (Connection replication = java.sql.DriverManager.getConnection(target.jdbcUrl(java.util.Map.of(
                "replication", "database", "preferQueryMode", "simple", "assumeMinServerVersion", "17")), props);
             Statement st = replication.createStatement()) {
            st.execute(command);
            log.info("made replication slot {} a failover slot: a standby with sync_replication_slots = on keeps a copy, "
                    + "from which the relay resumes after a promotion (failoverSlot = false leaves slots as they are)",
                    terms.slotName());
        } catch (SQLException e) {
            log.warn("could not make replication slot {} a failover slot ({}): the relay streams on, but a promoted "
                    + "standby will not have it. Run, on a replication connection (psql \"dbname=... replication=database\"): {}",
                    terms.slotName(), e.getMessage().trim(), command);
        }
    }

    /**
     * Moves the (inactive) slot forward to {@code lsn} without sending anything: PostgreSQL decodes and
     * discards the WAL itself. Used only after the start-up drain published everything committed before
     * {@code lsn} from the table.
     */
    void advance(Connection c, long lsn) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT end_lsn::text FROM pg_replication_slot_advance(?, ?::pg_lsn)")) {
            ps.setString(1, terms.slotName());
            ps.setString(2, Lsns.format(lsn));
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                log.info("fast-forwarded slot {} to {}: the WAL before it was published from the table", terms.slotName(),
                        rs.getString(1));
            }
        }
    }

    /** Throws unless {@code slot} is a usable pgoutput slot of this database. */
    void requireUsable(Connection c, SlotState slot) throws SQLException {
        requireKind(c, slot);
        if (slot.invalidated()) {
            throw new CdcStartupException("replication slot " + terms.slotName() + " was invalidated by PostgreSQL "
                    + "(wal_status=" + slot.walStatus() + (slot.invalidationReason() == null ? ""
                    : ", reason " + slot.invalidationReason()) + "): the WAL it needed is gone, so events committed "
                    + "meanwhile cannot be streamed. " + recoveryAdvice());
        }
    }

    /** Throws unless {@code slot} is a pgoutput slot of this database (invalidated or not). */
    void requireKind(Connection c, SlotState slot) throws SQLException {
        String database;
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT current_database()")) {
            rs.next();
            database = rs.getString(1);
        }
        String name = terms.slotName();
        if (!"logical".equals(slot.slotType()) || !"pgoutput".equals(slot.plugin())) {
            throw new CdcStartupException("replication slot " + name + " is a " + slot.slotType() + " slot with plugin "
                    + slot.plugin() + "; the relay needs a logical slot with pgoutput. Choose another slotName.");
        }
        if (!database.equals(slot.database())) {
            throw new CdcStartupException("replication slot " + name + " belongs to database " + slot.database()
                    + ", not " + database + ". Choose another slotName.");
        }
    }

    /**
     * Ends the walsender a previous holder left on the slot, for this instance, which has just taken the lease with
     * token {@code fence} (a holder on a lost node or frozen past its lease: the server keeps its walsender, and so the
     * slot, active until {@code wal_sender_timeout}), and waits up to 5 s for it to exit.
     *
     * <p>Only the holder of a valid lease ends anything: the statement itself checks, at the moment it runs, that the
     * lease row carries this instance and {@code fence} and has not expired, so a walsender is never ended while
     * another instance's lease is valid (that instance could only have lost the lease by expiry, release or the end
     * of its process). Where the role may not end it (a walsender of another role, no {@code pg_signal_backend})
     * this warns once with the statement that allows it; the session then waits for the server to end the
     * walsender ({@code wal_sender_timeout}; {@link #reportBusySlot}).
     */
    void endStaleWalsender(Connection c, long fence) throws SQLException {
        long start = System.nanoTime();
        try (PreparedStatement ps = c.prepareStatement("SELECT s.active_pid, pg_terminate_backend(s.active_pid, "
                + TERMINATE_WAIT.toMillis() + ") FROM pg_replication_slots s WHERE s.slot_name = ? AND s.active"
                + " AND s.active_pid <> pg_backend_pid() AND EXISTS (SELECT 1 FROM " + terms.tables().relayLease()
                + " l WHERE l.lease_key = ? AND l.holder = ? AND l.fence = ? AND l.expires_at > statement_timestamp())")) {
            ps.setString(1, terms.slotName());
            ps.setString(2, terms.leaseKey());
            ps.setString(3, instanceId);
            ps.setLong(4, fence);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    log.warn("slot {} was still streamed by walsender {} of a previous lease holder: ended it{} "
                                    + "({} ms after this instance took the lease with fencing token {})", terms.slotName(),
                            rs.getInt(1), rs.getBoolean(2) ? "" : " (it has not exited yet)", millisSince(start), fence);
                }
            }
        } catch (SQLException e) {
            if (!NOT_PERMITTED.equals(e.getSQLState())) {
                throw e;
            }
            warnNotPermitted(c, "the walsender still attached to slot " + terms.slotName(), e);
        }
    }

    /**
     * Says, once per wait, that the slot is still streamed by a walsender this instance could not end (after
     * {@link #endStaleWalsender}: one of another role is left to the server's {@code wal_sender_timeout}), and returns
     * the phase for the relay's health. The caller keeps looking (and publishing from the table) until it is free.
     */
    String reportBusySlot(Connection c, SlotState slot) throws SQLException {
        String timeout = show(c, "wal_sender_timeout");
        log.warn("slot {} is still active (walsender {}): waiting for it to be free; a walsender this role may not end "
                        + "is ended by the server once its client is gone for wal_sender_timeout ({}){}", terms.slotName(),
                slot.activePid(), timeout,
                "0".equals(timeout) ? ", which is 0 here: it never does. End it by hand: SELECT pg_terminate_backend("
                        + slot.activePid() + ")" : "");
        return "waiting for walsender " + slot.activePid() + " to leave slot " + terms.slotName()
                + " (wal_sender_timeout " + timeout + "; GRANT pg_signal_backend lets this relay end it)";
    }

    private void warnNotPermitted(Connection c, String what, SQLException e) throws SQLException {
        if (warnedNotPermitted.compareAndSet(false, true)) {
            String role;
            try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT quote_ident(current_user)")) {
                rs.next();
                role = rs.getString(1);
            }
            log.warn("the relay's role {} may not end {} ({}). A holder on a lost node or frozen past its lease then keeps "
                            + "the slot until the server ends its walsender (wal_sender_timeout, 60 s by default). Run: "
                            + "GRANT pg_signal_backend TO {} (or run every instance of this slot as the same role)",
                    role, what, e.getMessage().trim(), role);
        }
    }

    private static String show(Connection c, String setting) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT current_setting(?)")) {
            ps.setString(1, setting);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getString(1);
            }
        }
    }

    private static long millisSince(long startNanos) {
        return (System.nanoTime() - startNanos) / 1_000_000;
    }

    /** The {@code application_name} of the relay's own database sessions (its pool). */
    static String applicationName(String slotName, String instanceId) {
        String name = "outboxkit-cdc:" + slotName + ":" + instanceId;
        return name.length() > 63 ? name.substring(0, 63) : name;
    }

    /**
     * Ends the database sessions of a previous lease holder (found by their application_name), so that
     * locks it still holds in half-done transactions (it may be frozen, not dead) are released at once.
     */
    void terminateSessionsOf(Connection c, String previousHolder) throws SQLException {
        if (previousHolder == null || previousHolder.equals(instanceId)) {
            return;
        }
        try (PreparedStatement ps = c.prepareStatement("SELECT pid, pg_terminate_backend(pid) FROM pg_stat_activity "
                + "WHERE application_name = ? AND pid <> pg_backend_pid()")) {
            ps.setString(1, applicationName(terms.slotName(), previousHolder));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    log.warn("ended session {} of the previous lease holder {}", rs.getInt(1), previousHolder);
                }
            }
        } catch (SQLException e) {
            if (!NOT_PERMITTED.equals(e.getSQLState())) {
                throw e;
            }
            // its writes are fenced anyway; only locks it holds in half-done transactions wait for the server
            warnNotPermitted(c, "the sessions of the previous lease holder " + previousHolder, e);
        }
    }

    /** How to recover when the slot cannot be trusted: shared by every such error. */
    String recoveryAdvice() {
        String common = "To start over from what the database still has: DELETE FROM " + terms.table(OutboxTables.CDC_OFFSET)
                + " WHERE slot_name = '" + terms.slotName() + "'; DELETE FROM " + terms.table(OutboxTables.CDC_SLOT)
                + " WHERE slot_name = '" + terms.slotName() + "'; then start the relay again (it creates a slot and "
                + "publishes the rows in " + terms.outboxTable() + ").";
        return terms.deleteAfterPublish()
                ? common + " With deleteAfterPublish (the default) every unpublished event is still a row there, so nothing is lost."
                : common + " With deleteAfterPublish(false) the WAL was the only copy of events written while the slot "
                + "was gone; compare with your writer's records (outbox reconcile).";
    }
}
