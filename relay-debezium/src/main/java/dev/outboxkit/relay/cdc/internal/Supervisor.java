package dev.outboxkit.relay.cdc.internal;

import com.zaxxer.hikari.HikariDataSource;
import dev.outboxkit.core.MissingGrantsException;
import dev.outboxkit.relay.Relay;
import dev.outboxkit.relay.RelayMetric;
import dev.outboxkit.relay.cdc.CdcStartupException;
import dev.outboxkit.runtime.DatabaseAtStart;
import dev.outboxkit.runtime.FailoverSlots;
import dev.outboxkit.runtime.JdbcUrls;
import dev.outboxkit.runtime.KafkaReachability;
import dev.outboxkit.runtime.LeaseTable;
import dev.outboxkit.runtime.LeaseTiming;
import dev.outboxkit.runtime.Liveness;
import dev.outboxkit.runtime.OperatorActions;
import dev.outboxkit.runtime.PoolerCheck;
import dev.outboxkit.runtime.RelayHealth;
import dev.outboxkit.runtime.RelayReports;
import dev.outboxkit.runtime.StopOnFailure;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Not API: public for {@code dev.outboxkit.relay.cdc.CdcRelay}.
 *
 * <p>The relay's life: stand by for the lease {@code cdc/<slot>}, and while holding it run one
 * {@link Session} after another (start-up checks, drain, Debezium) until closed, fenced out or failed.
 * A {@link SlotMonitor} watches the slot meanwhile, and the instance, holder or standby, writes its
 * {@link #health()} in its report ({@link RelayReports}) for the operator console.
 */
public final class Supervisor implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(Supervisor.class);

    /** Where the relay stands. */
    public enum Role { NEW, STANDBY, ACTIVE, STOPPED, FAILED }

    /** A WAL backlog this large (and events this old) makes the relay drain the table instead (default mode). */
    static final long CATCH_UP_LAG_BYTES = 64L << 20;
    static final Duration CATCH_UP_AGE = Duration.ofSeconds(10);
    static final Duration CATCH_UP_MIN_STREAMING = Duration.ofSeconds(15);
    /**
     * How much longer than {@code shutdownTimeout} a stop may take while the database answers: the stop's own writes
     * (the lease, the last offsets, the deletes) and Debezium's stop, on a loaded machine.
     */
    static final Duration STOP_GRACE = Duration.ofSeconds(90);
    /** The longest wait between two tries while the database does not answer (a restart, a failover in progress). */
    static final Duration DATABASE_RETRY_MAX = Duration.ofSeconds(2);

    /**
     * What the supervisor itself uses of the relay's terms.
     *
     * @param logPrefix   the relay's name in messages
     * @param jdbcUrl     the database URL (without user= and password=), for the start's wait and the messages
     * @param description a masked one-line description, logged at start
     * @param stallAfter  {@link LeaseTiming#stallAfter()}
     */
    record Terms(String slotName, String instanceId, String logPrefix, String jdbcUrl, String description, Duration startTimeout,
                 Duration shutdownTimeout, Duration stallAfter) {
    }

    private final Terms terms;
    /** Makes the relay's other parts, each from the values it uses. */
    private final CdcWiring wiring;
    private final CdcMetrics metrics;
    private HikariDataSource pool;
    private StopOnFailure producer;
    /** Counted failures per row, across sessions (each failure ends one). */
    private final RowAttempts attempts;
    private KafkaReachability kafka;
    private LeaseKeeper lease;
    /** This instance's report in outbox_relay_report (best effort, a thread of its own), from the start's checks on. */
    private RelayReports reports;
    private SlotGuard guard;
    private SlotMonitor monitor;
    private StateTables state;
    private ScheduledExecutorService scheduler;
    /** The standby's warm-up ({@link StandbyWarmup}): a thread of its own, since a metadata fetch may block. */
    private ScheduledExecutorService warmer;
    private Thread loop;
    private volatile Role role = Role.NEW;
    private volatile String detail = "not started";
    private volatile boolean closing;
    /** Set by {@link #close()} before it waits for {@link #start()}, so a start still waiting for the database ends. */
    private volatile boolean stopRequested;
    /** The start's wait for the database, for {@link #health()} while it runs. */
    private volatile DatabaseAtStart firstContact;
    private volatile Session session;
    private volatile boolean standbyHealthy;
    /** The schema's tables were checked at start: a taking-over session skips that check (a hot standby). */
    private boolean schemaChecked;
    private volatile RuntimeException failure;
    private volatile String lastFailure;
    private volatile long lastFailureNanos;
    /** Since when (System.nanoTime) the lease loop cannot reach the database, or 0. */
    private long unreachableSinceNanos;
    /** The lease loop's wait before the next session after a failure (the loop's thread only). */
    private long restartBackoff = 500;
    /** The lease loop's wait before its next look while the database does not answer (the loop's thread only). */
    private long databaseBackoff = 250;

    /** Built by {@link CdcWiring#supervisor}. */
    Supervisor(Terms terms, CdcMetrics metrics, RowAttempts attempts, CdcWiring wiring) {
        this.terms = terms;
        this.metrics = metrics;
        this.attempts = attempts;
        this.wiring = wiring;
    }

    public Role role() {
        return role;
    }

    public String instanceId() {
        return terms.instanceId();
    }

    public String slotName() {
        return terms.slotName();
    }

    /** A masked, one-line description for logs. */
    public String description() {
        return terms.description();
    }

    /** The fatal error after which the relay stopped ({@link Role#FAILED}), else null. */
    public RuntimeException failure() {
        return failure;
    }

    public synchronized void start() {
        if (role != Role.NEW) {
            throw new IllegalStateException("the relay was already started (" + role + "); build a new one");
        }
        pool = wiring.openPool();
        lease = wiring.leaseKeeper(pool, metrics);
        guard = wiring.slotGuard();
        awaitDatabase();
        checkGrantsAndSchema();
        try {
            wiring.refuseUntrustedBroker();
        } catch (IllegalStateException e) {
            throw refusedToStart(e);
        }
        openWorkers();
        reports = wiring.reports(pool, metrics, this::health);
        reports.start();
        log.info("starting CDC relay: {}", terms.description());
        Session first = takeLeaseAtStart();
        scheduler.scheduleWithFixedDelay(monitor, 0, 2, TimeUnit.SECONDS);
        warmer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "outboxkit-cdc-warmup-" + terms.slotName());
            t.setDaemon(true);
            return t;
        });
        warmer.scheduleWithFixedDelay(wiring.standbyWarmup(pool, producer, () -> role == Role.STANDBY && !closing),
                0, StandbyWarmup.RETRY.toMillis(), TimeUnit.MILLISECONDS);
        loop = new Thread(() -> run(first), "outboxkit-cdc-" + terms.slotName());
        loop.setDaemon(true);
        loop.start();
    }

    /** Waits (up to {@code startTimeout}, or until closed) for the database to answer, directly rather than through a pooler. */
    private void awaitDatabase() {
        DatabaseAtStart contact = new DatabaseAtStart("the " + terms.logPrefix(), terms.jdbcUrl(),
                terms.startTimeout(), () -> stopRequested);
        firstContact = contact;
        try {
            contact.await(pool);
            PoolerCheck.requireDirect(pool, "the " + terms.logPrefix(), terms.jdbcUrl());
        } catch (IllegalStateException e) {
            throw refusedToStart(e);
        }
    }

    private void checkGrantsAndSchema() {
        try (Connection c = pool.getConnection()) {
            // before Kafka and any lease: a standby that lacked a grant or a table would fail only at takeover
            guard.requireGrants(c);
            guard.requireSchema(c);
            schemaChecked = true;
        } catch (MissingGrantsException | CdcStartupException e) {
            throw refusedToStart(e);
        } catch (SQLException e) {
            log.debug("could not check the role's grants and tables at start; the start-up below reports the database", e);
        }
    }

    /** What works for every session: the offset and slot tables, the slot monitor, the producer, Kafka's probe. */
    private void openWorkers() {
        state = wiring.stateTables(pool, lease);
        monitor = wiring.slotMonitor(metrics, pool, guard, () -> {
            Session s = session;
            return role == Role.ACTIVE ? s : null;
        });
        producer = wiring.producer(metrics);
        kafka = wiring.kafkaProbe(metrics);
        kafka.start();
        scheduler = Executors.newScheduledThreadPool(1, r -> {
            Thread t = new Thread(r, "outboxkit-cdc-monitor-" + terms.slotName());
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * The start's look at the lease: when free, the first session, prepared (its start-up checks, whose refusal
     * {@code start()} throws); else null, standing by.
     */
    private Session takeLeaseAtStart() {
        Session first = null;
        try {
            Optional<LeaseKeeper.Acquired> acquired = lease.tryAcquire();
            standbyHealthy = true;
            if (acquired.isPresent()) {
                first = newSession(acquired.get());
                first.prepare(false);
            } else {
                role = Role.STANDBY;
                detail = standbyDetail();
                log.info("standing by: {}", detail);
            }
            return first;
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
            String why = OperatorActions.database(e, terms.jdbcUrl());
            detail = "cannot reach the database: " + why;
            shutdownResources();
            throw new IllegalStateException("the CDC relay cannot reach " + JdbcUrls.where(terms.jdbcUrl()) + " (" + why
                    + "); check jdbcUrl, user and password", e);
        }
    }

    /** The start's refusal {@code e}: the relay is FAILED with it, its resources closed; returns it to be thrown. */
    private RuntimeException refusedToStart(RuntimeException e) {
        role = Role.FAILED;
        failure = e;
        detail = e.getMessage();
        shutdownResources();
        return e;
    }

    /**
     * The lease loop: stand by until the lease is free, then run one session after another under it, each started
     * after the last one's end was dealt with (standing by again when the lease is lost), until closed or failed.
     */
    private void run(Session prepared) {
        Session next = prepared;
        while (!closing) {
            try {
                if (next == null) {
                    next = takeOver();
                    if (next == null) {
                        continue; // standing by
                    }
                    next.prepare(true);
                }
                Session.End end = runActive(next);
                switch (end) {
                    case CLOSED -> {
                        next.releaseLease();
                        role = Role.STOPPED;
                        detail = "stopped";
                        return;
                    }
                    case CATCH_UP, FAILED -> {
                        if (end == Session.End.FAILED && !mayRestartAfter(next)) {
                            return; // a stop that gave up on the database (close() said so): nothing to restart
                        }
                        long fence = next.fence;
                        next = null;
                        next = nextUnder(fence);
                        if (next != null) {
                            next.prepare(true); // assigned first: a start-up refusal below gives its lease back
                        }
                    }
                    case LOST -> {
                        next = null;
                        if (!closing) {
                            lostLease(); // a stop that found its authority lapsed (database away) just stops
                        }
                    }
                    default -> throw new IllegalStateException("unknown end " + end);
                }
                if (end != Session.End.FAILED) {
                    restartBackoff = 500;
                }
            } catch (CdcStartupException e) {
                stopOnStartupRefusal(e, next);
                return;
            } catch (SQLException | RuntimeException e) {
                databaseAway(e);
                next = null;
                sleep(databaseBackoff);
                databaseBackoff = Math.min(databaseBackoff * 2, DATABASE_RETRY_MAX.toMillis());
            }
        }
        if (next != null) {
            next.releaseLease(); // prepared under the lease, never run: the stop came first
        }
        role = Role.STOPPED;
    }

    /**
     * A look at the lease from the loop: the session under it when this instance took it (not yet prepared), else null
     * after standing by until it is given back or a while passed.
     */
    private Session takeOver() throws SQLException {
        Optional<LeaseKeeper.Acquired> acquired = lease.tryAcquire();
        databaseBackoff = databaseAnswers();
        standbyHealthy = true;
        if (acquired.isEmpty()) {
            if (role == Role.ACTIVE) {
                lostLease(); // found out by a renewal that failed with an error (caught in run)
            }
            role = Role.STANDBY;
            metrics.active.set(0);
            detail = standbyDetail();
            awaitRelease();
            return null;
        }
        log.info("acquired lease {} with fencing token {} (previous holder {}{}): taking over slot {}",
                lease.leaseKey(), acquired.get().fence(), acquired.get().previousHolder(),
                acquired.get().from() == LeaseTable.From.HOLDER_GONE ? ", whose process is gone" : "",
                terms.slotName());
        return newSession(acquired.get());
    }

    /** Runs {@code s} as the active instance until it ends. */
    private Session.End runActive(Session s) {
        session = s;
        role = Role.ACTIVE;
        metrics.active.set(1);
        Session.End end = s.run();
        databaseBackoff = databaseAnswers();
        metrics.active.set(0);
        return end;
    }

    /**
     * After session {@code failed} failed: throws a start-up refusal on; false when the relay is closing; else says
     * why, waits the back-off and returns true (the next session starts from the last stored offset).
     */
    private boolean mayRestartAfter(Session failed) {
        RuntimeException error = failed.error;
        if (error instanceof CdcStartupException) {
            throw error;
        }
        if (closing) {
            return false;
        }
        long lastAck = metrics.lastAckNanos.get();
        if (lastAck != 0 && lastAck - failed.startedNanos > 0 || error instanceof SlotMovedException) {
            // the session made progress (a new failure, not the same one again), or the primary or
            // the slot moved, which the next session mends at its start
            restartBackoff = 500;
        }
        if (error instanceof SlotMovedException) {
            log.warn("{}; the next session starts in {} ms", error.getMessage(), restartBackoff);
        } else {
            log.warn("streaming failed ({}); restarting from the last stored offset in {} ms",
                    error == null ? "engine stopped" : error.toString(), restartBackoff);
        }
        detail = "restarting after: " + (error == null ? "engine stopped" : error.getMessage());
        lastFailure = detail;
        lastFailureNanos = System.nanoTime();
        sleep(restartBackoff);
        restartBackoff = Math.min(restartBackoff * 2, 30_000);
        return true;
    }

    /** A start-up refusal stops the relay (FAILED); the lease of a session prepared under it is given back. */
    private void stopOnStartupRefusal(CdcStartupException e, Session prepared) {
        log.error("the CDC relay stopped: {}", e.getMessage());
        failure = e;
        role = Role.FAILED;
        detail = e.getMessage();
        metrics.active.set(0);
        if (prepared != null) {
            prepared.releaseLease();
        }
    }

    /** The lease loop could not reach the database: says so once per outage (and when the reason changes). */
    private void databaseAway(Exception e) {
        // The database is away (a restart, a failover, a network cut): look again soon, so that a promoted
        // standby or a restarted server is taken up within a couple of seconds, however long it took.
        standbyHealthy = false;
        String why = "database unreachable: " + e.getMessage();
        if (!why.equals(detail) || unreachableSinceNanos == 0) {
            log.warn("lease handling failed ({}); retrying every {} ms or sooner until the database answers",
                    e.toString(), DATABASE_RETRY_MAX.toMillis());
        }
        if (unreachableSinceNanos == 0) {
            unreachableSinceNanos = System.nanoTime();
        }
        detail = why;
    }

    /** The database answered the lease loop: says so once after an outage; returns the first wait of the next one. */
    private long databaseAnswers() {
        if (unreachableSinceNanos != 0) {
            log.info("the database answers again after {} ms", (System.nanoTime() - unreachableSinceNanos) / 1_000_000);
            unreachableSinceNanos = 0;
        }
        return 250;
    }

    /**
     * The next session under the lease of token {@code fence}, after a catch-up or a failure, not yet prepared; null
     * when the relay is closing, or when the renewal was refused (the loss reported).
     */
    private Session nextUnder(long fence) throws SQLException {
        if (closing) {
            return null;
        }
        if (!lease.renew(fence)) {
            lostLease();
            return null;
        }
        return newSession(fence, null, false);
    }

    /**
     * The one report of a lost lease, whichever way the relay found out: its session ended {@code LOST} (a renewal or
     * an offset write refused, or its authority ran out), the renewal before the next session was refused (after a
     * failure or a catch-up), or a renewal failed with an error and the lease was then someone else's.
     */
    private void lostLease() {
        log.warn("lost lease {} (another instance holds it, or this instance could not renew it or take its liveness lock): "
                + "standing by", lease.leaseKey());
        role = Role.STANDBY;
        metrics.active.set(0);
    }

    /** A session under a lease just taken: one given back (free) may still have the old holder's walsender ending. */
    private Session newSession(LeaseKeeper.Acquired acquired) {
        return newSession(acquired.fence(), acquired.previousHolder(), acquired.from() == LeaseTable.From.FREE);
    }

    private Session newSession(long fence, String previousHolder, boolean handedOver) {
        return new Session(wiring.sessionTerms(), new Session.Context(metrics, pool, producer,
                flush -> wiring.publisher(producer, attempts, metrics, flush), lease, guard, state, scheduler, monitor,
                () -> closing, schemaChecked), fence, previousHolder, handedOver);
    }

    /**
     * How often a standby looks at the lease: {@link LeaseTiming#LIVENESS_LOOK} (a read of the lease row and of {@code pg_locks}, no lock), so a
     * holder that crashed is replaced within about that much after the server closed its session. A lease given back
     * on a graceful stop wakes it at once.
     */
    private Duration standbyPoll() {
        return LeaseTiming.LIVENESS_LOOK;
    }

    /** A standby's pause: until the lease is given back (announced at once) or {@link #standbyPoll()} passed. */
    private void awaitRelease() {
        try {
            lease.awaitRelease(standbyPoll());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
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

    /**
     * The relay's health, aggregated here and only here (with {@link #roleHealth()} and its helpers below), from:
     * <ul>
     *   <li>the role: NEW is live, not ready ("not started", or what the start's wait for the database says);
     *       STANDBY is live, ready while the lease loop reaches the database; STOPPED and FAILED are neither;</li>
     *   <li>while ACTIVE: ready only while the session streams (Debezium polls, the lease is held, and a slot monitor
     *       look after the engine's start saw the slot streamed), is not stalled ({@link #stall}) and the slot
     *       monitor's reads reach the database; the detail adds the lease token, the slot lag, the failover state and,
     *       while not streaming, the session's phase and the last failure not yet followed by an acknowledgement;</li>
     *   <li>last, Kafka ({@link KafkaReachability#applyTo}): not ready while its probe gets no answer, or while records
     *       wait and Kafka acknowledged none of them for a while.</li>
     * </ul>
     */
    public Relay.Health health() {
        Relay.Health h = roleHealth();
        return kafka == null ? h : kafka.applyTo(h);
    }

    private Relay.Health roleHealth() {
        Role r = role;
        return switch (r) {
            case NEW -> RelayHealth.beforeStart("", firstContact);
            case STANDBY -> new Relay.Health(true, standbyHealthy, detail);
            case ACTIVE -> {
                Session s = session;
                if (s == null || !s.streaming()) {
                    yield new Relay.Health(true, false, "active: " + (s == null ? "starting" : s.phase) + failureSinceLastAck());
                }
                yield RelayHealth.running("active: streaming slot " + terms.slotName() + " (lease token " + s.fence
                        + ", slot lag " + metrics.slotLagBytes.get() + " bytes)" + failoverDetail(), true,
                        stall(s), monitor.databaseProblem());
            }
            case STOPPED -> new Relay.Health(false, false, "stopped");
            case FAILED -> new Relay.Health(false, false, "failed: " + detail);
        };
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

    /** {@link LeaseTiming#stallAfter()}. */
    Duration stallAfter() {
        return terms.stallAfter();
    }

    /** The last session's failure, until Kafka acknowledges something after it (health shows it while not streaming). */
    private String failureSinceLastAck() {
        String f = lastFailure;
        return f != null && metrics.lastAckNanos.get() - lastFailureNanos <= 0 ? "; " + f : "";
    }

    /** {@code "; failover: …"} on PostgreSQL 17 and later (whether a promoted standby would have the slot), else empty. */
    private String failoverDetail() {
        String detail = metrics.failoverDetail;
        return detail == null || metrics.failoverReady.get() == FailoverSlots.NOT_SUPPORTED ? ""
                : "; failover: " + detail;
    }

    @Override
    public void close() {
        stopRequested = true;
        synchronized (this) {
            if (role == Role.NEW && loop == null) {
                // never started; after a start the role stays NEW until the loop runs its first session
                role = Role.STOPPED;
                return;
            }
            closing = true;
        }
        Session s = session;
        if (s != null) {
            s.wake();
        }
        Thread t = loop;
        boolean abandoned = false;
        if (t != null) {
            try {
                t.join(terms.shutdownTimeout().toMillis());
                if (t.isAlive() && !lease.databaseAnswers(Liveness.CLOSE_PATIENCE)) {
                    abandoned = true;
                } else {
                    // the database answers: the stop is slow (a loaded machine, Debezium's own stop), not stuck
                    t.join(STOP_GRACE.toMillis());
                    if (t.isAlive()) {
                        log.warn("the relay did not stop in time; interrupting it");
                        t.interrupt();
                        t.join(10_000);
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (role != Role.FAILED) {
            role = Role.STOPPED;
        }
        if (abandoned) {
            abandon(t);
        } else {
            shutdownResources(false);
        }
        log.info("{} stopped", terms.logPrefix());
    }

    /**
     * The stop waited {@code shutdownTimeout} and the database does not answer (a lost node, a partition: no FIN, so
     * every call waits until TCP keepalive gives up, minutes later). Stops without it, saying once what it leaves.
     */
    private void abandon(Thread stuck) {
        Session s = session;
        String phase = s == null ? "standing by" : s.phase;
        stuck.interrupt();
        String liveness = lease.releaseLiveness(Liveness.CLOSE_PATIENCE);
        log.warn("the database at {} did not answer within shutdownTimeout {} (the relay was {}): stopping without it. "
                        + "Left behind: the lease {} (a standby takes it over when it expires, with a new fencing token "
                        + "that refuses any late write of this instance){}, and the offsets of events Kafka acknowledged "
                        + "since the last stored ones (published again by the next holder: at least once). PostgreSQL "
                        + "ends this instance's sessions and frees its slot once TCP keepalive (or tcp_user_timeout, "
                        + "wal_sender_timeout) finds this host silent", JdbcUrls.where(terms.jdbcUrl()),
                terms.shutdownTimeout(), phase, lease.leaseKey(),
                liveness == null ? "" : ", its liveness lock (" + liveness + ")");
        shutdownResources(true);
    }

    private void shutdownResources() {
        shutdownResources(false);
    }

    /**
     * @param databaseGone the database does not answer: the liveness lock was dealt with already, and the pool closes
     *                     on a thread of its own (HikariCP aborts the connections the stop is stuck on, which takes a
     *                     while and must not hold up the stop)
     */
    private void shutdownResources(boolean databaseGone) {
        if (reports != null) {
            reports.close(); // the row is deleted, unless the last report found the database away
        }
        if (warmer != null) {
            warmer.shutdownNow(); // a metadata fetch in progress ends when the producer closes below
        }
        if (scheduler != null) {
            scheduler.shutdownNow();
            if (!databaseGone) {
                // a slot monitor look in progress ends before the pool closes under it (a WARN with a stack trace after the stop)
                try {
                    scheduler.awaitTermination(5, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
        if (kafka != null) {
            kafka.close();
        }
        if (producer != null) {
            producer.close(Duration.ofSeconds(30));
        }
        if (lease != null && !databaseGone) {
            lease.closeLiveness(); // the lease is given back (or lost) by now
        }
        if (pool != null) {
            if (databaseGone) {
                HikariDataSource abandoned = pool;
                Thread closer = new Thread(abandoned::close, "outboxkit-cdc-pool-close-" + terms.slotName());
                closer.setDaemon(true);
                closer.start();
            } else {
                pool.close();
            }
        }
    }
}
