package dev.outboxkit.relay.cdc.internal;

import com.zaxxer.hikari.HikariDataSource;
import dev.outboxkit.core.FencedException;
import dev.outboxkit.core.OutboxTables;
import dev.outboxkit.core.internal.Flusher;
import dev.outboxkit.core.internal.StopOnFailure;
import dev.outboxkit.core.internal.TracedRecords;
import dev.outboxkit.relay.cdc.CdcStartupException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.OptionalLong;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** One stretch of holding the lease: checks, drain, Debezium, until it ends. */
final class Session {

    private static final Logger log = LoggerFactory.getLogger(Supervisor.class);


    enum End { CLOSED, LOST, FAILED, CATCH_UP }

    /** What a session works with: the supervisor's resources, alive for all its sessions. */
    record Context(CdcSettings settings, JdbcTarget target, CdcMetrics metrics, HikariDataSource pool,
                   StopOnFailure producers, RowAttempts attempts, LeaseKeeper lease, SlotGuard guard, StateTables state,
                   ScheduledExecutorService scheduler, SlotMonitor monitor, BooleanSupplier closing) {
    }

    private final CdcSettings settings;
    private final JdbcTarget target;
    private final CdcMetrics metrics;
    private final HikariDataSource pool;
    private final StopOnFailure producers;
    private final RowAttempts attempts;
    private final LeaseKeeper lease;
    private final SlotGuard guard;
    private final StateTables state;
    private final ScheduledExecutorService scheduler;
    private final SlotMonitor monitor;
    private final BooleanSupplier closing;

    final long fence;
    private final String previousHolder;
    volatile long lastRenewNanos = System.nanoTime();
    volatile boolean lost;
    volatile RuntimeException error;
    volatile String phase = "checking slot and publication";
    private boolean firstStart;
    private ScheduledFuture<?> renewer;
    private volatile EngineRunner engine;
    /** When this session started its engine (System.nanoTime): readiness counts only the slot monitor's later looks. */
    private volatile long engineStartNanos;

    final long startedNanos = System.nanoTime();

    Session(Context context, long fence, String previousHolder) {
        this.settings = context.settings();
        this.target = context.target();
        this.metrics = context.metrics();
        this.pool = context.pool();
        this.producers = context.producers();
        this.attempts = context.attempts();
        this.lease = context.lease();
        this.guard = context.guard();
        this.state = context.state();
        this.scheduler = context.scheduler();
        this.monitor = context.monitor();
        this.closing = context.closing();
        this.fence = fence;
        this.previousHolder = previousHolder;
    }

    boolean enginePolling() {
        EngineRunner e = engine;
        return e != null && e.polling();
    }

    boolean streaming() {
        EngineRunner e = engine;
        return e != null && e.polling() && !lost && monitor.slotStreamedSince(engineStartNanos);
    }

    boolean authority() {
        return !lost && System.nanoTime() - lastRenewNanos < settings.timing().lease().toNanos();
    }

    void fail(RuntimeException e) {
        if (error == null) {
            error = e;
        }
    }

    /** Start-up checks under the lease; throws {@link CdcStartupException} when starting could skip events. */
    void prepare() throws SQLException {
        long period = settings.timing().renewInterval().toMillis();
        renewer = scheduler.scheduleWithFixedDelay(this::renew, period, period, TimeUnit.MILLISECONDS);
        try (Connection c = pool.getConnection()) {
            c.setAutoCommit(true);
            guard.requireSchema(c);
            guard.terminateSessionsOf(c, previousHolder);
            guard.ensurePublication(c);
            guard.endStaleWalsender(c, fence);
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
                throw new CdcStartupException("offsets are stored for slot " + name + " but " + settings.table(OutboxTables.CDC_SLOT)
                        + " has no record of it: the relay's state is incomplete. " + guard.recoveryAdvice());
            }
            if (!mayCreate) {
                throw new CdcStartupException("slot " + name + " has no record in " + settings.table(OutboxTables.CDC_SLOT));
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
        // A producer stopped by a failed record in the last session is replaced: everything it held is sent again.
        producers.renew();
        Flusher flusher = new Flusher(producers::producer);
        Thread flushing = new Thread(flusher, "outboxkit-cdc-flush-" + settings.slotName());
        flushing.setDaemon(true);
        flushing.start();
        try {
            try (Connection c = pool.getConnection()) {
                c.setAutoCommit(true);
                guard.awaitSlotFree(c, () -> !closing.getAsBoolean() && authority(), p -> phase = p);
            }
            Publisher publisher = new Publisher(producers, attempts, new TracedRecords(settings.route(), settings.tracing()),
                    metrics, settings.clock(), flusher::request, settings.producerConfig());
            StartupDrain.Result drained = null;
            if (settings.deleteAfterPublish() || firstStart) {
                phase = "publishing the rows already in " + settings.outboxTable();
                try (Connection c = pool.getConnection()) {
                    BooleanSupplier keepGoing = () -> !closing.getAsBoolean() && authority();
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
                    if (closing.getAsBoolean()) {
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
                    publisher, sink, metrics, policy, this::authority, drained, !settings.deleteAfterPublish(),
                    settings.maxInFlight());
            storeId = PostgresOffsetStore.register(new PostgresOffsetStore.Context(state, () -> fence,
                    this::checkBeforeRead, this::onWriteFailure));
            EngineRunner runner = new EngineRunner(EngineConfig.properties(settings, target, storeId), handler, policy,
                    settings.slotName());
            engineStartNanos = System.nanoTime();
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
                    if (closing.getAsBoolean() && handler.stopReached()) {
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
                if (closing.getAsBoolean()) {
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
            EngineRunner running = engine;
            if (running != null && !running.done()) {
                // a stop that gave up on an unanswering database (Supervisor#abandon): Debezium stops on its own thread
                Thread closer = new Thread(running::close, "outboxkit-cdc-engine-close-" + settings.slotName());
                closer.setDaemon(true);
                closer.start();
            }
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
            flusher.stop();
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
        if (!settings.deleteAfterPublish() || System.nanoTime() - streamingSince < Supervisor.CATCH_UP_MIN_STREAMING.toNanos()) {
            return false;
        }
        long oldest = metrics.oldestUnackedMicros.get();
        long ageMicros = oldest == 0 ? 0 : System.currentTimeMillis() * 1000 - oldest;
        return metrics.slotLagBytes.get() > Supervisor.CATCH_UP_LAG_BYTES && ageMicros > Supervisor.CATCH_UP_AGE.toNanos() / 1000;
    }

    private void stopGracefully(StreamHandler handler, EngineRunner runner, boolean marker) throws InterruptedException {
        phase = "stopping";
        handler.requestStop();
        if (marker) {
            try (Connection c = pool.getConnection(); PreparedStatement ps = c.prepareStatement(
                    "INSERT INTO " + settings.table(OutboxTables.CDC_HEARTBEAT) + " (slot_name) VALUES (?)")) {
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
