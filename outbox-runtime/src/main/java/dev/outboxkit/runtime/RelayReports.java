package dev.outboxkit.runtime;

import dev.outboxkit.core.OutboxTables;
import dev.outboxkit.core.Secret;
import dev.outboxkit.core.spi.RoleGrants;
import dev.outboxkit.relay.Relay;
import java.net.InetAddress;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.sql.Types;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Not API: shared by both relays.
 *
 * <p>A relay instance's report in {@code outbox_relay_report} (schema version 13): one row per instance, polling or
 * CDC, holder or standby, rewritten every {@link LeaseTiming#heartbeatInterval() heartbeat} with its readiness (and
 * why not), how many events it published since it started and when it last did, and deleted when it stops cleanly.
 * So an operator console sees every instance of the fleet, whichever process it runs in. Now and then (at the first
 * report, then hourly) it also deletes the rows that expired over a day ago: instances that crashed and never came back.
 *
 * <p>Best effort, and never in the way of publishing: it writes on a thread of its own (a slow or failing report
 * delays no lease renewal and no batch), with a connection of the relay's pool taken for one statement, under a
 * {@value #STATEMENT_TIMEOUT_SECONDS} s statement timeout, and it never throws. A schema older than version 13 (no
 * table) is said once at WARN naming {@code outbox migrate}, a role without the grants once at WARN naming the exact
 * {@code GRANT} statement ({@link RoleGrants#relayReportWriter}); then it stops trying for {@link #LOOK_AGAIN} and
 * looks again. Any other failure is logged at most once per {@link #LOOK_AGAIN} at WARN (DEBUG in between), and the
 * next heartbeat tries again.
 *
 * <p>{@link #start()} once; {@link #close()} stops it and deletes the row, waiting {@link #CLOSE_WAIT} at most (not when
 * the last report failed: the database is away, and a stop must not wait for it; the row then expires by itself).
 */
public final class RelayReports implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(RelayReports.class);

    /** How long a report that found no table or no grants waits before it looks again, and the WARN's rate limit. */
    static final Duration LOOK_AGAIN = Duration.ofMinutes(5);
    /** How often an instance deletes the rows that expired more than {@link #PURGE_AFTER} ago. */
    static final Duration PURGE_EVERY = Duration.ofHours(1);
    /** How long an expired row is kept (an instance that crashed stays visible as gone for this long). */
    static final Duration PURGE_AFTER = Duration.ofDays(1);
    /** The longest {@code problem} (the column's CHECK). */
    public static final int PROBLEM_LIMIT = 300;
    static final int STATEMENT_TIMEOUT_SECONDS = 2;
    /** How long a stop waits for the report's delete (a report in progress, then the delete itself). */
    static final Duration CLOSE_WAIT = Duration.ofSeconds(3);
    private static final int HOST_LIMIT = 255;
    private static final String UNDEFINED_TABLE = "42P01";
    private static final String INSUFFICIENT_PRIVILEGE = "42501";
    private static final Pattern JDBC_URL = Pattern.compile("jdbc:\\S+");

    /**
     * Who reports, and how often.
     *
     * @param relay      {@code poll} or {@code cdc} ({@code RelayMetric.POLL}, {@code RelayMetric.CDC})
     * @param instanceId the instance id (the lease holder's name)
     * @param logPrefix  how the log names the relay
     * @param schema     the schema of the outboxkit tables
     * @param timing     the lease: the report's {@link LeaseTiming#heartbeatInterval() interval} and
     *                   {@link LeaseTiming#reportLifetime() lifetime}
     * @param threadName the report thread's name, as the relay names its threads
     */
    public record Terms(String relay, String instanceId, String logPrefix, String schema, LeaseTiming timing,
                        String threadName) {
        public Terms {
            Objects.requireNonNull(relay, "relay");
            Objects.requireNonNull(instanceId, "instanceId");
            Objects.requireNonNull(timing, "timing");
            Objects.requireNonNull(threadName, "threadName");
        }
    }

    private final DataSource pool;
    private final Terms terms;
    private final Supplier<Relay.Health> health;
    private final CommonMeters meters;
    private final Instant startedAt = Instant.now();
    private final String upsert;
    private final String delete;
    private final String purge;

    private ScheduledExecutorService thread;
    /** The host name, looked up on the report thread (a slow DNS must not slow the start). */
    private String host;
    /** Until when (System.nanoTime) no report is tried: no table or no grants; 0 when trying. */
    private long dormantUntilNanos;
    private boolean warnedNoTable;
    private boolean warnedNoGrants;
    /** When another failure was last logged at WARN (System.nanoTime), 0 before; failures since. */
    private long lastWarnNanos;
    private int failuresSinceWarn;
    private long lastPurgeNanos;
    private boolean purged;
    /** A row of this instance may be there. */
    private volatile boolean written;
    /** The last report failed (or found no table or grants): the stop does not try to delete. */
    private volatile boolean lastFailed;
    private volatile boolean closed;

    /**
     * @param pool    the relay's pool (a connection for one statement per heartbeat)
     * @param health  the relay's health verdict ({@link RelayHealth}), read at each report
     * @param meters  what the instance published ({@link CommonMeters#publishedHere()})
     */
    public RelayReports(DataSource pool, Terms terms, Supplier<Relay.Health> health, CommonMeters meters) {
        this.pool = Objects.requireNonNull(pool, "pool");
        this.terms = terms;
        this.health = Objects.requireNonNull(health, "health");
        this.meters = Objects.requireNonNull(meters, "meters");
        String table = OutboxTables.in(terms.schema()).relayReport();
        this.upsert = "INSERT INTO " + table + " (instance_id, relay, host, started_at, reported_at, expires_at, ready,"
                + " problem, published, last_published_at) VALUES (?, ?, ?, ?, now(),"
                + " now() + CAST(? AS double precision) * interval '1 millisecond', ?, ?, ?,"
                + " now() - CAST(? AS double precision) * interval '1 millisecond') ON CONFLICT (instance_id) DO UPDATE SET"
                + " relay = EXCLUDED.relay, host = EXCLUDED.host, started_at = EXCLUDED.started_at,"
                + " reported_at = EXCLUDED.reported_at, expires_at = EXCLUDED.expires_at, ready = EXCLUDED.ready,"
                + " problem = EXCLUDED.problem, published = EXCLUDED.published, last_published_at = EXCLUDED.last_published_at";
        this.delete = "DELETE FROM " + table + " WHERE instance_id = ?";
        this.purge = "DELETE FROM " + table + " WHERE expires_at < now() - interval '" + PURGE_AFTER.toHours() + " hours'";
    }

    /** Reports now, then every heartbeat, on a daemon thread of its own. */
    public synchronized void start() {
        if (thread != null || closed) {
            return;
        }
        thread = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, terms.threadName());
            t.setDaemon(true);
            return t;
        });
        long every = terms.timing().heartbeatInterval().toMillis();
        thread.scheduleWithFixedDelay(this::report, 0, every, TimeUnit.MILLISECONDS);
    }

    /** One report (and the hourly purge). Never throws. */
    void report() {
        long now = System.nanoTime();
        if (closed || dormantUntilNanos != 0 && now - dormantUntilNanos < 0) {
            return;
        }
        boolean wasDormant = dormantUntilNanos != 0;
        Relay.Health verdict = verdict();
        if (host == null) {
            host = hostName();
        }
        try (Connection c = pool.getConnection()) {
            if (!purged || now - lastPurgeNanos >= PURGE_EVERY.toNanos()) {
                try (PreparedStatement ps = c.prepareStatement(purge)) {
                    ps.setQueryTimeout(STATEMENT_TIMEOUT_SECONDS);
                    ps.executeUpdate();
                }
                purged = true;
                lastPurgeNanos = now;
            }
            try (PreparedStatement ps = c.prepareStatement(upsert)) {
                ps.setQueryTimeout(STATEMENT_TIMEOUT_SECONDS);
                ps.setString(1, terms.instanceId());
                ps.setString(2, terms.relay());
                ps.setString(3, host);
                ps.setTimestamp(4, Timestamp.from(startedAt));
                ps.setLong(5, terms.timing().reportLifetime().toMillis());
                ps.setBoolean(6, verdict.ready());
                ps.setString(7, verdict.ready() ? null : problem(verdict.detail()));
                ps.setLong(8, meters.publishedHere());
                long last = meters.lastPublishedNanos();
                if (last == 0) {
                    ps.setNull(9, Types.BIGINT);
                } else {
                    ps.setLong(9, Math.max(0, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - last)));
                }
                ps.executeUpdate();
            }
            if (!c.getAutoCommit()) {
                c.commit();
            }
            written = true;
            lastFailed = false;
            dormantUntilNanos = 0;
            if (wasDormant) {
                log.info("{}: writes its report in {} again", terms.logPrefix(), OutboxTables.RELAY_REPORT);
            }
        } catch (SQLException | RuntimeException e) {
            lastFailed = true;
            failed(e);
        }
    }

    /** The relay's verdict; a health check that throws counts as not ready (it never should). */
    private Relay.Health verdict() {
        try {
            return health.get();
        } catch (RuntimeException e) {
            return new Relay.Health(true, false, "health unknown: " + e);
        }
    }

    private void failed(Exception e) {
        String state = e instanceof SQLException s ? s.getSQLState() : null;
        if (UNDEFINED_TABLE.equals(state)) {
            dormantUntilNanos = System.nanoTime() + LOOK_AGAIN.toNanos();
            if (!warnedNoTable) {
                warnedNoTable = true;
                log.warn("{}: schema \"{}\" has no {} (schema version 13), so the operator console does not see this"
                                + " instance's readiness and publishing; publishing is not affected. Run 'outbox migrate"
                                + " --schema {}' (Migrations.migrate in Java); the relay looks again every {} min",
                        terms.logPrefix(), terms.schema(), OutboxTables.RELAY_REPORT, terms.schema(), LOOK_AGAIN.toMinutes());
            }
            return;
        }
        if (INSUFFICIENT_PRIVILEGE.equals(state)) {
            dormantUntilNanos = System.nanoTime() + LOOK_AGAIN.toNanos();
            if (!warnedNoGrants) {
                warnedNoGrants = true;
                log.warn("{}: its role may not write its report in {}, so the operator console does not see this"
                                + " instance's readiness and publishing; publishing is not affected. Grant it: {}; the relay"
                                + " looks again every {} min", terms.logPrefix(), OutboxTables.RELAY_REPORT,
                        missingGrants(e), LOOK_AGAIN.toMinutes());
            }
            return;
        }
        failuresSinceWarn++;
        long now = System.nanoTime();
        if (lastWarnNanos == 0 || now - lastWarnNanos >= LOOK_AGAIN.toNanos()) {
            log.warn("{}: could not write its report in {} ({} failure{} since the last warning): {}; publishing is not"
                            + " affected, the next heartbeat tries again (this warning comes at most every {} min)",
                    terms.logPrefix(), OutboxTables.RELAY_REPORT, failuresSinceWarn, failuresSinceWarn == 1 ? "" : "s",
                    Secret.maskUrl(String.valueOf(e.getMessage())), LOOK_AGAIN.toMinutes());
            lastWarnNanos = now;
            failuresSinceWarn = 0;
        } else {
            log.debug("{}: could not write its report: {}", terms.logPrefix(), e.toString());
        }
    }

    /** The statements that give the relay's role what the report needs, or the error when they cannot be told. */
    private String missingGrants(Exception e) {
        try (Connection c = pool.getConnection()) {
            List<String> missing = RoleGrants.relayReportWriter(terms.schema()).missing(c);
            if (!c.getAutoCommit()) {
                c.rollback();
            }
            if (!missing.isEmpty()) {
                return String.join("; ", missing);
            }
        } catch (SQLException | RuntimeException again) {
            e.addSuppressed(again);
        }
        return "SELECT, INSERT, UPDATE and DELETE on " + OutboxTables.in(terms.schema()).relayReport() + " ("
                + e.getMessage() + ")";
    }

    /**
     * Stops reporting and deletes this instance's row, unless the last report failed (then the database is away or the
     * table cannot be written, and the row, if any, expires by itself). The delete runs on the report thread, after a
     * report in progress; the stop waits for it at most {@link #CLOSE_WAIT}, so a database that stopped answering
     * holds it up no longer than that. Never throws.
     */
    @Override
    public void close() {
        ScheduledExecutorService t;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true; // the scheduled reports still queued do nothing now
            t = thread;
        }
        if (t == null) {
            return;
        }
        Future<?> deleted = t.submit(this::deleteRow);
        t.shutdown();
        try {
            deleted.get(CLOSE_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            log.debug("{}: its report was not deleted within {}; it expires by itself", terms.logPrefix(), CLOSE_WAIT);
            t.shutdownNow();
        } catch (ExecutionException e) {
            log.debug("{}: could not delete its report: {}", terms.logPrefix(), e.getCause().toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            t.shutdownNow();
        }
    }

    /** Deletes this instance's row when the last report wrote it. Never throws. */
    private void deleteRow() {
        if (!written || lastFailed) {
            return;
        }
        try (Connection c = pool.getConnection(); PreparedStatement ps = c.prepareStatement(delete)) {
            ps.setQueryTimeout(STATEMENT_TIMEOUT_SECONDS);
            ps.setString(1, terms.instanceId());
            ps.executeUpdate();
            if (!c.getAutoCommit()) {
                c.commit();
            }
        } catch (SQLException | RuntimeException e) {
            log.debug("{}: could not delete its report on stop ({}); it expires by itself", terms.logPrefix(), e.toString());
        }
    }

    /**
     * The health detail as a report may hold it: never a password or a JDBC URL, at most {@value #PROBLEM_LIMIT}
     * characters (a surrogate pair is never split).
     */
    static String problem(String detail) {
        String d = detail == null || detail.isBlank() ? "not ready" : detail;
        d = Secret.maskUrl(JDBC_URL.matcher(d).replaceAll("[JDBC URL]"));
        if (d.length() <= PROBLEM_LIMIT) {
            return d;
        }
        int cut = PROBLEM_LIMIT - 1;
        if (Character.isHighSurrogate(d.charAt(cut - 1))) {
            cut--;
        }
        return d.substring(0, cut) + "…";
    }

    /**
     * This host's name as it sees it ({@code HOSTNAME} when it cannot look itself up), at most 255 characters. May
     * wait for DNS: call it off the paths that must be quick.
     */
    public static String hostName() {
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        } catch (Exception e) {
            host = System.getenv().getOrDefault("HOSTNAME", "host");
        }
        return host.length() > HOST_LIMIT ? host.substring(0, HOST_LIMIT) : host;
    }
}
