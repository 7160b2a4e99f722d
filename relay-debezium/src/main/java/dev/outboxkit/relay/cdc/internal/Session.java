package dev.outboxkit.relay.cdc.internal;

import com.zaxxer.hikari.HikariDataSource;
import dev.outboxkit.core.FencedException;
import dev.outboxkit.core.OutboxTables;
import dev.outboxkit.relay.cdc.CdcStartupException;
import dev.outboxkit.runtime.DatabaseLogin;
import dev.outboxkit.runtime.Flusher;
import dev.outboxkit.runtime.JdbcUrls;
import dev.outboxkit.runtime.StopOnFailure;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One stretch of holding the lease: checks, drain, Debezium, until it ends.
 *
 * <h2>Taking over without a gap, in order</h2>
 * With {@code deleteAfterPublish} (the table is the truth) a session publishes from the table from the moment it holds
 * the lease until Debezium's first change arrives, so neither the old walsender's exit nor the engine's start leaves
 * events waiting: a first drain pass (the start-up drain), then, while the slot is still streamed by the predecessor
 * that handed over, and while Debezium's engine is built and starts, more passes, each in a new snapshot
 * ({@link StartupDrain}). The first batch Debezium hands over waits until the pass in progress ended; from then on only
 * the stream publishes, skipping the WAL copies of rows a pass handled. Why no event of an aggregate is published after
 * a later one of it (writers serialise on the aggregate, so its events commit, and take their seqs, one after another):
 * <ul>
 *   <li>within a pass, rows go out in seq order, each chunk acknowledged before the next is sent;</li>
 *   <li>a snapshot that sees an event sees every earlier event of its aggregate (committed before it): the earlier one
 *       is in the same pass or an earlier one, or it was deleted, which happens only after Kafka acknowledged it;</li>
 *   <li>every pass's publications are acknowledged before the stream publishes anything, and an event the stream
 *       publishes (not seen by any pass, or written again after) committed after the last pass's snapshot, so after
 *       every event of its aggregate that a pass published; the stream itself goes in commit order;</li>
 *   <li>the stream skips a change only when its row was handled by a pass whose snapshot was taken after the change
 *       was written ({@link StartupDrain.Result#drained}), i.e. a copy of a row already published or parked;</li>
 *   <li>the predecessor stopped publishing before it gave the lease back (its stop point: every record it sent was
 *       acknowledged, every acknowledged row's delete committed), so its publications precede ours.</li>
 * </ul>
 * A takeover of a lease handed over (given back at the predecessor's stop point) publishes its first pass before the
 * slot's checks ({@link #prepare}): a pass reads the table, not the slot, under the session's lease (its
 * deletes fenced as always), so nothing above depends on the slot at that point. The checks follow at once and still
 * refuse to stream from a slot that could skip events; a slot they create (no record of it: nobody streamed it) exists
 * only after that first pass's snapshot, but every row committed in between is in the table, and a second pass, in a
 * snapshot taken after the checks, publishes it (in seq order, before the stream publishes anything).
 * Duplicates remain possible (a row acknowledged whose delete a crash lost), never a reordering of first publications.
 */
final class Session {

    private static final Logger log = LoggerFactory.getLogger(Supervisor.class);


    enum End { CLOSED, LOST, FAILED, CATCH_UP }

    /**
     * What a session uses of the relay's settings, the same for all its sessions.
     *
     * @param slot            the slot, its publication and tables, the mode
     * @param login           the login of Debezium's connections
     * @param target          the database URL parsed ({@link #resolve} points it at the primary's one host)
     * @param engine          Debezium's pace
     * @param leaseDuration   how long the lease lasts after its last renewal ({@code LeaseTiming#lease})
     * @param renewInterval   how often the session renews it ({@code LeaseTiming#renewInterval})
     * @param shutdownTimeout how long a stop waits for the open transaction to finish publishing
     * @param maxInFlight     most records handed to the producer and not yet acknowledged
     */
    record Terms(SlotTerms slot, String instanceId, DatabaseLogin login, JdbcTarget target, EngineTuning engine,
                 Duration leaseDuration, Duration renewInterval, Duration shutdownTimeout, int maxInFlight) {
    }

    /**
     * What a session works with: the supervisor's resources, alive for all its sessions.
     *
     * @param publishers a publisher through the relay's producer; its argument asks the session's flusher to send now
     */
    record Context(CdcMetrics metrics, HikariDataSource pool, StopOnFailure producers,
                   Function<Runnable, Publisher> publishers, LeaseKeeper lease, SlotGuard guard, StateTables state,
                   ScheduledExecutorService scheduler, SlotMonitor monitor, BooleanSupplier closing, boolean schemaChecked) {
    }

    /**
     * The shortest time between the starts of two passes over the table while bridging: an event committed meanwhile
     * waits at most this plus a pass, and the passes leave the CPU to Debezium's start on a busy machine (back to back,
     * they slowed it there).
     */
    static final Duration BRIDGE_PASS_INTERVAL = Duration.ofMillis(50);

    /**
     * The longest the passes bridge Debezium's start: past it the stream alone publishes. Debezium streams within a
     * few seconds of its start normally, but on a saturated machine its start can take far longer with the passes
     * running beside it, so the bridge must not be open-ended.
     */
    static final Duration BRIDGE_MAX = Duration.ofSeconds(5);

    /** How long a session waits for a predecessor that handed over to end its walsender before ending it itself. */
    static final Duration PREDECESSOR_SENDER_GRACE = Duration.ofSeconds(10);

    private final Terms terms;
    private final SlotTerms slotTerms;
    private final CdcMetrics metrics;
    private final HikariDataSource pool;
    private final StopOnFailure producers;
    private final Function<Runnable, Publisher> publishers;
    private final LeaseKeeper lease;
    private final SlotGuard guard;
    private final StateTables state;
    private final ScheduledExecutorService scheduler;
    private final SlotMonitor monitor;
    private final BooleanSupplier closing;
    private final boolean schemaChecked;

    final long fence;
    private final String previousHolder;
    /** The lease was free (given back by a graceful stop, or never held): a walsender still on the slot is ending. */
    private final boolean handedOver;
    private final CompletableFuture<Void> wake = new CompletableFuture<>();
    private volatile boolean released;
    private final Phases phases = new Phases();
    private long lastPassNanos;
    volatile long lastRenewNanos = System.nanoTime();
    volatile boolean lost;
    volatile RuntimeException error;
    volatile String phase = "checking slot and publication";
    private boolean firstStart;
    /** The server the session streams from (a multi-host URL resolved to the primary): set by {@link #check}. */
    private volatile Server server;
    /** The URL ({@link Terms#target}) on {@link #server}'s one host: what Debezium connects to. */
    private JdbcTarget streamTarget;
    /**
     * The slot streamed events that live only in the WAL (logical decoding messages) while the table was supposed to be
     * the truth: the slot is then never fast-forwarded and never created again (see {@link #verifySlot}).
     */
    private volatile boolean walOnlySeen;
    /** A takeover of a handed-over lease: the first pass over the table goes out before the slot's checks (class doc). */
    private boolean checksAfterFirstPass;
    private ScheduledFuture<?> renewer;
    private volatile EngineRunner engine;
    /** The key of the session's Debezium sockets ({@link DebeziumSockets}); null before the engine is configured. */
    private volatile String socketsKey;
    /** When the session started its engine (System.nanoTime): readiness counts only the slot monitor's later looks. */
    private volatile long engineStartNanos;

    final long startedNanos = System.nanoTime();

    Session(Terms terms, Context context, long fence, String previousHolder, boolean handedOver) {
        this.terms = terms;
        this.slotTerms = terms.slot();
        this.metrics = context.metrics();
        this.pool = context.pool();
        this.producers = context.producers();
        this.publishers = context.publishers();
        this.lease = context.lease();
        this.guard = context.guard();
        this.state = context.state();
        this.scheduler = context.scheduler();
        this.monitor = context.monitor();
        this.closing = context.closing();
        this.schemaChecked = context.schemaChecked();
        this.fence = fence;
        this.previousHolder = previousHolder;
        this.handedOver = handedOver;
    }

    /** The relay is closing: the session's loop reacts now rather than at its next look. */
    void wake() {
        wake.complete(null);
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
        return !lost && System.nanoTime() - lastRenewNanos < terms.leaseDuration().toNanos();
    }

    void fail(RuntimeException e) {
        if (error == null) {
            error = e;
        }
    }

    /**
     * Start-up checks under the lease; throws {@link CdcStartupException} when starting could skip events.
     *
     * @param publishFirst whether a takeover of a lease handed over may publish its first pass over the table before
     *                     the slot's checks (class doc); false at the relay's start, whose refusal
     *                     {@code start()} throws
     */
    void prepare(boolean publishFirst) throws SQLException {
        long period = terms.renewInterval().toMillis();
        renewer = scheduler.scheduleWithFixedDelay(this::renew, period, period, TimeUnit.MILLISECONDS);
        checksAfterFirstPass = publishFirst && handedOver && schemaChecked && slotTerms.deleteAfterPublish();
        if (checksAfterFirstPass) {
            return; // run() publishes the first pass, then checks
        }
        try (Connection c = pool.getConnection()) {
            check(c);
        } catch (SQLException | RuntimeException e) {
            renewer.cancel(false);
            throw e;
        }
    }

    private void check(Connection c) throws SQLException {
        c.setAutoCommit(true);
        resolve(c);
        if (!schemaChecked) {
            guard.requireSchema(c); // a standby checked it while it waited
        }
        guard.terminateSessionsOf(c, previousHolder);
        guard.ensurePublication(c);
        if (!handedOver) {
            // A holder that lost the lease (lost node, frozen past it): end its walsender now. One that handed
            // over ends its own as its engine closes (awaitSlotFree gives it PREDECESSOR_SENDER_GRACE).
            guard.endStaleWalsender(c, fence);
        }
        firstStart = verifySlot(c, true);
        phases.checked = System.nanoTime();
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
            databaseError(e);
        }
    }

    /**
     * A failure of one of the relay's own database calls (an offset write, a renewal, a delete, a look at the slot).
     * When the connection itself broke or the server refused it (SQLSTATE class 08, or 57P01-57P03: shutting down,
     * restarting, ended the session) while Debezium streams, the session ends at once. Positions can no longer be
     * stored then, and PostgreSQL's clean shutdown waits until every logical walsender's client confirmed all it was
     * sent, which this relay does only for positions it stored in that same database: an open replication connection
     * would hold a planned switchover back for {@code wal_sender_timeout}. The next session streams from whichever
     * server is primary once one answers.
     */
    void databaseError(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof SQLException sql && connectionLost(sql.getSQLState())) {
                if (enginePolling() && error == null) {
                    fail(new SlotMovedException("the relay's database connection broke (" + sql.getMessage().trim()
                            + ", SQLSTATE " + sql.getSQLState() + "): it closes its replication connection at once, so "
                            + "the server's walsender ends and a shutdown or switchover is not held up, and streams again "
                            + "once a primary answers"));
                    String key = socketsKey;
                    if (key != null) {
                        DebeziumSockets.cut(key); // Debezium's own close would wait for the walsender (DebeziumSockets)
                    }
                }
                return;
            }
        }
    }

    /** A connection exception (class 08) or the server stopping, ending the session, or refusing connections now. */
    private static boolean connectionLost(String sqlState) {
        return sqlState != null && (sqlState.startsWith("08") || sqlState.equals("57P01") || sqlState.equals("57P02")
                || sqlState.equals("57P03"));
    }

    /**
     * The server {@code c} reached is the one the session streams from: with a URL that names every node
     * ({@code targetServerType=primary}) the relay's pool connects to whichever is primary now, and Debezium is sent
     * there too.
     */
    private void resolve(Connection c) throws SQLException {
        if (server == null) {
            server = Server.of(c);
            streamTarget = terms.target().at(server.address());
        }
    }

    /** The server the session streams from; null before its checks. */
    Server server() {
        return server;
    }

    /**
     * The slot must exist, be a usable pgoutput slot and not be ahead of the stored offset. The first time (no record
     * of the slot yet) it is created or adopted. Returns true on a first start, and when the slot was created again.
     *
     * <p>A slot the relay streamed before may be gone: dropped, invalidated by {@code max_slot_wal_keep_size}, or left
     * behind by a failover (before PostgreSQL 17 a promoted standby has no logical slots; from 17 only failover slots
     * are kept), or a failover may have left a copy ahead of the stored offset. Whether that may cost events decides
     * what happens ({@link #recreationRefused}): where every unpublished event is still a row in the table, the slot is
     * created again (or the copy adopted) with one WARN, like at a first start, and the drain publishes the rows before
     * the stream goes on; where the WAL may have been the only copy of an event, the relay refuses, naming the way out.
     *
     * @param mayCreate false when Debezium restarts its task inside a session: a slot to create again ends the session
     *                  instead ({@link SlotMovedException}), and the next one creates it at its start
     */
    boolean verifySlot(Connection c, boolean mayCreate) throws SQLException {
        StateTables.SlotRecord record = state.slotRecord(c);
        SlotGuard.SlotState slot = guard.slot(c);
        StateTables.StoredOffset stored = state.storedOffset(c);
        if (record == null) {
            return firstSlot(c, slot, stored, mayCreate);
        }
        walOnlySeen = record.walOnlySeen() != null;
        boolean serverChanged = server.changedFrom(record.systemIdentifier(), record.timeline());
        SlotLoss lost = slotLoss(c, slot, record, stored, serverChanged);
        if (lost == null) {
            followServer(c, record, serverChanged);
            return !record.drained();
        }
        String what = describeLoss(lost, record, slot, stored, serverChanged);
        String refused = recreationRefused(record);
        if (refused != null) {
            throw new CdcStartupException(what + ", and " + refused + " It refuses to create a new slot, which would skip "
                    + "them." + (server.hasFailoverSlots() ? "" : " (PostgreSQL 17 and later keep a failover slot on a "
                    + "standby that runs sync_replication_slots: the relay creates its slot so there, failoverSlot.)")
                    + " " + guard.recoveryAdvice());
        }
        if (!mayCreate) {
            throw new SlotMovedException(what + ": the relay starts streaming again on a new slot");
        }
        return recreate(c, lost, what, slot);
    }

    /** No record of the slot yet (nobody streamed it): it is created, or an existing one adopted. */
    private boolean firstSlot(Connection c, SlotGuard.SlotState slot, StateTables.StoredOffset stored, boolean mayCreate)
            throws SQLException {
        String name = slotTerms.slotName();
        if (stored != null) {
            throw new CdcStartupException("offsets are stored for slot " + name + " but " + slotTerms.table(OutboxTables.CDC_SLOT)
                    + " has no record of it: the relay's state is incomplete. " + guard.recoveryAdvice());
        }
        if (!mayCreate) {
            throw new CdcStartupException("slot " + name + " has no record in " + slotTerms.table(OutboxTables.CDC_SLOT));
        }
        long baseLsn;
        if (slot == null) {
            baseLsn = guard.createSlot(c, server);
        } else {
            guard.requireUsable(c, slot);
            baseLsn = slot.confirmedFlush();
            log.info("adopting existing replication slot {} at {}", name, Lsns.format(baseLsn));
        }
        state.recordSlot(c, fence, baseLsn, server);
        return true;
    }

    /** How the slot the relay streamed before can no longer be used as it is, or null when it can. */
    private SlotLoss slotLoss(Connection c, SlotGuard.SlotState slot, StateTables.SlotRecord record,
                              StateTables.StoredOffset stored, boolean serverChanged) throws SQLException {
        if (slot == null) {
            return SlotLoss.MISSING;
        }
        guard.requireKind(c, slot);
        // The slot moves only when the relay fast-forwards it (to base_lsn, recorded first) or confirms a
        // stored offset; so it can be at most at the larger of the two. (A stored offset inside the first
        // transaction after a fast-forward may even point before base_lsn: its changes began earlier.)
        long expected = Math.max(record.baseLsn(), stored != null ? stored.flushLsn() : -1);
        if (slot.invalidated()) {
            return SlotLoss.INVALIDATED;
        }
        if (slot.confirmedFlush() > expected) {
            if (!serverChanged) {
                throw new CdcStartupException("replication slot " + slotTerms.slotName() + " has confirmed WAL up to "
                        + Lsns.format(slot.confirmedFlush()) + " but the relay's stored offset is at " + Lsns.format(expected)
                        + ": someone else advanced or re-created the slot, so events between them may never be streamed. "
                        + guard.recoveryAdvice());
            }
            return SlotLoss.AHEAD;
        }
        return null;
    }

    /** A usable slot: the server it is on now is recorded when it changed (a promoted standby that kept it). */
    private void followServer(Connection c, StateTables.SlotRecord record, boolean serverChanged) throws SQLException {
        if (serverChanged || record.serverAddress() == null || !record.serverAddress().equals(server.address().toString())) {
            if (serverChanged) {
                log.info("replication slot {} is on {} now (the relay last streamed it on {}): the standby was promoted "
                        + "and kept the slot (a failover slot); streaming goes on from it", slotTerms.slotName(),
                        server.describe(), record.describeServer());
            }
            state.recordServer(c, fence, server);
        }
    }

    /**
     * Why the relay must not create its slot again (or adopt another copy), or null when it may: only while every
     * unpublished event is a row in the table (deleteAfterPublish, and no event without a row streamed so far). The
     * relay cannot see which mode the writers use; {@code deleteAfterPublish} is the declaration that they keep rows,
     * and a logical decoding message streamed on this slot is the proof that one did not. (An insert the writer deletes
     * in its own transaction looks, in the stream, like an insert of a row published and deleted before: it leaves no
     * such proof, which is why the writers' transient modes belong with deleteAfterPublish(false).)
     */
    private String recreationRefused(StateTables.SlotRecord record) {
        if (!slotTerms.deleteAfterPublish()) {
            return "with deleteAfterPublish(false) the WAL may have been the only copy of events committed meanwhile "
                    + "(the writers' insert-and-delete and emit-message modes keep no row).";
        }
        if (record.walOnlySeen() != null) {
            return "the WAL may have been the only copy of events committed meanwhile: though the relay runs with "
                    + "deleteAfterPublish, it streamed an event that had no row in the table (" + record.walOnlySeen()
                    + "). Once the writers keep rows again, clear that mark (UPDATE " + slotTerms.table(OutboxTables.CDC_SLOT)
                    + " SET wal_only_seen_at = NULL WHERE slot_name = '" + slotTerms.slotName() + "') so a lost slot is "
                    + "created again without an operator.";
        }
        return null;
    }

    /** How a slot the relay streamed before can no longer be used as it is; the tag is the metric's {@code reason}. */
    enum SlotLoss {
        /** Dropped, or a promoted standby without it. */
        MISSING("missing"),
        /** PostgreSQL removed WAL it needed ({@code max_slot_wal_keep_size}). */
        INVALIDATED("invalidated"),
        /** After a server change, a copy past the stored offset (an asynchronous copy on a promoted standby). */
        AHEAD("ahead");

        final String tag;

        SlotLoss(String tag) {
            this.tag = tag;
        }
    }

    private String describeLoss(SlotLoss lost, StateTables.SlotRecord record, SlotGuard.SlotState slot,
                                StateTables.StoredOffset stored, boolean serverChanged) {
        String where = "replication slot " + slotTerms.slotName() + " ";
        String state = switch (lost) {
            case MISSING -> "is missing on " + server.describe();
            case INVALIDATED -> "was invalidated by PostgreSQL on " + server.describe() + " (wal_status=" + slot.walStatus()
                    + (slot.invalidationReason() == null ? "" : ", reason " + slot.invalidationReason()) + ")";
            case AHEAD -> "on " + server.describe() + " has confirmed WAL up to " + Lsns.format(slot.confirmedFlush())
                    + ", past the relay's stored offset" + (stored == null ? "" : " at " + Lsns.format(stored.flushLsn()));
        };
        return where + state + (serverChanged
                ? "; the relay last streamed it on " + record.describeServer() + ": a failover (another server, or a new "
                + "timeline: a standby was promoted)"
                : ", where the relay streamed it before");
    }

    /** Creates the slot again (or adopts a copy ahead of the stored offset) after {@code what}: a first start from here. */
    private boolean recreate(Connection c, SlotLoss lost, String what, SlotGuard.SlotState slot) throws SQLException {
        long lsn;
        if (lost == SlotLoss.AHEAD) {
            lsn = slot.confirmedFlush();
        } else {
            if (lost == SlotLoss.INVALIDATED) {
                guard.dropSlot(c);
            }
            lsn = guard.createSlot(c, server);
        }
        state.recordRecreated(c, fence, lsn, server, what);
        metrics.slotRecreated(lost.tag).increment();
        log.warn("{}. {} it at {}: with deleteAfterPublish every unpublished event is still a row in {}, and the relay "
                        + "publishes those rows before it streams, so nothing is lost and nobody needs to act{}", what,
                lost == SlotLoss.AHEAD ? "Adopted" : "Created", Lsns.format(lsn), slotTerms.outboxTable(),
                !server.hasFailoverSlots() ? " (before PostgreSQL 17 a standby keeps no logical slot)"
                        : slotTerms.failoverSlot() ? "" : " (failoverSlot = false: a promoted standby keeps no copy)");
        return true;
    }

    /**
     * How a session that stopped on {@link #error} ends: {@code LOST} when the lease went first and the error is its
     * consequence, else {@code FAILED}. Woken from a pause past the lease, for example, the session may meet the new
     * holder's work before its own renewal says the lease is gone: its connections ended (a pass over the table
     * fails), or its handler refusing the next batch (which ends the engine). A start-up refusal ({@link
     * CdcStartupException}) stays a failure unless the lease was already known to be lost.
     */
    private End failedOrLost() {
        if (lost || (!authority() && !(error instanceof CdcStartupException))) {
            lost = true;
            return End.LOST;
        }
        return End.FAILED;
    }

    /**
     * The offset store's check before Debezium reads offsets (also on its own task restarts, after a lost connection):
     * the pool must still reach the server the session streams from (else the primary moved: the next session goes
     * there), and the slot must still be usable.
     */
    void checkBeforeRead() {
        try (Connection c = pool.getConnection()) {
            c.setAutoCommit(true);
            requireSameServer(c);
            verifySlot(c, false);
        } catch (CdcStartupException | SlotMovedException e) {
            fail(e);
            throw e;
        } catch (SQLException e) {
            throw new IllegalStateException("cannot check slot " + slotTerms.slotName() + ": " + e.getMessage(), e);
        }
    }

    /**
     * Throws {@link SlotMovedException} when {@code c} (a connection of the relay's pool, which follows the primary of a
     * multi-host URL) reached another server than the session streams from: the primary moved.
     */
    void requireSameServer(Connection c) throws SQLException {
        Server streaming = server;
        JdbcUrls.HostPort now = JdbcUrls.connectedTo(c);
        if (streaming != null && !now.equals(streaming.address())) {
            throw new SlotMovedException("the primary moved from " + streaming.address() + " to " + now
                    + ": streaming again from there");
        }
    }

    /**
     * The relay streamed an event without a row in the table ({@code what}) while running with deleteAfterPublish:
     * remembered with the slot, so the slot is neither fast-forwarded nor created again from now on. Once per session.
     */
    void walOnlyEvent(String what) {
        if (walOnlySeen || !slotTerms.deleteAfterPublish()) {
            return;
        }
        walOnlySeen = true;
        try (Connection c = pool.getConnection()) {
            state.recordWalOnly(c, fence, what);
        } catch (SQLException | RuntimeException e) {
            log.warn("could not record that slot {} streamed an event with no row in the table ({}); the relay "
                    + "stops fast-forwarding it for this run", slotTerms.slotName(), e.toString());
        }
    }

    void onWriteFailure(Throwable e) {
        if (released) {
            // after the hand-over at the stop point: the successor's drain and fast-forward cover this position
            log.debug("offset write after handing the lease over not stored: {}", e.toString());
            return;
        }
        if (e instanceof FencedException) {
            metrics.fenceRejections.increment();
            lost = true;
            log.warn("offset write refused: {}", e.getMessage());
        } else {
            log.warn("offset write failed (retried at the next flush): {}", e.toString());
            databaseError(e);
        }
    }

    End run() {
        String storeId = null;
        RowSink sink = new RowSink(pool, slotTerms, terms.instanceId(), lease, () -> fence, e -> lost = true, metrics)
                .onDatabaseError(this::databaseError);
        // A producer stopped by a failed record in the last session is replaced: everything it held is sent again.
        producers.renew();
        Flusher flusher = startFlusher();
        try {
            Publisher publisher = publishers.apply(flusher::request);
            StartupDrain drain = new StartupDrain(slotTerms.outboxTable(), publisher, sink, 5_000);
            BooleanSupplier keepGoing = () -> !closing.getAsBoolean() && authority();
            StartupDrain.Result drained;
            try (Connection c = pool.getConnection()) {
                drained = publishTableAndFreeSlot(c, drain, keepGoing);
            } catch (InterruptedException e) {
                if (closing.getAsBoolean()) {
                    sink.flush(Duration.ofSeconds(30));
                    return End.CLOSED;
                }
                return End.LOST;
            } catch (FencedException e) {
                return End.LOST;
            }
            phase = "starting Debezium";
            FlushPolicy policy = new FlushPolicy(terms.engine().offsetFlushInterval());
            StreamHandler handler = new StreamHandler(new ChangeDecoder(slotTerms.schema(), EngineConfig.HEARTBEAT_TOPIC_PREFIX),
                    publisher, sink, metrics, policy, this::authority, drained, !slotTerms.deleteAfterPublish(),
                    terms.maxInFlight(), bridges() && drained != null, this::walOnlyEvent);
            storeId = PostgresOffsetStore.register(new PostgresOffsetStore.Context(state, () -> fence,
                    this::checkBeforeRead, this::onWriteFailure));
            DebeziumSockets.register(storeId);
            socketsKey = storeId;
            EngineRunner runner = startEngine(handler, policy, storeId, drain, drained, keepGoing);
            return watch(runner, handler, sink);
        } catch (InterruptedException e) {
            return interrupted(e);
        } catch (SQLException | RuntimeException e) {
            fail(e instanceof RuntimeException re ? re : new IllegalStateException(e.getMessage(), e));
            return failedOrLost();
        } finally {
            engine = null;
            if (storeId != null) {
                PostgresOffsetStore.unregister(storeId);
                DebeziumSockets.unregister(storeId);
            }
            sink.close();
            flusher.stop();
            if (renewer != null) {
                renewer.cancel(false); // the next session (if any) renews on its own
            }
        }
    }

    /** The session's flusher of the producer, on a thread of its own (stopped when the session ends). */
    private Flusher startFlusher() {
        Flusher flusher = new Flusher(producers::producer);
        Thread flushing = new Thread(flusher, "outboxkit-cdc-flush-" + slotTerms.slotName());
        flushing.setDaemon(true);
        flushing.start();
        return flusher;
    }

    /** With the table as the truth, it bridges the predecessor's walsender exit and Debezium's start (class doc). */
    private boolean bridges() {
        return slotTerms.deleteAfterPublish();
    }

    /**
     * Everything before Debezium starts, in the class doc's order: the first pass over the table (and the slot's
     * checks, for a takeover of a lease handed over), the slot fast-forwarded past what the passes covered, no
     * walsender left on the slot, and the slot made a failover slot. Returns what the passes handled (null: none ran).
     */
    private StartupDrain.Result publishTableAndFreeSlot(Connection c, StartupDrain drain, BooleanSupplier keepGoing)
            throws SQLException, InterruptedException {
        StartupDrain.Result drained = firstPass(c, drain, keepGoing);
        if (slotTerms.deleteAfterPublish() || firstStart) {
            drained = fastForwardOnceFree(c, drain, drained, keepGoing);
        } else {
            awaitSlotFree(c, null, null, keepGoing);
        }
        // No walsender streams the slot now: the one moment it may be altered.
        guard.ensureFailover(c, server, streamTarget);
        return drained;
    }

    /** The session's first pass over the table, when it owes one (null otherwise). */
    private StartupDrain.Result firstPass(Connection c, StartupDrain drain, BooleanSupplier keepGoing)
            throws SQLException, InterruptedException {
        StartupDrain.Result drained = null;
        if (checksAfterFirstPass) {
            phase = "publishing the rows already in " + slotTerms.outboxTable();
            drained = drain.run(c, keepGoing);
            phases.drained = System.nanoTime();
            phases.firstRows = drained.published() + drained.parked();
            phase = "checking slot and publication";
            check(c);
            if (firstStart) {
                // the slot was created (or adopted) after that pass's snapshot: one more, after it (class doc)
                drained = pass(c, drain, drained, keepGoing);
            }
            state.markDrained(c, fence);
        } else if (slotTerms.deleteAfterPublish() || firstStart) {
            phase = "publishing the rows already in " + slotTerms.outboxTable();
            // The first pass at once: the events that waited during a hand-over go out first.
            drained = drain.run(c, keepGoing);
            state.markDrained(c, fence);
            phases.drained = System.nanoTime();
            phases.firstRows = drained.published() + drained.parked();
        }
        return drained;
    }

    /**
     * Waits for the slot to be free (the passes going on meanwhile when they bridge) and, with the table as the truth,
     * fast-forwards it past the WAL a pass covered.
     */
    private StartupDrain.Result fastForwardOnceFree(Connection c, StartupDrain drain, StartupDrain.Result drained,
                                                    BooleanSupplier keepGoing) throws SQLException, InterruptedException {
        OptionalLong skipTo = OptionalLong.empty();
        if (slotTerms.deleteAfterPublish() && !walOnlySeen) {
            // With the table as the truth, the WAL before this point holds nothing the passes have not
            // published (or an earlier run had) once a pass ran after it: the slot may skip it.
            skipTo = StartupDrain.fastForwardPoint(c, Duration.ofSeconds(10), keepGoing);
            if (skipTo.isPresent()) {
                drained = pass(c, drain, drained, keepGoing);
            }
        }
        drained = awaitSlotFree(c, bridges() ? drain : null, drained, keepGoing);
        if (skipTo.isPresent()) {
            // only now: a slot may be moved only while no walsender streams it (awaitSlotFree); base_lsn is recorded
            // before the slot moves, so the slot is never past what the relay recorded (verifySlot)
            SlotGuard.SlotState slot = guard.slot(c);
            if (slot != null && slot.confirmedFlush() < skipTo.getAsLong()) {
                state.rebase(c, fence, skipTo.getAsLong());
                guard.advance(c, skipTo.getAsLong());
            }
        }
        return drained;
    }

    /**
     * Builds and starts Debezium's engine for the offset store and sockets of key {@code offsets}; while the passes
     * bridge its start, on a thread of its own, the passes going on meanwhile. Returns the engine once started.
     */
    private EngineRunner startEngine(StreamHandler handler, FlushPolicy policy, String offsets, StartupDrain drain,
                                     StartupDrain.Result drained, BooleanSupplier keepGoing) throws InterruptedException {
        CompletableFuture<EngineRunner> starting = new CompletableFuture<>();
        Runnable start = () -> {
            try {
                EngineRunner built = new EngineRunner(EngineConfig.properties(slotTerms, terms.login(), terms.engine(), streamTarget, offsets), handler, policy,
                        slotTerms.slotName(), handler::pollingEnded);
                engineStartNanos = System.nanoTime();
                engine = built;
                built.start();
                phases.engineStarted = System.nanoTime();
                starting.complete(built);
            } catch (RuntimeException | LinkageError e) {
                starting.completeExceptionally(e);
            }
        };
        if (bridges() && drained != null) {
            // Building Debezium's engine loads its classes (about 0.5 s in a standby's JVM that never ran it): the
            // passes go on meanwhile, as they do while the engine starts, instead of leaving events waiting.
            Thread builder = new Thread(start, "outboxkit-cdc-engine-start-" + slotTerms.slotName());
            builder.setDaemon(true);
            builder.start();
            bridge(drain, drained, handler, starting, keepGoing);
        } else {
            start.run();
        }
        return started(starting);
    }

    /**
     * Streams until the session ends: the engine stopped, the session failed or lost its lease, the relay closes (at
     * the stop point when it can), or a catch-up from the table is due.
     */
    private End watch(EngineRunner runner, StreamHandler handler, RowSink sink) throws InterruptedException {
        long streamingSince = System.nanoTime();
        while (true) {
            EngineRunner.Outcome outcome = runner.outcome(Duration.ofMillis(100), wake);
            if (!phases.logged && handler.firstBatchNanos() != 0) {
                phases.log(handler.firstBatchNanos());
            }
            if (outcome != null) {
                runner.close();
                if (!lost && closing.getAsBoolean() && handler.stopReached()) {
                    sink.flush(Duration.ofSeconds(30));
                    return End.CLOSED;
                }
                fail(outcome.error() instanceof RuntimeException re ? re
                        : new IllegalStateException("Debezium's engine stopped: " + outcome.message(), outcome.error()));
                return failedOrLost();
            }
            if (error != null) {
                runner.close();
                return failedOrLost();
            }
            if (lost || !authority()) {
                lost = true;
                runner.close();
                return End.LOST;
            }
            if (closing.getAsBoolean()) {
                stopGracefully(handler, runner, sink, true);
                sink.flush(Duration.ofSeconds(30));
                return End.CLOSED;
            }
            if (catchUpDue(streamingSince)) {
                log.info("the WAL backlog is {} MB and the oldest unpublished event {} s old: publishing the backlog "
                        + "from the table, then skipping the WAL it covered", metrics.slotLagBytes.get() >> 20,
                        metrics.oldestUnackedMicros.get() == 0 ? 0
                                : (System.currentTimeMillis() * 1000 - metrics.oldestUnackedMicros.get()) / 1_000_000);
                stopGracefully(handler, runner, sink, false);
                sink.flush(Duration.ofSeconds(30));
                return End.CATCH_UP;
            }
        }
    }

    /** The session's thread was interrupted: a stop that gave up on an unanswering database. */
    private End interrupted(InterruptedException e) {
        Thread.currentThread().interrupt();
        EngineRunner running = engine;
        if (running != null && !running.done()) {
            // a stop that gave up on an unanswering database (Supervisor#abandon): Debezium stops on its own thread
            Thread closer = new Thread(running::close, "outboxkit-cdc-engine-close-" + slotTerms.slotName());
            closer.setDaemon(true);
            closer.start();
        }
        fail(new IllegalStateException("interrupted", e));
        return End.FAILED;
    }

    /**
     * Waits until no walsender streams the slot. A predecessor that handed over at its stop point is still closing
     * Debezium's engine; its walsender exits with it (PostgreSQL refuses a second walsender on an active slot, and
     * the slot may be moved only while inactive). Meanwhile {@code drain} (when given) keeps publishing from the
     * table. After {@link #PREDECESSOR_SENDER_GRACE} the walsender is ended (its instance no longer holds the lease).
     * Returns the drain's result merged with the passes made meanwhile.
     */
    private StartupDrain.Result awaitSlotFree(Connection c, StartupDrain drain, StartupDrain.Result drained,
                                              BooleanSupplier keepGoing) throws SQLException, InterruptedException {
        long start = System.nanoTime();
        long deadline = start + PREDECESSOR_SENDER_GRACE.toNanos();
        boolean ended = false;
        String busy = null;
        while (true) {
            SlotGuard.SlotState slot = guard.slot(c);
            if (slot == null || !slot.active()) {
                phases.slotFree = System.nanoTime();
                if (busy != null) {
                    log.info("slot {} is free after {} ms", slotTerms.slotName(), (System.nanoTime() - start) / 1_000_000);
                }
                return drained;
            }
            if (!keepGoing.getAsBoolean()) {
                throw new InterruptedException("stopped while waiting for slot " + slotTerms.slotName() + " (closing or lease lost)");
            }
            boolean mayEnd = handedOver && !ended;
            if (busy == null) {
                // A predecessor that handed over is closing its engine (its walsender leaves within a second or so);
                // otherwise endStaleWalsender could not end it (another role): say so once, with the way out.
                busy = mayEnd ? "waiting for the previous holder's walsender to leave slot " + slotTerms.slotName()
                        : guard.reportBusySlot(c, slot);
            }
            phase = busy;
            if (mayEnd && System.nanoTime() - deadline > 0) {
                log.warn("slot {} is still streamed {} s after its previous holder handed it over: ending that walsender",
                        slotTerms.slotName(), PREDECESSOR_SENDER_GRACE.toSeconds());
                guard.endStaleWalsender(c, fence);
                ended = true;
                busy = null; // still streamed at the next look: a walsender this role may not end, said once
                continue;
            }
            if (drain == null) {
                // No notification exists for a walsender's exit: look again in 10 ms (one catalogue read) after a
                // hand-over, whose walsender leaves within a second; every 200 ms for one left to wal_sender_timeout.
                TimeUnit.MILLISECONDS.sleep(handedOver ? 10 : 200);
            } else {
                drained = pass(c, drain, drained, keepGoing);
            }
        }
    }

    /**
     * Keeps publishing from the table until Debezium hands over its first batch (which waits for the pass in
     * progress), the engine ends, or the session must stop; then lets the stream go on with every pass's result.
     * A heartbeat row written at once gives an idle outbox a first change to end the bridge with. A pass that fails
     * ends the session as a failed start-up drain does, with the same error (the publisher's verdict: retriable, or
     * needs an operator), and the stream publishes nothing: falling back to the stream would only meet the stopped
     * producer and hide that verdict behind "Kafka failed an earlier record".
     */
    private void bridge(StartupDrain drain, StartupDrain.Result drained, StreamHandler handler,
                        CompletableFuture<EngineRunner> starting, BooleanSupplier keepGoing) {
        StartupDrain.Result result = drained;
        boolean failed = false;
        try (Connection c = pool.getConnection()) {
            writeHeartbeat(c);
            long until = System.nanoTime() + BRIDGE_MAX.toNanos();
            while (handler.firstBatchNanos() == 0 && !ended(starting) && keepGoing.getAsBoolean()) {
                if (System.nanoTime() - until > 0) {
                    log.info("Debezium is not streaming slot {} {} s after its start: the passes over the table stop, "
                            + "the stream publishes from here", slotTerms.slotName(), BRIDGE_MAX.toSeconds());
                    break;
                }
                result = pass(c, drain, result, keepGoing);
            }
        } catch (InterruptedException e) {
            log.debug("the drain bridging Debezium's start stopped: {}", e.getMessage()); // closing or lease lost
        } catch (SQLException | RuntimeException e) {
            failed = true;
            fail(e instanceof RuntimeException re ? re
                    : new IllegalStateException("the drain bridging Debezium's start failed: " + e.getMessage(), e));
        } finally {
            if (failed) {
                handler.abandon(); // the session's loop sees the error and closes the engine
            } else {
                handler.open(result);
            }
        }
    }

    /** Whether the engine being started ended already (or could not be built). */
    private static boolean ended(CompletableFuture<EngineRunner> starting) {
        return starting.isDone() && (starting.isCompletedExceptionally() || starting.join().done());
    }

    /** The engine once built and started; its build's failure as thrown by it. */
    private static EngineRunner started(CompletableFuture<EngineRunner> starting) throws InterruptedException {
        try {
            return starting.get();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException re) {
                throw re;
            }
            if (e.getCause() instanceof Error error) {
                throw error;
            }
            throw new IllegalStateException("Debezium's engine could not be started: " + e.getCause(), e.getCause());
        }
    }

    /** One more pass of {@code drain} after {@code drained}, at least {@link #BRIDGE_PASS_INTERVAL} after the last. */
    private StartupDrain.Result pass(Connection c, StartupDrain drain, StartupDrain.Result drained, BooleanSupplier keepGoing)
            throws SQLException, InterruptedException {
        long wait = lastPassNanos == 0 ? 0 : lastPassNanos + BRIDGE_PASS_INTERVAL.toNanos() - System.nanoTime();
        if (wait > 0) {
            // no notification exists for a commit to the table: the next snapshot when the interval is up
            TimeUnit.NANOSECONDS.sleep(wait);
        }
        lastPassNanos = System.nanoTime();
        StartupDrain.Result more = drain.run(c, keepGoing, drained);
        phases.passes++;
        phases.bridgedRows += more.published() + more.parked();
        return drained.then(more);
    }

    private void writeHeartbeat(Connection c) throws SQLException {
        c.setAutoCommit(true);
        try (PreparedStatement ps = c.prepareStatement(
                "INSERT INTO " + slotTerms.table(OutboxTables.CDC_HEARTBEAT) + " (slot_name) VALUES (?)")) {
            ps.setString(1, slotTerms.slotName());
            ps.executeUpdate();
        }
    }

    /** Where a session's start went, from taking the lease (for one INFO line). */
    private final class Phases {
        private final long start = System.nanoTime();
        volatile long checked;
        volatile long drained;
        volatile long slotFree;
        volatile long engineStarted;
        volatile long firstRows;
        volatile int passes;
        volatile long bridgedRows;
        volatile boolean logged;

        private String at(long nanos) {
            return nanos == 0 ? "-" : (nanos - start) / 1_000_000 + " ms";
        }

        void log(long firstChange) {
            logged = true;
            log.info("slot {} taken over (lease token {}): checks done at {}, drain of {} rows done at {}, slot free at {}, "
                            + "Debezium started at {} and streaming at {} after the lease; meanwhile {} passes over the table "
                            + "published {} more rows", slotTerms.slotName(), fence, at(checked), firstRows, at(drained),
                    at(slotFree), at(engineStarted), at(firstChange), passes, bridgedRows);
        }
    }

    /**
     * Debezium is far behind and the table holds the events (deleteAfterPublish): draining the table and
     * fast-forwarding the slot is much faster than decoding the backlog event by event.
     */
    private boolean catchUpDue(long streamingSince) {
        if (!slotTerms.deleteAfterPublish() || walOnlySeen
                || System.nanoTime() - streamingSince < Supervisor.CATCH_UP_MIN_STREAMING.toNanos()) {
            return false;
        }
        long oldest = metrics.oldestUnackedMicros.get();
        long ageMicros = oldest == 0 ? 0 : System.currentTimeMillis() * 1000 - oldest;
        return metrics.slotLagBytes.get() > Supervisor.CATCH_UP_LAG_BYTES && ageMicros > Supervisor.CATCH_UP_AGE.toNanos() / 1000;
    }

    private void stopGracefully(StreamHandler handler, EngineRunner runner, RowSink sink, boolean marker)
            throws InterruptedException {
        long began = System.nanoTime();
        phase = "stopping";
        handler.requestStop();
        if (marker) {
            try (Connection c = pool.getConnection()) {
                writeHeartbeat(c); // a change after everything committed so far: it closes the open transaction
            } catch (SQLException e) {
                log.warn("could not write the stop marker ({}); waiting for the next heartbeat instead", e.toString());
            }
        }
        boolean reached = handler.awaitStopped(terms.shutdownTimeout());
        if (!reached) {
            log.warn("no transaction boundary reached within {}; events of the transaction in progress may be "
                    + "published again after the restart", terms.shutdownTimeout());
        }
        if (marker && reached && slotTerms.deleteAfterPublish()) {
            // Hand over at the stop point: nothing more is published, and once the deletes of what Kafka acknowledged
            // are committed the table holds exactly the unpublished rows, which the successor drains while this
            // engine closes (its walsender leaves the slot with it). The stored offset does not matter to the
            // successor: it fast-forwards the slot past what its drain covered.
            if (sink.flush(Duration.ofSeconds(30))) {
                releaseLease();
                log.info("CDC relay {}: handed over {} ms after the stop began (stop point, last deletes, release); "
                        + "closing Debezium's engine", terms.instanceId(), (System.nanoTime() - began) / 1_000_000);
            }
        }
        // At the stop point the handler ended Debezium's polling: its engine is closing itself meanwhile, uninterrupted
        // (StreamHandler#endPolling); without a stop point the close below interrupts it (the WARN above said so).
        log.info("CDC relay {}: {}", terms.instanceId(), reached
                ? "Debezium's polling ended at the stop point; waiting for its engine to close itself"
                : "closing Debezium's engine without a stop point");
        runner.close();
    }

    void releaseLease() {
        if (released) {
            return; // at the stop point already
        }
        released = true;
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
