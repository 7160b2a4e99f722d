package dev.outboxkit.relay.poller.internal;

import dev.outboxkit.relay.poller.ParkPolicy;
import dev.outboxkit.runtime.Flusher;
import dev.outboxkit.runtime.StopOnFailure;
import dev.outboxkit.runtime.TracedRecords;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import javax.sql.DataSource;
import org.apache.kafka.clients.producer.Producer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Not API: public for {@code dev.outboxkit.relay.poller.PollingRelay}.
 *
 * <p>The claim loop: claim ({@link Claimer}) → publish → wait for every acknowledgement → forget
 * (commit, {@link Settlement}). A fully acknowledged batch is committed on the committer thread
 * while the loop claims the next one.
 *
 * <p>A claim deletes (or marks) its rows inside a transaction that stays open until Kafka
 * acknowledged them; the commit is the "forget". Crash anywhere before it and the database rolls
 * the claim back: the rows are published again (a duplicate), never lost.
 *
 * <p>Order, with {@code pipelineClaims}: batch N+1 is claimed while N waits for Kafka, but it is
 * sent only after every record of N has its outcome, and only if none of N's records failed retriably; otherwise N+1 is rolled
 * back unsent. So a later row of an aggregate is never first-published while an earlier one may
 * still be retried. (Rows Kafka refuses for good are parked; {@code ParkPolicy} decides whether
 * their aggregate's later rows wait.)
 */
public final class ClaimLoop implements Runnable {

    private static final Logger log = LoggerFactory.getLogger(ClaimLoop.class);
    private static final long MIN_BACKOFF_MILLIS = 100;
    private static final long MAX_BACKOFF_MILLIS = 10_000;
    private static final long MAX_DATABASE_BACKOFF_MILLIS = 1_000;

    private final String logPrefix;
    private final boolean pipelineClaims;
    private final int batchSize;
    /** How long the loop waits for a batch's acknowledgements (and then for a given-up batch's stragglers). */
    private final Duration ackBudget;
    /** The producer; the first record Kafka fails stops it, so nothing after it overtakes it. */
    private final StopOnFailure producers;
    private final TracedRecords records;
    private final RelayMetrics metrics;
    private final Waker waker;
    private final boolean hold;
    private final LoopStatus status;
    private final Claimer claimer;
    private final Settlement settlement;
    private final LeaseManager leases;
    /** The last gain of partitions ({@link LeaseManager#gainedNanos}) whose first batch was logged. */
    private long gainLogged;

    private volatile boolean stopping;
    /**
     * The batch whose outcomes the loop awaits, and the one claimed meanwhile (pipelining); both belong to the loop's
     * thread. Whatever is open when the loop ends is rolled back ({@link #run}).
     */
    private Batch current;
    private Batch next;
    private long backoffMillis;
    private boolean failedSinceLastSleep;
    private final Flusher flusher;
    /** Commits fully acknowledged batches while the loop goes on; one at a time. */
    private final ExecutorService committer;
    private Future<?> pendingCommit;
    private volatile boolean asyncCommitFailed;
    /** After a batch did not wholly reach Kafka: small batches, one record at a time, until one passes. */
    private boolean careful;
    /** Pipelined claims on the slice index: consecutive claims take alternate slices ({@link PollerSql#SLICES}). */
    private final boolean sliced;
    private int nextSlice;
    /** Since when (System.nanoTime) the loop is free to claim: the last batch's records all had their outcome. */
    private long freeSinceNanos;
    /** A batch whose claim-to-commit took longer than this is traced at DEBUG with its phases ({@link Batch#phases}). */
    private static final long SLOW_BATCH_NANOS = TimeUnit.MILLISECONDS.toNanos(25);

    /**
     * @param sliced pipelined claims alternate slices (needs the slice index: {@link PollerSql#SLICE_INDEX})
     * @param loop   this loop's number, 0 to {@code claimLoops - 1}: it claims the held partitions p with
     *               {@code p % claimLoops == loop} ({@link Ownership#share}), with a producer of its own
     */
    public ClaimLoop(LoopTerms terms, DataSource dataSource, PollerSql sql, LeaseManager leases,
                     Supplier<Producer<byte[], byte[]>> producers, RelayMetrics metrics, Waker waker, boolean sliced,
                     int loop) {
        this.logPrefix = terms.logPrefix();
        this.pipelineClaims = terms.pipelineClaims();
        this.batchSize = terms.claims().batchSize();
        this.ackBudget = terms.claims().timing().ackBudget();
        this.sliced = sliced && terms.pipelineClaims();
        String suffix = threadSuffix(terms.claimLoops(), loop);
        this.producers = new StopOnFailure(producers, logPrefix
                + (suffix.isEmpty() ? "" : " (claim loop " + loop + ")"), metrics.kafkaWrites);
        this.records = new TracedRecords(terms.route(), terms.tracing());
        this.metrics = metrics;
        this.waker = waker;
        this.hold = terms.parkPolicy() == ParkPolicy.HOLD_AGGREGATE;
        this.status = new LoopStatus(logPrefix, terms.claims().timing().idleTransactionTimeout());
        this.leases = leases;
        this.claimer = new Claimer(terms.claims(), dataSource, sql, leases, metrics, status, hold, loop,
                terms.claimLoops());
        this.settlement = new Settlement(terms.settlement(), sql, leases, metrics, status,
                this.producers::consequenceOfStop);
        this.flusher = new Flusher(this.producers::producer);
        Thread flushing = new Thread(flusher, "outbox-poll-flush" + suffix);
        flushing.setDaemon(true);
        flushing.start();
        this.committer = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "outbox-poll-commit" + suffix);
            t.setDaemon(true);
            return t;
        });
    }

    /** "" with one claim loop, else "-" and the loop's number: for thread names and the log. */
    public static String threadSuffix(int claimLoops, int loop) {
        return claimLoops == 1 ? "" : "-" + loop;
    }

    /** Asks the loop to finish the batch in flight and return. */
    public void stop() {
        stopping = true;
        waker.wake();
    }

    public long lastProgressNanos() {
        return status.lastProgressNanos;
    }

    /** Since when (System.nanoTime) Kafka has not taken a whole batch, or 0. */
    public long kafkaTroubleSinceNanos() {
        return status.kafkaTroubleSinceNanos;
    }

    /** Since when (System.nanoTime) claims or commits fail, or 0. */
    public long databaseTroubleSinceNanos() {
        return status.databaseTroubleSinceNanos;
    }

    /** Whether Kafka answered records of the last batch it did not take whole with an error (not merely late). */
    public boolean kafkaRefused() {
        return status.kafkaRefused;
    }

    public String lastError() {
        return status.lastError;
    }

    public int lastBatchSize() {
        return status.lastBatchSize;
    }

    @Override
    public void run() {
        try {
            while (true) {
                if (current == null) {
                    if (!claimAfterPause()) {
                        break;
                    }
                    if (current == null) {
                        continue;
                    }
                }
                resolveCurrent();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            log.warn("{}: claim loop interrupted; the batch in flight is rolled back (published again later)",
                    logPrefix);
        } catch (RuntimeException | Error e) {
            status.lastError = e.toString();
            log.error("{}: claim loop failed unexpectedly; the batch in flight is rolled back", logPrefix, e);
            throw e;
        } finally {
            for (Batch open : new Batch[] {current, next}) {
                if (open != null) {
                    open.withholdAll();
                    settlement.giveBack(open);
                }
            }
            awaitCommitterQuietly();
            committer.shutdown();
            flusher.stop();
        }
    }

    /**
     * With no batch in flight: waits while idle or backing off, then claims a batch and sends it ({@link #current},
     * null when there was nothing). False when the loop is to stop.
     */
    private boolean claimAfterPause() throws InterruptedException {
        if (stopping) {
            return false;
        }
        sleepIfIdleOrFailing();
        if (stopping) {
            return false;
        }
        // Nothing of the last batch is awaited any more: a producer a failed record stopped is replaced.
        producers.renew();
        current = claim();
        if (current != null) {
            send(current);
        }
        return true;
    }

    /**
     * Waits for every outcome of {@link #current} (claiming the next batch meanwhile when pipelining), sends or gives
     * back that next batch, then forgets the current one; the next becomes current.
     */
    private void resolveCurrent() throws InterruptedException {
        boolean carefulBatch = careful;
        // Pipelining: claim the next batch while this one waits for Kafka (only when configured; without the
        // slice indexes that claim steps over this batch's locked rows).
        boolean pipeline = !stopping && !carefulBatch && pipelineClaims;
        if (pipeline && sliced) {
            awaitCommitter(); // the batch before this one held the next claim's slice: its commit first
        }
        next = pipeline ? claim() : null;
        boolean resolved = await(current);
        current.resolvedNanos = System.nanoTime();
        freeSinceNanos = current.resolvedNanos;
        boolean clean = resolved && current.count(Batch.State.FAILED) == 0;
        logFirstAfterGain(current);
        if (next != null) {
            sendNextOrGiveBack(clean);
        }
        if (clean && !carefulBatch && current.count(Batch.State.ACKED) == current.size()) {
            // The common case, everything acknowledged: commit off the critical path, while the loop
            // claims the next batch. (Order does not depend on it: those records are already published.)
            Batch done = current;
            current = next;
            next = null;
            commitAsync(done);
            backoffMillis = 0;
            return;
        }
        settleCurrent(resolved, clean, carefulBatch);
        current = next;
        next = null;
    }

    /**
     * The pipelined batch is sent only after every record of the current one has its outcome, and only when none of
     * them failed: otherwise it is rolled back unsent, so a later row of an aggregate is never first-published while
     * an earlier one may still be retried.
     */
    private void sendNextOrGiveBack(boolean clean) {
        if (clean) {
            if (hold) {
                next.block(current.parkedAggregates());
            }
            send(next);
        } else {
            next.withholdAll();
            settlement.giveBack(next);
            next = null;
        }
    }

    /** Commits (or puts back) the current batch on this thread, after the commit before it; adjusts careful mode. */
    private void settleCurrent(boolean resolved, boolean clean, boolean carefulBatch) throws InterruptedException {
        awaitCommitter();
        current.commitStartNanos = System.nanoTime();
        boolean committed = settlement.finish(current, clean);
        trace(current);
        if (!resolved) {
            awaitStragglers(current);
        }
        if (!clean) {
            if (!careful) {
                log.info("{}: retrying in careful mode (batches of at most {} rows, one record at a "
                        + "time) until a batch passes", logPrefix, Claimer.CAREFUL_BATCH);
            }
            careful = true;
        } else if (carefulBatch && committed) {
            careful = false;
            log.info("{}: a careful batch passed; back to full batches", logPrefix);
        }
        if (!clean || !committed) {
            failedSinceLastSleep = true;
            metrics.retried();
        } else {
            backoffMillis = 0;
        }
    }

    /**
     * After partitions were gained (a takeover or a handoff): the first batch claimed since, once, with when it was
     * claimed and acknowledged relative to the gain, so a handoff's log shows where the successor's time went.
     */
    private void logFirstAfterGain(Batch b) {
        long gained = leases.gainedNanos();
        if (gained == 0 || gained == gainLogged || b.claimedAtNanos() - gained < 0) {
            return;
        }
        gainLogged = gained;
        long now = System.nanoTime();
        log.info("{}: first batch after acquiring partitions: {} rows, claimed {} ms and acknowledged {} ms after the "
                        + "acquisition", logPrefix, b.size(),
                TimeUnit.NANOSECONDS.toMillis(b.claimedAtNanos() - gained), TimeUnit.NANOSECONDS.toMillis(now - gained));
    }

    private void commitAsync(Batch b) throws InterruptedException {
        try {
            awaitCommitter();
        } catch (InterruptedException e) {
            settlement.giveBack(b); // acknowledged but not forgotten: published again later (a duplicate)
            throw e;
        }
        pendingCommit = committer.submit(() -> {
            b.commitStartNanos = System.nanoTime();
            boolean committed = settlement.finish(b, true);
            trace(b);
            if (!committed) {
                asyncCommitFailed = true;
            }
        });
    }

    private void awaitCommitter() throws InterruptedException {
        Future<?> f = pendingCommit;
        if (f != null) {
            try {
                f.get();
            } catch (ExecutionException e) {
                asyncCommitFailed = true;
                log.error("{}: committing a batch failed unexpectedly; its rows stay in outbox_event",
                        logPrefix, e.getCause());
            }
            pendingCommit = null;
        }
        if (asyncCommitFailed) {
            asyncCommitFailed = false;
            failedSinceLastSleep = true;
            metrics.retried();
        }
    }

    private void awaitCommitterQuietly() {
        try {
            awaitCommitter();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void sleepIfIdleOrFailing() throws InterruptedException {
        if (failedSinceLastSleep) {
            failedSinceLastSleep = false;
            backoffMillis = backoffMillis == 0 ? MIN_BACKOFF_MILLIS : Math.min(MAX_BACKOFF_MILLIS, backoffMillis * 2);
            long began = System.nanoTime();
            boolean databaseAway = status.databaseTroubleSinceNanos != 0;
            // A database that is away (a restart, a failover) is tried again every second at most: a claim against it
            // costs one failed connection, and a promoted standby must not wait for a back-off grown meanwhile.
            long until = began + TimeUnit.MILLISECONDS.toNanos(databaseAway
                    ? Math.min(backoffMillis, MAX_DATABASE_BACKOFF_MILLIS) : backoffMillis);
            while (!stopping && System.nanoTime() < until) {
                if (databaseAway && leases.lastHeartbeatNanos() - began > 0) {
                    // the database answers the lease heartbeat again (a restart or a failover is over): claim now, not
                    // at the end of a back-off that grew while it was away
                    backoffMillis = 0;
                    return;
                }
                TimeUnit.MILLISECONDS.sleep(Math.min(100, Math.max(1, (until - System.nanoTime()) / 1_000_000)));
            }
            return;
        }
        if (claimer.idle()) {
            waker.sleep(claimer.idleDelayNanos());
        }
    }



    /** Claims the next batch; null when there is nothing (or no lease, or a failure). */
    private Batch claim() {
        try {
            int slice = -1;
            if (sliced) {
                slice = nextSlice;
                nextSlice = (nextSlice + 1) % PollerSql.SLICES;
            }
            long start = System.nanoTime();
            Batch b = claimer.claim(careful, slice);
            if (b != null) {
                b.claimStartNanos = start;
                b.readyNanos = freeSinceNanos == 0 ? start : Math.min(start, freeSinceNanos);
            }
            return b;
        } catch (SQLException e) {
            status.databaseTrouble("claim", e);
            failedSinceLastSleep = true;
            return null;
        }
    }

    private void send(Batch b) {
        b.ackDeadlineNanos = System.nanoTime() + ackBudget.toNanos();
        b.sendWave(producers, records, hold);
        b.sentNanos = System.nanoTime();
        // Send now unless something useful overlaps the linger: only a pipelined claim does, and only while a
        // backlog drains (a full batch). Every record of the batch is appended already, so the producer's
        // batches are as full as they will get.
        if (!pipelineClaims || b.size() < batchSize || b.hasMoreWaves()) {
            flusher.request();
        }
    }

    /** Where a slow batch's time went, at DEBUG (every batch at TRACE): {@link Batch#phases}. */
    private void trace(Batch b) {
        b.committedNanos = System.nanoTime();
        if (log.isTraceEnabled() || (log.isDebugEnabled() && b.committedNanos - b.readyNanos > SLOW_BATCH_NANOS)) {
            log.debug("{}: batch of {}", logPrefix, b.phases());
        }
    }

    /** Waits wave after wave; false when the acknowledgement deadline passed first. */
    private boolean await(Batch b) throws InterruptedException {
        while (true) {
            if (!b.awaitWave(b.ackDeadlineNanos)) {
                b.closeWaves();
                return false;
            }
            if (!b.hasMoreWaves()) {
                b.closeWaves();
                return true;
            }
            b.blockFailedAggregates(hold);
            b.sendWave(producers, records, hold);
            flusher.request();
        }
    }







    /**
     * A given-up batch may still have records inside the producer. Give Kafka one more ack timeout
     * to answer them; if it does not, replace the producer: the old one is closed at once (its
     * pending records fail) so stale copies do not pile up, and a partition the idempotent producer
     * may have wedged (a first batch refused while later ones were written, KAFKA-14359) starts
     * again with a new producer id.
     */
    private void awaitStragglers(Batch b) throws InterruptedException {
        b.awaitWave(System.nanoTime() + ackBudget.toNanos());
        if (!b.settled()) {
            log.warn("{}: Kafka did not answer records of a given-up batch within {}; replacing the producer "
                    + "(check that the brokers are reachable)", logPrefix, ackBudget.multipliedBy(2));
            recycleProducer();
        }
    }

    private void recycleProducer() {
        producers.replace();
    }

    /** Closes the producer (after the loop ended). */
    public void closeProducer(Duration timeout) {
        producers.close(timeout);
    }


}
