package dev.outboxkit.relay.cdc.internal;

import com.zaxxer.hikari.HikariDataSource;
import dev.outboxkit.core.FencedException;
import dev.outboxkit.core.KafkaRecords;
import dev.outboxkit.core.Relay;
import dev.outboxkit.core.internal.ConnectionPools;
import dev.outboxkit.relay.cdc.CdcStartupException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Not API: public for {@code dev.outboxkit.relay.cdc.CdcRelay}.
 *
 * <p>The relay's life: stand by for the lease {@code cdc/<slot>}, and while holding it run one
 * {@link Session} after another (start-up checks, drain, Debezium) until closed, fenced out or failed.
 */
public final class Supervisor implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(Supervisor.class);

    /** Where the relay stands. */
    public enum Role { NEW, STANDBY, ACTIVE, STOPPED, FAILED }

    /** A WAL backlog this large (and events this old) makes the relay drain the table instead (default mode). */
    static final long CATCH_UP_LAG_BYTES = 64L << 20;
    static final Duration CATCH_UP_AGE = Duration.ofSeconds(10);
    static final Duration CATCH_UP_MIN_STREAMING = Duration.ofSeconds(15);

    private final CdcSettings settings;
    private final JdbcTarget target;
    private final CdcMetrics metrics;
    private final Function<Map<String, Object>, Producer<byte[], byte[]>> producers;
    private HikariDataSource pool;
    private Producer<byte[], byte[]> producer;
    private LeaseKeeper lease;
    private SlotGuard guard;
    private StateTables state;
    private ScheduledExecutorService scheduler;
    private Thread loop;
    private volatile Role role = Role.NEW;
    private volatile String detail = "not started";
    private volatile boolean closing;
    private volatile Session session;
    private volatile boolean standbyHealthy;
    private volatile RuntimeException failure;
    /** The slot had a walsender at the monitor's last look (Debezium is really streaming, not just started). */
    private volatile boolean slotStreamed;
    private volatile String lastFailure;
    private volatile long lastFailureNanos;

    public Supervisor(CdcSettings settings) {
        this(settings, KafkaProducer::new);
    }

    /** @param producers makes the relay's producer from the checked configuration (tests pass a MockProducer) */
    public Supervisor(CdcSettings settings, Function<Map<String, Object>, Producer<byte[], byte[]>> producers) {
        this.settings = settings;
        this.producers = producers;
        this.target = JdbcTarget.parse(settings.jdbcUrl());
        this.metrics = new CdcMetrics(settings.meterRegistry(), settings.slotName());
    }

    public Role role() {
        return role;
    }

    /** The fatal error after which the relay stopped ({@link Role#FAILED}), else null. */
    public RuntimeException failure() {
        return failure;
    }

    public synchronized void start() {
        if (role != Role.NEW) {
            throw new IllegalStateException("the relay was already started (" + role + "); build a new one");
        }
        pool = ConnectionPools.open(settings.login(),
                "outboxkit-cdc-" + settings.slotName(), 5, SlotGuard.applicationName(settings, settings.instanceId()));
        lease = new LeaseKeeper(pool, settings);
        guard = new SlotGuard(settings);
        state = new StateTables(pool, settings, lease);
        producer = producers.apply(settings.producerConfig());
        scheduler = Executors.newScheduledThreadPool(1, r -> {
            Thread t = new Thread(r, "outboxkit-cdc-monitor-" + settings.slotName());
            t.setDaemon(true);
            return t;
        });
        log.info("starting WAL relay: {}", settings.describe());
        Session first = null;
        try {
            Optional<LeaseKeeper.Acquired> acquired = lease.tryAcquire();
            standbyHealthy = true;
            if (acquired.isPresent()) {
                first = new Session(acquired.get().fence(), acquired.get().previousHolder());
                first.prepare();
            } else {
                role = Role.STANDBY;
                detail = standbyDetail();
                log.info("standing by: {}", detail);
            }
        } catch (CdcStartupException e) {
            role = Role.FAILED;
            failure = e;
            detail = e.getMessage();
            if (first != null) {
                first.releaseLease();
            }
            shutdownResources();
            throw e;
        } catch (SQLException e) {
            role = Role.FAILED;
            detail = "cannot reach the database: " + e.getMessage();
            shutdownResources();
            throw new IllegalStateException("the WAL relay cannot reach " + target.host() + ":" + target.port() + "/"
                    + target.database() + " (" + e.getMessage() + "); check jdbcUrl, user and password", e);
        }
        scheduler.scheduleWithFixedDelay(this::monitor, 0, 2, TimeUnit.SECONDS);
        Session prepared = first;
        loop = new Thread(() -> run(prepared), "outboxkit-cdc-" + settings.slotName());
        loop.setDaemon(true);
        loop.start();
    }

    private void run(Session prepared) {
        Session next = prepared;
        long backoff = 500;
        while (!closing) {
            try {
                if (next == null) {
                    Optional<LeaseKeeper.Acquired> acquired = lease.tryAcquire();
                    standbyHealthy = true;
                    if (acquired.isEmpty()) {
                        role = Role.STANDBY;
                        metrics.active.set(0);
                        detail = standbyDetail();
                        sleep(standbyPoll());
                        continue;
                    }
                    log.info("acquired lease {} with fencing token {} (previous holder {}): taking over slot {}",
                            lease.leaseKey(), acquired.get().fence(), acquired.get().previousHolder(), settings.slotName());
                    next = new Session(acquired.get().fence(), acquired.get().previousHolder());
                    next.prepare();
                }
                session = next;
                role = Role.ACTIVE;
                metrics.active.set(1);
                Session.End end = next.run();
                metrics.active.set(0);
                switch (end) {
                    case CLOSED -> {
                        next.releaseLease();
                        role = Role.STOPPED;
                        detail = "stopped";
                        return;
                    }
                    case CATCH_UP -> {
                        long fence = next.fence;
                        next = null;
                        if (!closing && lease.renew(fence)) {
                            next = new Session(fence, null);
                            next.prepare();
                        }
                    }
                    case LOST -> {
                        log.warn("lost lease {} (another instance took over or it could not be renewed): standing by",
                                lease.leaseKey());
                        next = null;
                        role = Role.STANDBY;
                    }
                    case FAILED -> {
                        RuntimeException error = next.error;
                        if (error instanceof CdcStartupException) {
                            throw error;
                        }
                        long lastAck = metrics.lastAckNanos.get();
                        if (lastAck != 0 && lastAck - next.startedNanos > 0) {
                            backoff = 500; // the session made progress: a new failure, not the same one again
                        }
                        log.warn("streaming failed ({}); restarting from the last stored offset in {} ms",
                                error == null ? "engine stopped" : error.toString(), backoff);
                        detail = "restarting after: " + (error == null ? "engine stopped" : error.getMessage());
                        lastFailure = detail;
                        lastFailureNanos = System.nanoTime();
                        long fence = next.fence;
                        sleep(backoff);
                        backoff = Math.min(backoff * 2, 30_000);
                        next = null;
                        if (!closing && lease.renew(fence)) {
                            next = new Session(fence, null);
                            next.prepare();
                        }
                    }
                    default -> throw new IllegalStateException("unknown end " + end);
                }
                if (end != Session.End.FAILED) {
                    backoff = 500;
                }
            } catch (CdcStartupException e) {
                log.error("the WAL relay stopped: {}", e.getMessage());
                failure = e;
                role = Role.FAILED;
                detail = e.getMessage();
                metrics.active.set(0);
                if (next != null) {
                    next.releaseLease();
                }
                return;
            } catch (SQLException | RuntimeException e) {
                standbyHealthy = false;
                detail = "database unreachable: " + e.getMessage();
                log.warn("lease handling failed ({}); retrying in {} ms", e.toString(), backoff);
                next = null;
                sleep(backoff);
                backoff = Math.min(backoff * 2, 30_000);
            }
        }
        role = Role.STOPPED;
    }

    private Duration standbyPoll() {
        long millis = Math.max(200, Math.min(1_000, settings.leaseDuration().toMillis() / 5));
        return Duration.ofMillis(millis);
    }

    private String standbyDetail() {
        try {
            LeaseKeeper.Holder holder = lease.holder();
            return "standby: lease " + lease.leaseKey() + (holder == null ? " is free"
                    : " held by " + holder.holder() + " (token " + holder.fence() + (holder.live() ? ")" : ", expired)"));
        } catch (SQLException e) {
            return "standby: cannot read lease " + lease.leaseKey() + ": " + e.getMessage();
        }
    }

    private void sleep(Duration d) {
        sleep(d.toMillis());
    }

    private void sleep(long millis) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        while (!closing && System.nanoTime() < deadline) {
            try {
                TimeUnit.MILLISECONDS.sleep(Math.min(50, millis));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private void monitor() {
        try (Connection c = pool.getConnection()) {
            SlotGuard.SlotState slot = guard.slot(c);
            if (slot == null) {
                slotStreamed = false;
                metrics.walStatus.set(CdcMetrics.WAL_NO_SLOT);
                metrics.slotLagBytes.set(0);
                metrics.retainedWalBytes.set(0);
            } else {
                slotStreamed = slot.active();
                metrics.walStatus.set(CdcMetrics.walStatusCode(slot.walStatus()));
                metrics.slotLagBytes.set(slot.lagBytes());
                metrics.retainedWalBytes.set(slot.retainedBytes());
            }
            Session s = session;
            if (role == Role.ACTIVE && s != null && s.enginePolling() && (slot == null || slot.invalidated())) {
                s.fail(new CdcStartupException("replication slot " + settings.slotName() + (slot == null
                        ? " was dropped while the relay streamed from it" : " was invalidated (wal_status " + slot.walStatus() + ")")
                        + ". " + guard.recoveryAdvice()));
            }
            if (settings.deleteAfterPublish()) {
                try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT created_at FROM "
                        + settings.outboxTable() + " WHERE published_at IS NULL ORDER BY seq LIMIT 1")) {
                    if (rs.next()) {
                        OffsetDateTime at = rs.getObject(1, OffsetDateTime.class);
                        metrics.oldestUnackedMicros.set(at.toEpochSecond() * 1_000_000 + at.getNano() / 1000);
                    } else {
                        metrics.oldestUnackedMicros.set(0);
                    }
                }
            }
        } catch (SQLException | RuntimeException e) {
            log.debug("slot metrics could not be read: {}", e.toString());
        }
    }

    /**
     * Not ready, though streaming, when events wait and Kafka acknowledged nothing for {@link #stallAfter()}: a
     * producer stuck on a partition, or an engine that stopped handing over rows, must not look healthy.
     */
    private String stall(Session s) {
        long oldest = metrics.oldestUnackedMicros.get();
        if (oldest <= 0) {
            return null;
        }
        long limit = stallAfter().toSeconds();
        long waited = (System.currentTimeMillis() * 1000 - oldest) / 1_000_000;
        long quiet = (System.nanoTime() - Math.max(metrics.lastAckNanos.get(), s.startedNanos)) / 1_000_000_000L;
        return waited >= limit && quiet >= limit
                ? "stalled: the oldest event has waited " + waited + " s and Kafka acknowledged nothing for " + quiet + " s"
                : null;
    }

    /** Twice the lease (at least 10 s): far beyond a healthy relay's gap between acknowledgements under load. */
    Duration stallAfter() {
        Duration twice = settings.leaseDuration().multipliedBy(2);
        return twice.compareTo(Duration.ofSeconds(10)) < 0 ? Duration.ofSeconds(10) : twice;
    }

    /** The last session's failure, until Kafka acknowledges something after it (health shows it while not streaming). */
    private String failureSinceLastAck() {
        String f = lastFailure;
        return f != null && metrics.lastAckNanos.get() - lastFailureNanos <= 0 ? "; " + f : "";
    }

    public Relay.Health health() {
        Role r = role;
        return switch (r) {
            case NEW -> new Relay.Health(true, false, "not started");
            case STANDBY -> new Relay.Health(true, standbyHealthy, detail);
            case ACTIVE -> {
                Session s = session;
                boolean streaming = s != null && s.streaming();
                String stall = streaming ? stall(s) : null;
                yield new Relay.Health(true, streaming && stall == null, streaming
                        ? "active: " + (stall != null ? stall + "; " : "") + "streaming slot " + settings.slotName()
                        + " (lease token " + s.fence + ", slot lag " + metrics.slotLagBytes.get() + " bytes)"
                        : "active: " + (s == null ? "starting" : s.phase) + failureSinceLastAck());
            }
            case STOPPED -> new Relay.Health(false, false, "stopped");
            case FAILED -> new Relay.Health(false, false, "failed: " + detail);
        };
    }

    @Override
    public void close() {
        synchronized (this) {
            if (role == Role.NEW) {
                role = Role.STOPPED;
                return;
            }
            closing = true;
        }
        Thread t = loop;
        if (t != null) {
            try {
                t.join(settings.shutdownTimeout().toMillis() + 90_000);
                if (t.isAlive()) {
                    log.warn("the relay did not stop in time; interrupting it");
                    t.interrupt();
                    t.join(10_000);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (role != Role.FAILED) {
            role = Role.STOPPED;
        }
        shutdownResources();
        log.info("WAL relay on slot {} stopped", settings.slotName());
    }

    private void shutdownResources() {
        if (scheduler != null) {
            scheduler.shutdownNow();
        }
        if (producer != null) {
            producer.close(Duration.ofSeconds(30));
        }
        if (pool != null) {
            pool.close();
        }
    }

    /** One stretch of holding the lease: checks, drain, Debezium, until it ends. */
    private final class Session {

        enum End { CLOSED, LOST, FAILED, CATCH_UP }

        final long fence;
        private final String previousHolder;
        volatile long lastRenewNanos = System.nanoTime();
        volatile boolean lost;
        volatile RuntimeException error;
        volatile String phase = "checking slot and publication";
        private boolean firstStart;
        private ScheduledFuture<?> renewer;
        private volatile EngineRunner engine;

        final long startedNanos = System.nanoTime();

        Session(long fence, String previousHolder) {
            this.fence = fence;
            this.previousHolder = previousHolder;
        }

        boolean enginePolling() {
            EngineRunner e = engine;
            return e != null && e.polling();
        }

        boolean streaming() {
            EngineRunner e = engine;
            return e != null && e.polling() && !lost && slotStreamed;
        }

        boolean authority() {
            return !lost && System.nanoTime() - lastRenewNanos < settings.leaseDuration().toNanos();
        }

        void fail(RuntimeException e) {
            if (error == null) {
                error = e;
            }
        }

        /** Start-up checks under the lease; throws {@link CdcStartupException} when starting could skip events. */
        void prepare() throws SQLException {
            long period = Math.max(100, settings.leaseDuration().toMillis() / 3);
            renewer = scheduler.scheduleWithFixedDelay(this::renew, period, period, TimeUnit.MILLISECONDS);
            try (Connection c = pool.getConnection()) {
                c.setAutoCommit(true);
                guard.requireSchema(c);
                guard.terminateSessionsOf(c, previousHolder);
                guard.ensurePublication(c);
                guard.terminateActiveSender(c);
                firstStart = verifySlot(c, true);
            } catch (SQLException | RuntimeException e) {
                renewer.cancel(false);
                throw e;
            }
        }

        private void renew() {
            long attempt = System.nanoTime();
            try {
                if (lease.renew(fence)) {
                    lastRenewNanos = attempt;
                } else {
                    lost = true;
                }
            } catch (SQLException | RuntimeException e) {
                log.warn("could not renew lease {}: {}", lease.leaseKey(), e.toString());
            }
        }

        /**
         * The slot must exist, be a usable pgoutput slot and not be ahead of the stored offset. The first
         * time (no record of the slot yet) it is created or adopted. Returns true on a first start.
         */
        boolean verifySlot(Connection c, boolean mayCreate) throws SQLException {
            StateTables.SlotRecord record = state.slotRecord(c);
            SlotGuard.SlotState slot = guard.slot(c);
            StateTables.StoredOffset stored = state.storedOffset(c);
            String name = settings.slotName();
            if (record == null) {
                if (stored != null) {
                    throw new CdcStartupException("offsets are stored for slot " + name + " but " + settings.table("outbox_cdc_slot")
                            + " has no record of it: the relay's state is incomplete. " + guard.recoveryAdvice());
                }
                if (!mayCreate) {
                    throw new CdcStartupException("slot " + name + " has no record in " + settings.table("outbox_cdc_slot"));
                }
                long baseLsn;
                if (slot == null) {
                    baseLsn = guard.createSlot(c);
                } else {
                    guard.requireUsable(c, slot);
                    baseLsn = slot.confirmedFlush();
                    log.info("adopting existing replication slot {} at {}", name, Lsns.format(baseLsn));
                }
                state.recordSlot(c, fence, baseLsn);
                return true;
            }
            if (slot == null) {
                throw new CdcStartupException("replication slot " + name + " is missing, but the relay streamed from it before"
                        + (stored == null ? "" : " (stored offset at " + Lsns.format(stored.flushLsn()) + ")")
                        + ": it was dropped while the relay was down, and the WAL of what was committed meanwhile is gone. "
                        + "The relay refuses to create a new slot at the WAL's end and skip those events. " + guard.recoveryAdvice());
            }
            guard.requireUsable(c, slot);
            // The slot moves only when the relay fast-forwards it (to base_lsn, recorded first) or confirms a
            // stored offset; so it can be at most at the larger of the two. (A stored offset inside the first
            // transaction after a fast-forward may even point before base_lsn: its changes began earlier.)
            long expected = Math.max(record.baseLsn(), stored != null ? stored.flushLsn() : -1);
            if (slot.confirmedFlush() > expected) {
                throw new CdcStartupException("replication slot " + name + " has confirmed WAL up to "
                        + Lsns.format(slot.confirmedFlush()) + " but the relay's stored offset is at " + Lsns.format(expected)
                        + ": someone else advanced or re-created the slot, so events between them may never be streamed. "
                        + guard.recoveryAdvice());
            }
            return !record.drained();
        }

        /** The offset store's check before Debezium reads offsets (also on its own task restarts). */
        void checkBeforeRead() {
            try (Connection c = pool.getConnection()) {
                c.setAutoCommit(true);
                verifySlot(c, false);
            } catch (CdcStartupException e) {
                fail(e);
                throw e;
            } catch (SQLException e) {
                throw new IllegalStateException("cannot check slot " + settings.slotName() + ": " + e.getMessage(), e);
            }
        }

        void onWriteFailure(Throwable e) {
            if (e instanceof FencedException) {
                metrics.fenceRejections.increment();
                lost = true;
                log.warn("offset write refused: {}", e.getMessage());
            } else {
                log.warn("offset write failed (retried at the next flush): {}", e.toString());
            }
        }

        End run() {
            String storeId = null;
            RowSink sink = new RowSink(pool, settings, lease, () -> fence, e -> lost = true, metrics);
            try {
                Publisher publisher = new Publisher(producer, new KafkaRecords(settings.route()), metrics, settings.clock());
                StartupDrain.Result drained = null;
                if (settings.deleteAfterPublish() || firstStart) {
                    phase = "publishing the rows already in " + settings.outboxTable();
                    try (Connection c = pool.getConnection()) {
                        BooleanSupplier keepGoing = () -> !closing && authority();
                        // With the table as the truth, the WAL before the drain's snapshot holds nothing the
                        // drain has not published (or an earlier run had): the slot may skip it.
                        OptionalLong skipTo = settings.deleteAfterPublish()
                                ? StartupDrain.fastForwardPoint(c, Duration.ofSeconds(10), keepGoing) : OptionalLong.empty();
                        drained = new StartupDrain(settings, publisher, sink, 5_000).run(c, keepGoing);
                        state.markDrained(c, fence);
                        if (skipTo.isPresent()) {
                            SlotGuard.SlotState slot = guard.slot(c);
                            if (slot != null && slot.confirmedFlush() < skipTo.getAsLong()) {
                                state.rebase(c, fence, skipTo.getAsLong());
                                guard.advance(c, skipTo.getAsLong());
                            }
                        }
                    } catch (InterruptedException e) {
                        if (closing) {
                            sink.flush(Duration.ofSeconds(30));
                            return End.CLOSED;
                        }
                        return End.LOST;
                    } catch (FencedException e) {
                        return End.LOST;
                    }
                }
                phase = "starting Debezium";
                FlushPolicy policy = new FlushPolicy(settings.offsetFlushInterval());
                StreamHandler handler = new StreamHandler(new ChangeDecoder(settings.schema(), EngineConfig.HEARTBEAT_TOPIC_PREFIX),
                        publisher, sink, metrics, policy, this::authority, drained, !settings.deleteAfterPublish());
                storeId = PostgresOffsetStore.register(new PostgresOffsetStore.Context(state, () -> fence,
                        this::checkBeforeRead, this::onWriteFailure));
                EngineRunner runner = new EngineRunner(EngineConfig.properties(settings, target, storeId), handler, policy,
                        settings.slotName());
                engine = runner;
                runner.start();
                long streamingSince = System.nanoTime();
                while (true) {
                    EngineRunner.Outcome outcome = runner.outcome(Duration.ofMillis(100));
                    if (outcome != null) {
                        runner.close();
                        if (lost) {
                            return End.LOST;
                        }
                        if (closing && handler.stopReached()) {
                            sink.flush(Duration.ofSeconds(30));
                            return End.CLOSED;
                        }
                        fail(outcome.error() instanceof RuntimeException re ? re
                                : new IllegalStateException("Debezium's engine stopped: " + outcome.message(), outcome.error()));
                        return End.FAILED;
                    }
                    if (error != null) {
                        runner.close();
                        return End.FAILED;
                    }
                    if (lost || !authority()) {
                        lost = true;
                        runner.close();
                        return End.LOST;
                    }
                    if (closing) {
                        stopGracefully(handler, runner, true);
                        sink.flush(Duration.ofSeconds(30));
                        return End.CLOSED;
                    }
                    if (catchUpDue(streamingSince)) {
                        log.info("the WAL backlog is {} MB and the oldest unpublished event {} s old: publishing the backlog "
                                + "from the table, then skipping the WAL it covered", metrics.slotLagBytes.get() >> 20,
                                metrics.oldestUnackedMicros.get() == 0 ? 0
                                        : (System.currentTimeMillis() * 1000 - metrics.oldestUnackedMicros.get()) / 1_000_000);
                        stopGracefully(handler, runner, false);
                        sink.flush(Duration.ofSeconds(30));
                        return End.CATCH_UP;
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                fail(new IllegalStateException("interrupted", e));
                return End.FAILED;
            } catch (SQLException | RuntimeException e) {
                fail(e instanceof RuntimeException re ? re : new IllegalStateException(e.getMessage(), e));
                return lost ? End.LOST : End.FAILED;
            } finally {
                engine = null;
                if (storeId != null) {
                    PostgresOffsetStore.unregister(storeId);
                }
                sink.close();
                if (renewer != null) {
                    renewer.cancel(false); // the next session (if any) renews on its own
                }
            }
        }

        /**
         * Debezium is far behind and the table holds the events (deleteAfterPublish): draining the table and
         * fast-forwarding the slot is much faster than decoding the backlog event by event.
         */
        private boolean catchUpDue(long streamingSince) {
            if (!settings.deleteAfterPublish() || System.nanoTime() - streamingSince < CATCH_UP_MIN_STREAMING.toNanos()) {
                return false;
            }
            long oldest = metrics.oldestUnackedMicros.get();
            long ageMicros = oldest == 0 ? 0 : System.currentTimeMillis() * 1000 - oldest;
            return metrics.slotLagBytes.get() > CATCH_UP_LAG_BYTES && ageMicros > CATCH_UP_AGE.toNanos() / 1000;
        }

        private void stopGracefully(StreamHandler handler, EngineRunner runner, boolean marker) throws InterruptedException {
            phase = "stopping";
            handler.requestStop();
            if (marker) {
                try (Connection c = pool.getConnection(); PreparedStatement ps = c.prepareStatement(
                        "INSERT INTO " + settings.table("outbox_cdc_heartbeat") + " (slot_name) VALUES (?)")) {
                    c.setAutoCommit(true);
                    ps.setString(1, settings.slotName());
                    ps.executeUpdate(); // a change after everything committed so far: it closes the open transaction
                } catch (SQLException e) {
                    log.warn("could not write the stop marker ({}); waiting for the next heartbeat instead", e.toString());
                }
            }
            if (!handler.awaitStopped(settings.shutdownTimeout())) {
                log.warn("no transaction boundary reached within {}; events of the transaction in progress may be "
                        + "published again after the restart", settings.shutdownTimeout());
            }
            runner.close();
        }

        void releaseLease() {
            if (renewer != null) {
                renewer.cancel(false);
            }
            try {
                lease.release(fence);
                log.info("released lease {}", lease.leaseKey());
            } catch (SQLException | RuntimeException e) {
                log.warn("could not release lease {} ({}); a standby takes over when it expires", lease.leaseKey(), e.toString());
            }
        }
    }
}
