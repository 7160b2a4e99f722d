package dev.outboxkit.relay.poller.internal;

import com.zaxxer.hikari.HikariDataSource;
import dev.outboxkit.core.Identifiers;
import dev.outboxkit.core.OutboxTables;
import dev.outboxkit.core.spi.RoleGrants;
import dev.outboxkit.relay.Relay;
import dev.outboxkit.relay.RelayMetric;
import dev.outboxkit.relay.poller.AfterPublish;
import dev.outboxkit.runtime.DatabaseAtStart;
import dev.outboxkit.runtime.DatabaseSilence;
import dev.outboxkit.runtime.KafkaReachability;
import dev.outboxkit.runtime.KafkaWrites;
import dev.outboxkit.runtime.OperatorActions;
import dev.outboxkit.runtime.PoolerCheck;
import dev.outboxkit.runtime.RelayHealth;
import dev.outboxkit.runtime.RelayReports;
import io.micrometer.core.instrument.MeterRegistry;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Not API: public for {@code dev.outboxkit.relay.poller.PollingRelay}.
 *
 * <p>The polling relay's life: the start-up checks (database, pooler, grants, schema, Kafka's TLS), then joining the
 * relay group ({@link LeaseManager}: a share of the partitions, or standing by while others hold them all), the claim
 * loops over the held partitions ({@link ClaimLoop}: claim → send → settle), the probes and the listener; the health
 * of all of it ({@link #health()}, aggregated in one place), which the instance's report ({@link RelayReports}) writes
 * for the operator console; and the graceful stop that hands the partitions over.
 *
 * <p>Thread-safe. {@link #start()} once; {@link #close()} is idempotent.
 */
public final class Supervisor implements AutoCloseable {

    /** The facade's logger, as before the supervisor was split off it: log configurations name it. */
    private static final Logger log = LoggerFactory.getLogger("dev.outboxkit.relay.poller.PollingRelay");

    private final String logPrefix;
    private final DataSource dataSource;
    /** The pool the relay opened itself (closed with it), null when it was given one. */
    private final HikariDataSource ownedPool;
    private final MeterRegistry registry;
    private final StartChecks checks;
    private final LeaseTerms leaseTerms;
    private final LoopTerms loopTerms;
    private final KafkaTerms kafkaTerms;
    /** How long a stop waits for the claim loops' batches in flight. */
    private final Duration stopWait;
    /** Replaced once at start by the version-9 statements when the schema has no binary payload columns yet. */
    private PollerSql sql;
    /** Whether pipelined claims alternate slices on the slice index (found at start). */
    private boolean sliceIndex;

    private final Object lifecycle = new Object();
    private volatile boolean started;
    private volatile boolean closed;
    /** Set by {@link #close()} before it waits for the lifecycle lock, so a start still waiting for the database ends. */
    private volatile boolean stopRequested;
    /** The start's wait for the database, for {@link #health()} while it runs. */
    private volatile DatabaseAtStart firstContact;
    private LeaseManager leases;
    /** The claim loops, each over its share of the held partitions (claimLoops), and their threads. */
    private List<ClaimLoop> claimLoops;
    private List<Thread> claimLoopThreads;
    private NotifyListener listener;
    private Thread listenerThread;
    private ScheduledExecutorService heartbeat;
    private Thread watcher;
    private ScheduledExecutorService probes;
    private KafkaReachability kafka;
    /** The relay's records on their way to Kafka (every claim loop's): the shared write rule. */
    private KafkaWrites kafkaWrites;
    /** This instance's report in outbox_relay_report (best effort, a thread of its own). */
    private RelayReports reports;

    /**
     * @param ownedPool the pool the relay opened itself (it closes it), null when {@code dataSource} was given
     * @param stopWait  how long a stop waits for the claim loops' batches in flight
     */
    public Supervisor(String logPrefix, DataSource dataSource, HikariDataSource ownedPool, MeterRegistry registry,
                      StartChecks checks, LeaseTerms leaseTerms, LoopTerms loopTerms, KafkaTerms kafkaTerms,
                      Duration stopWait) {
        this.logPrefix = logPrefix;
        this.dataSource = dataSource;
        this.ownedPool = ownedPool;
        this.registry = registry;
        this.checks = checks;
        this.leaseTerms = leaseTerms;
        this.loopTerms = loopTerms;
        this.kafkaTerms = kafkaTerms;
        this.stopWait = stopWait;
        this.sql = new PollerSql(checks.schema(), checks.partitions(), checks.afterPublish(), checks.parkPolicy());
    }

    // ---- Start ----

    /** See {@code PollingRelay#start()}. */
    public void start() {
        synchronized (lifecycle) {
            if (closed) {
                throw new IllegalStateException(logPrefix + " is closed; build a new one");
            }
            if (started) {
                throw new IllegalStateException(logPrefix + " is already started");
            }
            checkAtStart();
            List<Waker> wakers = new ArrayList<>();
            for (int i = 0; i < loopTerms.claimLoops(); i++) {
                wakers.add(new Waker());
            }
            Waker everyLoop = Waker.all(wakers);
            RelayMetrics metrics = new RelayMetrics(registry, () -> leases == null ? 0 : leases.ownership().size());
            kafkaWrites = metrics.kafkaWrites;
            leases = new LeaseManager(dataSource, sql, leaseTerms, metrics, everyLoop::wake);
            List<ClaimLoop> loops = new ArrayList<>();
            for (int i = 0; i < loopTerms.claimLoops(); i++) {
                loops.add(new ClaimLoop(loopTerms, dataSource, sql, leases, kafkaTerms.producers(), metrics,
                        wakers.get(i), sliceIndex, i));
            }
            claimLoops = List.copyOf(loops);
            joinGroupAndProbe(metrics);
            startClaimLoops();
            if (checks.listenNotify()) {
                warnIfTriggerMissing();
                listener = new NotifyListener(dataSource, checks.schema(), logPrefix, everyLoop);
                listenerThread = daemon("outbox-poll-listen").newThread(listener);
                listenerThread.start();
            }
            started = true;
            logStarted();
            reports = new RelayReports(dataSource, new RelayReports.Terms(RelayMetric.POLL, leaseTerms.instanceId(), logPrefix,
                    checks.schema(), leaseTerms.timing(), "outbox-poll-report"), this::health, metrics);
            reports.start();
        }
    }

    /**
     * Everything that can refuse the start, before any lease is taken: the database answers (within startTimeout),
     * is not behind a transaction pooler, the role has its grants, the schema its tables; Kafka's TLS is trusted.
     */
    private void checkAtStart() {
        DatabaseAtStart contact = new DatabaseAtStart(logPrefix, jdbcUrl(), checks.startTimeout(), () -> stopRequested);
        firstContact = contact;
        contact.await(dataSource);
        PoolerCheck.requireSessionPerConnection(dataSource, logPrefix, jdbcUrl());
        checkSchema();
        warnIfPoolTooSmall();
        KafkaReachability.refuseUntrustedBroker(kafkaTerms.producerConfig(), logPrefix);
    }

    /**
     * Joins the relay group (a first heartbeat takes a first share of the partitions, or none: standing by), then
     * keeps it (the heartbeat, the watcher of releases and gone members) and starts the backlog and Kafka probes.
     */
    private void joinGroupAndProbe(RelayMetrics metrics) {
        BacklogProbe probe = new BacklogProbe(dataSource, sql, metrics);
        leases.heartbeat();
        heartbeat = Executors.newSingleThreadScheduledExecutor(daemon("outbox-poll-leases"));
        long beat = leaseTerms.heartbeatInterval().toMillis();
        heartbeat.scheduleWithFixedDelay(leases::heartbeat, beat, beat, TimeUnit.MILLISECONDS);
        watcher = daemon("outbox-poll-watch").newThread(leases::watch);
        watcher.start();
        probes = Executors.newSingleThreadScheduledExecutor(daemon("outbox-poll-metrics"));
        probes.scheduleWithFixedDelay(probe::age, 0, 2, TimeUnit.SECONDS);
        probes.scheduleWithFixedDelay(probe::count, 0, 10, TimeUnit.SECONDS);

        kafka = new KafkaReachability(kafkaTerms.producerConfig(), logPrefix, "outbox-poll-kafka-probe", metrics,
                kafkaTerms.route());
        kafka.start();
    }

    private void startClaimLoops() {
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < claimLoops.size(); i++) {
            threads.add(new Thread(claimLoops.get(i),
                    "outbox-poll-relay" + ClaimLoop.threadSuffix(loopTerms.claimLoops(), i)));
        }
        claimLoopThreads = List.copyOf(threads);
        claimLoopThreads.forEach(Thread::start);
    }

    private void logStarted() {
        int loops = loopTerms.claimLoops();
        log.info("{} started: schema {}, {} partitions, {} claim loop{}, batch {}, lease {}, after publish {}, "
                        + "park policy {}, listen/notify {}, pipelined claims {}, holding {}", logPrefix,
                checks.schema(), checks.partitions(), loops, loops == 1 ? "" : "s",
                loopTerms.claims().batchSize(), leaseTerms.timing().lease(), checks.afterPublish(),
                checks.parkPolicy(), checks.listenNotify() ? "on" : "off",
                !loopTerms.pipelineClaims() ? "off" : sliceIndex ? "on (alternate slices)" : "on", leases.ownership());
    }

    // ---- Start-up checks ----

    private void warnIfPoolTooSmall() {
        int needed = checks.connectionsNeeded();
        if (ownedPool == null && dataSource instanceof com.zaxxer.hikari.HikariDataSource given
                && given.getMaximumPoolSize() < needed) {
            log.warn("{}: the pool it was given ({}) allows {} connections; the relay needs {} (one held for "
                            + "its life by its liveness lock), so its claims may wait for connections. Raise "
                            + "maximumPoolSize to at least {} plus what the application itself uses", logPrefix,
                    given.getPoolName(), given.getMaximumPoolSize(), needed, needed);
        }
    }

    private void checkSchema() {
        String schema = checks.schema();
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(sql.tablesPresent())) {
            // Grants first (without USAGE on the schema its tables cannot even be looked up): exactly
            // relay-poller/README.md, "Least privilege", what a batch needs in either afterPublish mode.
            RoleGrants.pollingRelay(schema).require(c, logPrefix);
            String[] tables = {OutboxTables.OUTBOX_EVENT, OutboxTables.DEAD_LETTER, OutboxTables.RELAY_LEASE,
                    OutboxTables.RELAY_MEMBER};
            for (int i = 0; i < tables.length; i++) {
                ps.setString(i + 1, Identifiers.qualified(schema, tables[i]));
            }
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                for (int i = 0; i < tables.length; i++) {
                    if (!rs.getBoolean(i + 1)) {
                        throw new IllegalStateException("schema \"" + schema + "\" has no " + tables[i]
                                + " table: apply the outboxkit schema (version 3 or later) first, with 'outbox migrate' "
                                + "or Migrations.migrate(dataSource, \"" + schema + "\")");
                    }
                }
            }
            if (checks.afterPublish() == AfterPublish.MARK) {
                requireUnpublishedIndex(c);
            }
            findSliceIndex(c);
            if (!binaryColumnsPresent(c)) {
                log.warn("{}: schema \"{}\" is older than version 10 (no binary payloads): the relay uses the"
                        + " version-9 statements until it is restarted after 'outbox migrate'", logPrefix, schema);
                sql = new PollerSql(schema, checks.partitions(), checks.afterPublish(), checks.parkPolicy(), false);
            }
        } catch (SQLException e) {
            throw new IllegalStateException(logPrefix + " cannot reach the database: "
                    + OperatorActions.database(e, jdbcUrl()) + " (check the JDBC URL, credentials and network)", e);
        }
    }

    private void findSliceIndex(Connection c) throws SQLException {
        boolean slicesFit = loopTerms.pipelineClaims() && checks.afterPublish() == AfterPublish.DELETE;
        sliceIndex = slicesFit && present(c, sql.sliceIndexPresent());
        if (slicesFit && !sliceIndex) {
            log.info("{}: pipelineClaims is on without the slice indexes, so each claim steps over the rows"
                    + " of the batch in flight; to claim alternate slices instead, create them as the schema owner: {}",
                    logPrefix, String.join("; ", PollerSql.sliceIndexDdl(checks.schema())));
        }
    }

    /** The URL of the relay's pool (for messages: host, port, database and CA file only), null when not known. */
    private String jdbcUrl() {
        return dataSource instanceof HikariDataSource h ? h.getJdbcUrl() : null;
    }

    /** A yes/no catalog check whose one parameter is outbox_event. */
    private boolean present(Connection c, String check) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(check)) {
            ps.setString(1, Identifiers.qualified(checks.schema(), OutboxTables.OUTBOX_EVENT));
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getBoolean(1);
            }
        }
    }

    private boolean binaryColumnsPresent(Connection c) throws SQLException {
        return present(c, sql.binaryColumnsPresent());
    }

    /**
     * MARK mode keeps published rows, so claims must find the unpublished ones through the partial
     * index the schema creates only for MARK mode (V9 dropped it where every row is unpublished):
     * without it every claim would walk the whole archive.
     */
    private void requireUnpublishedIndex(Connection c) throws SQLException {
        String table = Identifiers.qualified(checks.schema(), OutboxTables.OUTBOX_EVENT);
        try (PreparedStatement ps = c.prepareStatement(sql.unpublishedIndexPresent())) {
            ps.setString(1, table);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                if (!rs.getBoolean(1)) {
                    throw new IllegalStateException(logPrefix + ": afterPublish MARK keeps "
                            + "published rows and needs an index on the unpublished ones, which " + table + " lacks. "
                            + "Create it as the schema owner: CREATE INDEX CONCURRENTLY outbox_event_unpublished ON "
                            + table + " (seq) WHERE published_at IS NULL");
                }
            }
        }
    }

    private void warnIfTriggerMissing() {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(sql.notifyTriggerPresent())) {
            ps.setString(1, Identifiers.qualified(checks.schema(), OutboxTables.OUTBOX_EVENT));
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                if (!rs.getBoolean(1)) {
                    log.warn("{}: listenNotify is on but outbox_event has no outbox_event_notify trigger, so no "
                                    + "notification will come and the relay falls back to polling (maxPollDelay {}). Attach it: "
                                    + "CREATE TRIGGER outbox_event_notify AFTER INSERT ON {} FOR EACH STATEMENT EXECUTE "
                                    + "FUNCTION {}()", logPrefix, checks.maxPollDelay(),
                            Identifiers.qualified(checks.schema(), OutboxTables.OUTBOX_EVENT),
                            Identifiers.qualified(checks.schema(), "outbox_event_notify"));
                }
            }
        } catch (SQLException e) {
            log.warn("{}: could not check for the outbox_event_notify trigger: {}", logPrefix, e.getMessage());
        }
    }

    // ---- Health: the one place where the relay's parts are judged together ----

    /**
     * Live: every claim loop and the heartbeat run. Ready: the last heartbeat reached the database
     * recently (5 s, or the lease if that is shorter), Kafka accepts the relay's writes (it answers the reachability
     * probe, waiting records are acknowledged: {@link KafkaWrites}; a batch whose records it refused counts until a
     * batch passes, one whose records it only did not answer in time until it acknowledges a record again), and the instance
     * either holds partitions or stands by (all partitions are held by others).
     */
    public Relay.Health health() {
        if (closed) {
            return new Relay.Health(false, false, logPrefix + ": closed");
        }
        if (!started) {
            return RelayHealth.beforeStart(logPrefix + ": ", firstContact);
        }
        return aggregateHealth();
    }

    /** A claim loop in Kafka trouble, and since when (System.nanoTime, as read once). */
    private record KafkaTrouble(ClaimLoop loop, long sinceNanos) {
    }

    /**
     * The running relay's health, from: the claim loop threads and the heartbeat (live); the lease heartbeat's last
     * contact with the database and each claim loop's database trouble; each claim loop's Kafka trouble judged by the
     * shared write rule; the partition count dispute; and last the Kafka reachability probe.
     */
    private Relay.Health aggregateHealth() {
        // live only while every claim loop runs: a dead loop's partitions would wait for ever
        List<String> dead = deadClaimLoops();
        boolean live = dead.isEmpty() && !heartbeat.isShutdown();
        KafkaTrouble kafkaTrouble = longestKafkaTrouble();
        return kafka.applyTo(RelayHealth.running(holdingDetail().toString(), live,
                dead.isEmpty() ? null : "claim loop thread " + String.join(", ", dead)
                        + " ended (see the log for its error): not live",
                databaseProblem(),
                kafkaTrouble == null ? null : "Kafka failing for "
                        + (System.nanoTime() - kafkaTrouble.sinceNanos()) / 1_000_000_000L + " s: " + kafkaTrouble.loop().lastError(),
                leases.partitionMismatch() ? "partition count in dispute with other instances" : null));
    }

    private List<String> deadClaimLoops() {
        List<String> dead = new ArrayList<>();
        for (Thread t : claimLoopThreads) {
            if (!t.isAlive()) {
                dead.add(t.getName());
            }
        }
        return dead;
    }

    /** The heartbeat's silence, else the first claim loop's failing claims or commits; null when the database answers. */
    private String databaseProblem() {
        String silence = DatabaseSilence.problem(leases.lastHeartbeatNanos(), leases.lastError(),
                leaseTerms.timing().databaseSilence());
        if (silence != null) {
            return silence;
        }
        for (ClaimLoop loop : claimLoops) {
            if (loop.databaseTroubleSinceNanos() != 0) {
                return "database: " + loop.lastError();
            }
        }
        return null;
    }

    /** The claim loop in Kafka trouble for longest, or null. */
    private KafkaTrouble longestKafkaTrouble() {
        KafkaTrouble longest = null;
        for (ClaimLoop loop : claimLoops) {
            long since = loop.kafkaTroubleSinceNanos();
            // A batch Kafka did not take whole counts until a batch passes when Kafka refused records of it (an error,
            // retriable or one that needs an operator); when its records were only not answered in time, until Kafka
            // acknowledges a record again (a slow careful retry whose records are acknowledged is no Kafka trouble;
            // the shared write rule judges any silence).
            boolean troubled = since != 0 && (loop.kafkaRefused() || !kafkaWrites.acknowledgedSince(since));
            if (troubled && (longest == null || since - longest.sinceNanos() < 0)) {
                longest = new KafkaTrouble(loop, since);
            }
        }
        return longest;
    }

    /** "poll relay a: holding 0-7 (2 live instances), last batches 12 rows". */
    private StringBuilder holdingDetail() {
        int lastBatches = 0;
        for (ClaimLoop loop : claimLoops) {
            lastBatches += loop.lastBatchSize();
        }
        Ownership own = leases.ownership();
        return new StringBuilder(logPrefix).append(": holding ")
                .append(own).append(" (").append(leases.liveMembers()).append(" live instance")
                .append(leases.liveMembers() == 1 ? "" : "s").append("), last batch").append(claimLoops.size() == 1 ? " " : "es ")
                .append(lastBatches).append(" rows");
    }

    // ---- Stop ----

    /**
     * Graceful stop: stops claiming, waits for the batch in flight to be acknowledged and
     * committed (at most about a third of the lease duration), gives back every lease (the others, told at that
     * commit, take over within milliseconds) and then closes the producer and the relay-owned pool.
     */
    @Override
    public void close() {
        stopRequested = true;
        synchronized (lifecycle) {
            if (closed) {
                return;
            }
            closed = true;
            if (!started) {
                if (ownedPool != null) {
                    ownedPool.close();
                }
                return;
            }
            handOver();
            reports.close(); // after the handover: until then the instance is there, stopping (not ready)
            heartbeat.shutdown();
            awaitQuietly(heartbeat);
            join(watcher, Duration.ofSeconds(5));
            probes.shutdownNow();
            kafka.close();
            if (listenerThread != null) {
                join(listenerThread, Duration.ofSeconds(5));
            }
            for (ClaimLoop loop : claimLoops) {
                try {
                    loop.closeProducer(Duration.ofSeconds(10));
                } catch (RuntimeException e) {
                    log.warn("{}: closing the Kafka producer failed: {}", logPrefix, e.getMessage());
                }
            }
            if (ownedPool != null) {
                ownedPool.close();
            }
            log.info("{} stopped", logPrefix);
        }
    }

    /** Stops the claim loops, waits for their batches in flight, then gives every lease back. */
    private void handOver() {
        long stopBegan = System.nanoTime();
        claimLoops.forEach(ClaimLoop::stop);
        if (listener != null) {
            listener.stop();
        }
        // every loop finishes its batch in flight at the same time: one stop wait for all of them
        long stopBy = stopBegan + stopWait.toNanos();
        for (Thread t : claimLoopThreads) {
            join(t, Duration.ofNanos(Math.max(1_000_000, stopBy - System.nanoTime())));
        }
        long loopsEnded = System.nanoTime();
        // the last batch is committed: its partitions go to the others first, everything else after
        leases.leave();
        long now = System.nanoTime();
        log.info("{}: handed over {} ms after the stop began (the batch in flight: {} ms, then the release: {} ms)",
                logPrefix, (now - stopBegan) / 1_000_000, (loopsEnded - stopBegan) / 1_000_000,
                (now - loopsEnded) / 1_000_000);
    }

    private void join(Thread t, Duration timeout) {
        try {
            t.join(timeout.toMillis());
            if (t.isAlive()) {
                log.warn("{}: {} did not stop within {}; interrupting it (its batch is rolled back and published "
                        + "again later)", logPrefix, t.getName(), timeout);
                t.interrupt();
                t.join(10_000);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void awaitQuietly(ScheduledExecutorService s) {
        try {
            s.awaitTermination(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static ThreadFactory daemon(String name) {
        return r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        };
    }
}
