package dev.outboxkit.relay.poller;

import com.zaxxer.hikari.HikariDataSource;
import dev.outboxkit.core.Identifiers;
import dev.outboxkit.core.OutboxTables;
import dev.outboxkit.core.Secret;
import dev.outboxkit.core.spi.RoleGrants;
import dev.outboxkit.relay.Relay;
import dev.outboxkit.relay.RelayBuilder;
import dev.outboxkit.relay.RelayOption;
import dev.outboxkit.relay.poller.internal.BacklogProbe;
import dev.outboxkit.relay.poller.internal.ClaimLoop;
import dev.outboxkit.relay.poller.internal.LeaseManager;
import dev.outboxkit.relay.poller.internal.NotifyListener;
import dev.outboxkit.relay.poller.internal.Ownership;
import dev.outboxkit.relay.poller.internal.PollerSettings;
import dev.outboxkit.relay.poller.internal.PollerSql;
import dev.outboxkit.relay.poller.internal.RelayMetrics;
import dev.outboxkit.relay.poller.internal.Waker;
import dev.outboxkit.runtime.ConnectionPools;
import dev.outboxkit.runtime.DatabaseAtStart;
import dev.outboxkit.runtime.DatabaseLogin;
import dev.outboxkit.runtime.DatabaseSilence;
import dev.outboxkit.runtime.KafkaReachability;
import dev.outboxkit.runtime.KafkaWrites;
import dev.outboxkit.runtime.OperatorActions;
import dev.outboxkit.runtime.PoolerCheck;
import dev.outboxkit.runtime.Tracing;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import javax.sql.DataSource;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The polling relay: publishes every committed {@code outbox_event} row to Kafka and forgets it
 * only after Kafka acknowledged it.
 *
 * <p>How: it claims a batch of rows with {@code FOR UPDATE SKIP LOCKED} by deleting (or marking)
 * them in a transaction that stays open, sends every record asynchronously through
 * {@link dev.outboxkit.relay.KafkaRecords}, waits for every acknowledgement and only then commits.
 * A crash before the commit rolls the claim back, so rows are published again (at least once),
 * never lost. A fully acknowledged batch is committed while the next one is claimed.
 *
 * <p>Several instances share the work: aggregates hash into {@code partitions} partitions, and
 * each instance takes its fair share of them through leases in {@code outbox_relay_lease}, each
 * with a fencing token from {@code outbox_fence_seq}. Every claim and every commit checks the token
 * in the same transaction, so an instance that lost a lease (paused, cut off) cannot complete
 * anything on it: its work is rolled back and it steps down, saying so in the log.
 *
 * <pre>{@code
 * try (PollingRelay relay = PollingRelay.builder()
 *         .dataSource(pool)                       // or .jdbcUrl(url).user(u).password(Secret.of(p))
 *         .bootstrapServers("kafka:9092")
 *         .build()) {
 *     relay.start();
 *     ...                                         // close() finishes the batch in flight, releases leases
 * }
 * }</pre>
 *
 * <p>Thread-safe. {@link #start()} once; {@link #close()} is idempotent.
 */
public final class PollingRelay implements Relay {

    private static final Logger log = LoggerFactory.getLogger(PollingRelay.class);

    private final PollerSettings settings;
    private final DataSource dataSource;
    private final HikariDataSource ownedPool;
    private final MeterRegistry registry;
    private final Function<Map<String, Object>, Producer<byte[], byte[]>> producerFactory;
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
    /** The claim loops, each over its share of the held partitions ({@link PollerOptions#CLAIM_LOOPS}), and their threads. */
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

    private PollingRelay(Builder b, PollerSettings settings, DataSource dataSource, HikariDataSource ownedPool) {
        this.settings = settings;
        this.dataSource = dataSource;
        this.ownedPool = ownedPool;
        this.registry = b.meterRegistry != null ? b.meterRegistry : new SimpleMeterRegistry();
        this.producerFactory = b.producerFactory != null ? b.producerFactory : KafkaProducer::new;
        this.sql = new PollerSql(settings.schema(), settings.partitions(), settings.afterPublish(), settings.parkPolicy());
    }

    public static Builder builder() {
        return new Builder();
    }

    /**
     * The Kafka producer configuration in effect: the relay's defaults, then the overrides. It may
     * hold secrets (SASL); print values through {@link Secret#printable}.
     */
    public Map<String, Object> producerConfig() {
        return settings.producerConfig();
    }

    /** This instance's id (the lease holder name). */
    public String instanceId() {
        return settings.instanceId();
    }

    /**
     * Waits for the database (up to {@code startTimeout}; {@link #health()} says what it waits for), checks the
     * schema, joins the relay group, takes a first share of the partitions and starts the claim loop; returns
     * without waiting for Kafka. {@link #close()} from another thread ends the wait.
     *
     * @throws IllegalStateException when the database did not answer within {@code startTimeout}, answered no (a
     *                               wrong password, no CONNECT privilege, a certificate not trusted or not naming
     *                               the host: at once) or lacks the outboxkit schema (V3 or later), when the TLS
     *                               handshake with Kafka fails (a broker certificate its truststore does not
     *                               trust, or one not naming the host), or when called twice
     */
    @Override
    public void start() {
        synchronized (lifecycle) {
            if (closed) {
                throw new IllegalStateException(settings.logPrefix() + " is closed; build a new one");
            }
            if (started) {
                throw new IllegalStateException(settings.logPrefix() + " is already started");
            }
            DatabaseAtStart contact = new DatabaseAtStart(settings.logPrefix(), jdbcUrl(),
                    settings.startTimeout(), () -> stopRequested);
            firstContact = contact;
            contact.await(dataSource);
            PoolerCheck.requireSessionPerConnection(dataSource, settings.logPrefix(), jdbcUrl());
            checkSchema();
            warnIfPoolTooSmall();
            KafkaReachability.refuseUntrustedBroker(settings.producerConfig(), settings.logPrefix());
            List<Waker> wakers = new ArrayList<>();
            for (int i = 0; i < settings.claimLoops(); i++) {
                wakers.add(new Waker());
            }
            Waker everyLoop = Waker.all(wakers);
            RelayMetrics metrics = new RelayMetrics(registry, () -> leases == null ? 0 : leases.ownership().size());
            kafkaWrites = metrics.kafkaWrites;
            leases = new LeaseManager(dataSource, sql, settings, metrics, everyLoop::wake);
            List<ClaimLoop> loops = new ArrayList<>();
            for (int i = 0; i < settings.claimLoops(); i++) {
                loops.add(new ClaimLoop(settings, dataSource, sql, leases,
                        () -> producerFactory.apply(settings.producerConfig()), metrics, wakers.get(i), sliceIndex, i));
            }
            claimLoops = List.copyOf(loops);
            BacklogProbe probe = new BacklogProbe(dataSource, sql, metrics);

            leases.heartbeat();
            heartbeat = Executors.newSingleThreadScheduledExecutor(daemon("outbox-poll-leases"));
            long beat = settings.heartbeatInterval().toMillis();
            heartbeat.scheduleWithFixedDelay(leases::heartbeat, beat, beat, TimeUnit.MILLISECONDS);
            watcher = daemon("outbox-poll-watch").newThread(leases::watch);
            watcher.start();
            probes = Executors.newSingleThreadScheduledExecutor(daemon("outbox-poll-metrics"));
            probes.scheduleWithFixedDelay(probe::age, 0, 2, TimeUnit.SECONDS);
            probes.scheduleWithFixedDelay(probe::count, 0, 10, TimeUnit.SECONDS);

            kafka = new KafkaReachability(settings.producerConfig(), settings.logPrefix(), "outbox-poll-kafka-probe", metrics,
                    settings.route());
            kafka.start();

            List<Thread> threads = new ArrayList<>();
            for (int i = 0; i < claimLoops.size(); i++) {
                threads.add(new Thread(claimLoops.get(i), "outbox-poll-relay" + ClaimLoop.threadSuffix(settings, i)));
            }
            claimLoopThreads = List.copyOf(threads);
            claimLoopThreads.forEach(Thread::start);
            if (settings.listenNotify()) {
                warnIfTriggerMissing();
                listener = new NotifyListener(dataSource, settings.schema(), settings.logPrefix(), everyLoop);
                listenerThread = daemon("outbox-poll-listen").newThread(listener);
                listenerThread.start();
            }
            started = true;
            log.info("{} started: schema {}, {} partitions, {} claim loop{}, batch {}, lease {}, after publish {}, "
                            + "park policy {}, listen/notify {}, pipelined claims {}, holding {}", settings.logPrefix(),
                    settings.schema(), settings.partitions(), settings.claimLoops(), settings.claimLoops() == 1 ? "" : "s",
                    settings.batchSize(), settings.timing().lease(), settings.afterPublish(),
                    settings.parkPolicy(), settings.listenNotify() ? "on" : "off",
                    !settings.pipelineClaims() ? "off" : sliceIndex ? "on (alternate slices)" : "on", leases.ownership());
        }
    }

    /**
     * Connections the relay needs from a pool it is given: per claim loop 3 (its batch in flight, the next claim, the
     * commit of the batch before), then the heartbeat, the probes and the liveness lock, and the listener with listenNotify.
     */
    static int connectionsNeeded(int claimLoops, boolean listenNotify) {
        return 3 * claimLoops + (listenNotify ? 4 : 3);
    }

    private void warnIfPoolTooSmall() {
        int needed = connectionsNeeded(settings.claimLoops(), settings.listenNotify());
        if (ownedPool == null && dataSource instanceof com.zaxxer.hikari.HikariDataSource given
                && given.getMaximumPoolSize() < needed) {
            log.warn("{}: the pool it was given ({}) allows {} connections; the relay needs {} (one held for "
                            + "its life by its liveness lock), so its claims may wait for connections. Raise "
                            + "maximumPoolSize to at least {} plus what the application itself uses", settings.logPrefix(),
                    given.getPoolName(), given.getMaximumPoolSize(), needed, needed);
        }
    }

    private void checkSchema() {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(sql.tablesPresent())) {
            // Grants first (without USAGE on the schema its tables cannot even be looked up): exactly
            // relay-poller/README.md, "Least privilege", what a batch needs in either afterPublish mode.
            RoleGrants.pollingRelay(settings.schema()).require(c, settings.logPrefix());
            String[] tables = {OutboxTables.OUTBOX_EVENT, OutboxTables.DEAD_LETTER, OutboxTables.RELAY_LEASE,
                    OutboxTables.RELAY_MEMBER};
            for (int i = 0; i < tables.length; i++) {
                ps.setString(i + 1, Identifiers.qualified(settings.schema(), tables[i]));
            }
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                for (int i = 0; i < tables.length; i++) {
                    if (!rs.getBoolean(i + 1)) {
                        throw new IllegalStateException("schema \"" + settings.schema() + "\" has no " + tables[i]
                                + " table: apply the outboxkit schema (version 3 or later) first, with 'outbox migrate' "
                                + "or Migrations.migrate(dataSource, \"" + settings.schema() + "\")");
                    }
                }
            }
            if (settings.afterPublish() == AfterPublish.MARK) {
                requireUnpublishedIndex(c);
            }
            boolean slicesFit = settings.pipelineClaims() && settings.afterPublish() == AfterPublish.DELETE;
            sliceIndex = slicesFit && present(c, sql.sliceIndexPresent());
            if (slicesFit && !sliceIndex) {
                log.info("{}: pipelineClaims is on without the slice indexes, so each claim steps over the rows"
                        + " of the batch in flight; to claim alternate slices instead, create them as the schema owner: {}",
                        settings.logPrefix(), String.join("; ", PollerSql.sliceIndexDdl(settings.schema())));
            }
            if (!binaryColumnsPresent(c)) {
                log.warn("{}: schema \"{}\" is older than version 10 (no binary payloads): the relay uses the"
                                + " version-9 statements until it is restarted after 'outbox migrate'", settings.logPrefix(),
                        settings.schema());
                sql = new PollerSql(settings.schema(), settings.partitions(), settings.afterPublish(), settings.parkPolicy(),
                        false);
            }
        } catch (SQLException e) {
            throw new IllegalStateException(settings.logPrefix() + " cannot reach the database: "
                    + OperatorActions.database(e, jdbcUrl()) + " (check the JDBC URL, credentials and network)", e);
        }
    }

    /** The URL of the relay's pool (for messages: host, port, database and CA file only), null when not known. */
    private String jdbcUrl() {
        return dataSource instanceof HikariDataSource h ? h.getJdbcUrl() : null;
    }

    /** A yes/no catalog check whose one parameter is outbox_event. */
    private boolean present(Connection c, String check) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(check)) {
            ps.setString(1, Identifiers.qualified(settings.schema(), OutboxTables.OUTBOX_EVENT));
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
        String table = Identifiers.qualified(settings.schema(), OutboxTables.OUTBOX_EVENT);
        try (PreparedStatement ps = c.prepareStatement(sql.unpublishedIndexPresent())) {
            ps.setString(1, table);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                if (!rs.getBoolean(1)) {
                    throw new IllegalStateException(settings.logPrefix() + ": afterPublish MARK keeps "
                            + "published rows and needs an index on the unpublished ones, which " + table + " lacks. "
                            + "Create it as the schema owner: CREATE INDEX CONCURRENTLY outbox_event_unpublished ON "
                            + table + " (seq) WHERE published_at IS NULL");
                }
            }
        }
    }

    private void warnIfTriggerMissing() {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(sql.notifyTriggerPresent())) {
            ps.setString(1, Identifiers.qualified(settings.schema(), OutboxTables.OUTBOX_EVENT));
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                if (!rs.getBoolean(1)) {
                    log.warn("{}: listenNotify is on but outbox_event has no outbox_event_notify trigger, so no "
                                    + "notification will come and the relay falls back to polling (maxPollDelay {}). Attach it: "
                                    + "CREATE TRIGGER outbox_event_notify AFTER INSERT ON {} FOR EACH STATEMENT EXECUTE "
                                    + "FUNCTION {}()", settings.logPrefix(), settings.maxPollDelay(),
                            Identifiers.qualified(settings.schema(), OutboxTables.OUTBOX_EVENT),
                            Identifiers.qualified(settings.schema(), "outbox_event_notify"));
                }
            }
        } catch (SQLException e) {
            log.warn("{}: could not check for the outbox_event_notify trigger: {}", settings.logPrefix(), e.getMessage());
        }
    }

    /**
     * Live: every claim loop and the heartbeat run. Ready: the last heartbeat reached the database
     * recently (5 s, or the lease if that is shorter), Kafka accepts the relay's writes (it answers the reachability
     * probe, waiting records are acknowledged: {@link KafkaWrites}; a batch whose records it refused counts until a
     * batch passes, one whose records it only did not answer in time until it acknowledges a record again), and the instance
     * either holds partitions or stands by (all partitions are held by others).
     */
    @Override
    public Health health() {
        if (!started) {
            DatabaseAtStart contact = firstContact;
            String waiting = contact == null || closed ? null : contact.status();
            return new Health(!closed, false, settings.logPrefix()
                    + (closed ? ": closed" : waiting != null ? ": " + waiting : ": not started"));
        }
        if (closed) {
            return new Health(false, false, settings.logPrefix() + ": closed");
        }
        // live only while every claim loop runs: a dead loop's partitions would wait for ever
        List<String> dead = new ArrayList<>();
        for (Thread t : claimLoopThreads) {
            if (!t.isAlive()) {
                dead.add(t.getName());
            }
        }
        boolean live = dead.isEmpty() && !heartbeat.isShutdown();
        long now = System.nanoTime();
        String dbProblem = DatabaseSilence.problem(leases.lastHeartbeatNanos(), leases.lastError(), settings.timing().databaseSilence());
        ClaimLoop dbTrouble = null;
        ClaimLoop kafkaTrouble = null;
        long kafkaTroubleSince = 0;
        int lastBatches = 0;
        for (ClaimLoop loop : claimLoops) {
            if (dbTrouble == null && loop.databaseTroubleSinceNanos() != 0) {
                dbTrouble = loop;
            }
            long since = loop.kafkaTroubleSinceNanos();
            // A batch Kafka did not take whole counts until a batch passes when Kafka refused records of it (an error,
            // retriable or one that needs an operator); when its records were only not answered in time, until Kafka
            // acknowledges a record again (a slow careful retry whose records are acknowledged is no Kafka trouble;
            // the shared write rule judges any silence).
            boolean troubled = since != 0 && (loop.kafkaRefused() || !kafkaWrites.acknowledgedSince(since));
            if (troubled && (kafkaTrouble == null || since - kafkaTroubleSince < 0)) {
                kafkaTrouble = loop; // the loop in trouble for longest
                kafkaTroubleSince = since;
            }
            lastBatches += loop.lastBatchSize();
        }
        boolean dbOk = dbProblem == null && dbTrouble == null;
        boolean kafkaOk = kafkaTrouble == null;
        Ownership own = leases.ownership();
        StringBuilder detail = new StringBuilder(settings.logPrefix()).append(": holding ")
                .append(own).append(" (").append(leases.liveMembers()).append(" live instance")
                .append(leases.liveMembers() == 1 ? "" : "s").append("), last batch").append(claimLoops.size() == 1 ? " " : "es ")
                .append(lastBatches).append(" rows");
        if (!dead.isEmpty()) {
            detail.append("; claim loop thread ").append(String.join(", ", dead))
                    .append(" ended (see the log for its error): not live");
        }
        if (!dbOk) {
            detail.append("; ").append(dbProblem != null ? dbProblem : "database: " + dbTrouble.lastError());
        }
        if (!kafkaOk) {
            detail.append("; Kafka failing for ").append((now - kafkaTroubleSince) / 1_000_000_000L)
                    .append(" s: ").append(kafkaTrouble.lastError());
        }
        if (leases.partitionMismatch()) {
            detail.append("; partition count in dispute with other instances");
        }
        boolean ready = live && dbOk && kafkaOk && !leases.partitionMismatch();
        return kafka.applyTo(new Health(live, ready, detail.toString()));
    }

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
            long stopBegan = System.nanoTime();
            claimLoops.forEach(ClaimLoop::stop);
            if (listener != null) {
                listener.stop();
            }
            // every loop finishes its batch in flight at the same time: one stop wait for all of them
            long stopBy = stopBegan + settings.stopWait().toNanos();
            for (Thread t : claimLoopThreads) {
                join(t, Duration.ofNanos(Math.max(1_000_000, stopBy - System.nanoTime())));
            }
            long loopsEnded = System.nanoTime();
            // the last batch is committed: its partitions go to the others first, everything else after
            leases.leave();
            long now = System.nanoTime();
            log.info("{}: handed over {} ms after the stop began (the batch in flight: {} ms, then the release: {} ms)",
                    settings.logPrefix(), (now - stopBegan) / 1_000_000, (loopsEnded - stopBegan) / 1_000_000,
                    (now - loopsEnded) / 1_000_000);
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
                    log.warn("{}: closing the Kafka producer failed: {}", settings.logPrefix(), e.getMessage());
                }
            }
            if (ownedPool != null) {
                ownedPool.close();
            }
            log.info("{} stopped", settings.logPrefix());
        }
    }

    private void join(Thread t, Duration timeout) {
        try {
            t.join(timeout.toMillis());
            if (t.isAlive()) {
                log.warn("{}: {} did not stop within {}; interrupting it (its batch is rolled back and published "
                        + "again later)", settings.logPrefix(), t.getName(), timeout);
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

    private java.util.concurrent.ThreadFactory daemon(String name) {
        return r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        };
    }

    /**
     * Configuration of a {@link PollingRelay}. Every setting has a default except the database
     * ({@link #dataSource} or {@link #jdbcUrl}) and {@link #bootstrapServers}. {@link #build()}
     * validates everything and names the setting it refuses. The database, Kafka, route, instance, lease and
     * clock settings are shared with the CDC relay ({@link RelayBuilder}); for this relay {@code jdbcUrl} is the
     * alternative to {@link #dataSource}: the relay then opens (and closes) its own small HikariCP pool, with
     * {@code user} (required unless the URL has {@code user=}) and {@code password}. Each option setter sets the
     * {@link PollerOptions} or {@link dev.outboxkit.relay.RelayOptions} definition of the same name, whose description is its one doc.
     */
    public static final class Builder extends RelayBuilder<Builder> {

        private DataSource dataSource;
        private MeterRegistry meterRegistry;
        private Function<Map<String, Object>, Producer<byte[], byte[]>> producerFactory;

        private Builder() {
        }

        @Override
        protected List<RelayOption<?>> ownOptions() {
            return PollerOptions.all();
        }

        /**
         * A pool the caller owns (and closes after the relay). It needs 3 connections per claim loop
         * ({@link PollerOptions#CLAIM_LOOPS}) plus 3 (4 with listenNotify): 9 (10) with the default two loops, 6 (7)
         * with one partition, one of them held for the relay's life by its liveness lock.
         */
        public Builder dataSource(DataSource dataSource) {
            this.dataSource = dataSource;
            return this;
        }

        /** Sets {@link PollerOptions#PARTITIONS}. */
        public Builder partitions(int partitions) {
            return set(PollerOptions.PARTITIONS, partitions);
        }

        /** Sets {@link PollerOptions#BATCH_SIZE}. */
        public Builder batchSize(int batchSize) {
            return set(PollerOptions.BATCH_SIZE, batchSize);
        }

        /** Sets {@link PollerOptions#LISTEN_NOTIFY}. */
        public Builder listenNotify(boolean listenNotify) {
            return set(PollerOptions.LISTEN_NOTIFY, listenNotify);
        }

        /** Sets {@link PollerOptions#AFTER_PUBLISH}. */
        public Builder afterPublish(AfterPublish afterPublish) {
            return set(PollerOptions.AFTER_PUBLISH, afterPublish);
        }

        /** Sets {@link PollerOptions#PARK_POLICY}. */
        public Builder parkPolicy(ParkPolicy parkPolicy) {
            return set(PollerOptions.PARK_POLICY, parkPolicy);
        }

        /** Sets {@link PollerOptions#MAX_POLL_DELAY}. */
        public Builder maxPollDelay(Duration maxPollDelay) {
            return set(PollerOptions.MAX_POLL_DELAY, maxPollDelay);
        }

        /** Sets {@link PollerOptions#CLAIM_LOOPS}. */
        public Builder claimLoops(int claimLoops) {
            return set(PollerOptions.CLAIM_LOOPS, claimLoops);
        }

        /** Sets {@link PollerOptions#PIPELINE_CLAIMS}. */
        public Builder pipelineClaims(boolean pipelineClaims) {
            return set(PollerOptions.PIPELINE_CLAIMS, pipelineClaims);
        }

        /** Where the {@code outbox.relay.*} meters go. Default a private {@code SimpleMeterRegistry}. */
        public Builder meterRegistry(MeterRegistry meterRegistry) {
            this.meterRegistry = meterRegistry;
            return this;
        }

        /** Tests: a producer of their own (for example Kafka's MockProducer). */
        Builder producerFactory(Function<Map<String, Object>, Producer<byte[], byte[]>> producerFactory) {
            this.producerFactory = producerFactory;
            return this;
        }

        /**
         * Validates and builds (nothing connects yet; {@link PollingRelay#start()} does).
         *
         * @throws IllegalArgumentException naming the setting that is missing or out of range
         * @throws dev.outboxkit.relay.UnsafeConfigurationException for an unsafe producer override
         */
        public PollingRelay build() {
            if ((dataSource == null) == (jdbcUrl == null)) {
                throw new IllegalArgumentException(dataSource == null
                        ? "set either dataSource or jdbcUrl (with user and password)"
                        : "set dataSource or jdbcUrl, not both");
            }
            checkShared();
            DatabaseLogin login = jdbcUrl == null ? null
                    : DatabaseLogin.resolve(jdbcUrl, user, password).requireUser("user(…)", "jdbcUrl");
            if (bootstrapServers == null || bootstrapServers.isBlank()) {
                throw new IllegalArgumentException("bootstrapServers must be set (for example localhost:9092)");
            }
            PollerSettings settings = PollerSettings.of(this::get, instanceIdOrDefault(), this::producerConfig,
                    routeWithFormat(), clock, Tracing.of(openTelemetry));
            HikariDataSource pool = null;
            DataSource ds = dataSource;
            if (ds == null) {
                pool = ConnectionPools.open(login, "outbox-poll-" + settings.instanceId(),
                        connectionsNeeded(settings.claimLoops(), settings.listenNotify()) + 1, "outboxkit-poll");
                ds = pool;
            }
            return new PollingRelay(this, settings, ds, pool);
        }
    }
}
