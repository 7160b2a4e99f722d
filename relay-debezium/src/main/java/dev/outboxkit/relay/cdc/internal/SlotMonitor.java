package dev.outboxkit.relay.cdc.internal;

import com.zaxxer.hikari.HikariDataSource;
import dev.outboxkit.relay.cdc.CdcStartupException;
import dev.outboxkit.runtime.DatabaseLogin;
import dev.outboxkit.runtime.DatabaseSilence;
import dev.outboxkit.runtime.FailoverSlots;
import dev.outboxkit.runtime.JdbcUrls;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.OffsetDateTime;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every few seconds: the slot's state into the metrics (WAL status, lag, retained WAL), the age of
 * the oldest unpublished row (deleteAfterPublish), and a fatal failure of the streaming session
 * when its slot was dropped or invalidated under it.
 */
final class SlotMonitor implements Runnable {

    private static final Logger log = LoggerFactory.getLogger(Supervisor.class);

    private final SlotTerms terms;
    /** The URL (its hosts: the standbys asked for their copy of the slot) and the login to ask them with. */
    private final DatabaseLogin login;
    private final CdcMetrics metrics;
    private final HikariDataSource pool;
    private final SlotGuard guard;
    /** The session while the relay is active, else null. */
    private final Supplier<Session> activeSession;
    /**
     * When the last look that found the slot with a walsender began (System.nanoTime), or 0 when the last look found
     * none: a look from before the current session's engine started may have seen the predecessor's walsender.
     */
    private volatile long streamedLookNanos;
    private volatile long lastReadNanos;
    /** The URL's hosts: with several, the standbys among them are asked whether they hold a synced copy of the slot. */
    private final List<JdbcUrls.HostPort> standbyHosts;
    /** Every this many looks (2 s apart) the standbys are asked again. */
    private static final int STANDBY_LOOK_EVERY = 5;
    private int looks;
    private Map<String, Boolean> standbyCopies = Map.of();
    private volatile String lastError;

    SlotMonitor(SlotTerms terms, DatabaseLogin login, CdcMetrics metrics, HikariDataSource pool, SlotGuard guard,
                Supplier<Session> activeSession) {
        this.standbyHosts = JdbcUrls.hosts(login.jdbcUrl());
        this.terms = terms;
        this.login = login;
        this.metrics = metrics;
        this.pool = pool;
        this.guard = guard;
        this.activeSession = activeSession;
    }

    /**
     * The slot had a walsender at a look that began after {@code engineStartNanos}: Debezium is really streaming, not
     * just started (the predecessor's walsender is gone before a session starts its engine, so it cannot be this one).
     */
    boolean slotStreamedSince(long engineStartNanos) {
        long seen = streamedLookNanos;
        return seen != 0 && seen - engineStartNanos > 0;
    }

    /** Null while the monitor's reads reach the database (every 2 s), else why not: readiness uses it. */
    String databaseProblem() {
        return DatabaseSilence.problem(lastReadNanos, lastError, DatabaseSilence.LIMIT);
    }

    /**
     * Asks each host of the URL but {@code primary} whether it holds a synced copy of the slot; a host that does not
     * answer within a few seconds (down, being rebuilt) is left out (null).
     */
    private Map<String, Boolean> standbyCopies(JdbcUrls.HostPort primary) {
        Map<String, Boolean> copies = new LinkedHashMap<>();
        Properties props = new Properties();
        props.setProperty("user", login.user());
        if (login.password() != null) {
            props.setProperty("password", login.password().reveal());
        }
        props.setProperty("connectTimeout", "2");
        props.setProperty("socketTimeout", "5");
        props.setProperty("ApplicationName", "outboxkit-cdc-standby-check");
        for (JdbcUrls.HostPort host : standbyHosts) {
            if (host.equals(primary)) {
                continue;
            }
            try (Connection standby = DriverManager.getConnection(JdbcUrls.withHost(login.jdbcUrl(), host), props)) {
                copies.put(host.toString(), FailoverSlots.syncedOnStandby(standby, terms.slotName()));
            } catch (SQLException e) {
                copies.put(host.toString(), null);
                log.debug("standby {} could not be asked for its copy of slot {}: {}", host, terms.slotName(), e.toString());
            }
        }
        return copies;
    }

    @Override
    public void run() {
        long lookNanos = System.nanoTime();
        try (Connection c = pool.getConnection()) {
            SlotGuard.SlotState slot = readSlot(c, lookNanos);
            readFailover(c);
            Session s = activeSession.get();
            if (s != null && s.enginePolling()) {
                try {
                    // the pool follows the primary of a multi-host URL: on another host, the primary moved
                    s.requireSameServer(c);
                    if (slot == null || slot.invalidated()) {
                        // a slot the relay may create again ends the session (the next one does); else it stops, loudly
                        s.verifySlot(c, false);
                    }
                } catch (CdcStartupException | SlotMovedException e) {
                    s.fail(e);
                }
            }
            if (terms.deleteAfterPublish()) {
                readOldestUnpublished(c);
            }
            lastReadNanos = System.nanoTime();
            lastError = null;
        } catch (SQLException | RuntimeException e) {
            lastError = e.getClass().getSimpleName() + ": " + e.getMessage();
            log.debug("slot metrics could not be read: {}", e.toString());
            Session s = activeSession.get();
            if (s != null) {
                s.databaseError(e);
            }
        }
    }

    /** The slot's state into the metrics; whether it had a walsender at this look. Returns the slot, null if none. */
    private SlotGuard.SlotState readSlot(Connection c, long lookNanos) throws SQLException {
        SlotGuard.SlotState slot = guard.slot(c);
        if (slot == null) {
            streamedLookNanos = 0;
            metrics.walStatus.set(CdcMetrics.WAL_NO_SLOT);
            metrics.slotLagBytes.set(0);
            metrics.retainedWalBytes.set(0);
        } else {
            streamedLookNanos = slot.active() ? lookNanos : 0;
            metrics.walStatus.set(CdcMetrics.walStatusCode(slot.walStatus()));
            metrics.slotLagBytes.set(slot.lagBytes());
            metrics.retainedWalBytes.set(slot.retainedBytes());
        }
        return slot;
    }

    /** Whether a promoted standby would have the slot (asking the standbys now and then) into the metrics. */
    private void readFailover(Connection c) throws SQLException {
        FailoverSlots.State failover = FailoverSlots.of(c, terms.slotName());
        if (failover.code() == FailoverSlots.READY && standbyHosts.size() > 1) {
            if (looks++ % STANDBY_LOOK_EVERY == 0) {
                standbyCopies = standbyCopies(JdbcUrls.connectedTo(c));
            }
            failover = FailoverSlots.withStandbys(failover, standbyCopies);
        }
        metrics.failoverReady.set(failover.code());
        metrics.failoverDetail = failover.detail();
    }

    /** The oldest unpublished row's age into the metrics (the table holds every unpublished event). */
    private void readOldestUnpublished(Connection c) throws SQLException {
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT created_at FROM "
                + terms.outboxTable() + " WHERE published_at IS NULL ORDER BY seq LIMIT 1")) {
            if (rs.next()) {
                OffsetDateTime at = rs.getObject(1, OffsetDateTime.class);
                metrics.oldestUnackedMicros.set(at.toEpochSecond() * 1_000_000 + at.getNano() / 1000);
            } else {
                metrics.oldestUnackedMicros.set(0);
            }
        }
    }
}
