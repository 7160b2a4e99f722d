package dev.outboxkit.relay.poller.internal;

import dev.outboxkit.core.KafkaRecords;
import dev.outboxkit.core.PublishFailure;
import dev.outboxkit.core.internal.DeadLetterWriter;
import dev.outboxkit.core.internal.PublishFailures;
import dev.outboxkit.relay.poller.AfterPublish;
import dev.outboxkit.relay.poller.ParkPolicy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import javax.sql.DataSource;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.common.errors.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Not API: public for {@code dev.outboxkit.relay.poller.PollingRelay}.
 *
 * <p>The claim loop: claim → publish → wait for every acknowledgement → forget (commit). A fully
 * acknowledged batch is committed on the committer thread while the loop claims the next one.
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
public final class Pipeline implements Runnable {

    private static final Logger log = LoggerFactory.getLogger(Pipeline.class);
    private static final long MIN_IDLE_NANOS = TimeUnit.MICROSECONDS.toNanos(1000);
    /** For a second after rows were found, polls come at least this often (traffic is likely to go on). */
    private static final long ACTIVE_MAX_IDLE_NANOS = TimeUnit.MILLISECONDS.toNanos(2);
    private static final long ACTIVE_PERIOD_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final long MIN_BACKOFF_MILLIS = 100;
    private static final long MAX_BACKOFF_MILLIS = 10_000;
    /** Rows per claim in careful mode (after a failure: one record at a time). */
    private static final int CAREFUL_BATCH = 50;

    private final PollerSettings settings;
    private final DataSource dataSource;
    private final PollerSql sql;
    private final DeadLetterWriter deadLetters;
    private final LeaseManager leases;
    private final Supplier<Producer<byte[], byte[]>> producers;
    private volatile Producer<byte[], byte[]> producer;
    private final KafkaRecords records;
    private final RelayMetrics metrics;
    private final Waker waker;
    private final boolean hold;
    private final boolean mark;
    private final String idleTimeout;
    private final String statementTimeout;

    private volatile boolean stopping;
    private int emptyStreak;
    private long activeUntilNanos;
    private long backoffMillis;
    private boolean failedSinceLastSleep;
    private final Flusher flusher;
    /** Commits fully acknowledged batches while the loop goes on; one at a time. */
    private final ExecutorService committer;
    private Future<?> pendingCommit;
    private volatile boolean asyncCommitFailed;
    /** After a batch did not wholly reach Kafka: small batches, one record at a time, until one passes. */
    private boolean careful;

    private volatile long lastProgressNanos = System.nanoTime();
    private volatile long kafkaTroubleSinceNanos;
    private volatile long databaseTroubleSinceNanos;
    private volatile String lastError;
    private volatile int lastBatchSize;

    public Pipeline(PollerSettings settings, DataSource dataSource, PollerSql sql, LeaseManager leases,
                    Supplier<Producer<byte[], byte[]>> producers, RelayMetrics metrics, Waker waker) {
        this.settings = settings;
        this.dataSource = dataSource;
        this.sql = sql;
        this.deadLetters = new DeadLetterWriter(settings.schema());
        this.leases = leases;
        this.producers = producers;
        this.producer = producers.get();
        this.records = new KafkaRecords(settings.route());
        this.metrics = metrics;
        this.waker = waker;
        this.hold = settings.parkPolicy() == ParkPolicy.HOLD_AGGREGATE;
        this.mark = settings.afterPublish() == AfterPublish.MARK;
        this.idleTimeout = Long.toString(settings.idleTransactionTimeout().toMillis());
        this.statementTimeout = Long.toString(settings.ackTimeout().toMillis());
        this.flusher = new Flusher(() -> producer);
        Thread flushing = new Thread(flusher, "outbox-poll-flush");
        flushing.setDaemon(true);
        flushing.start();
        this.committer = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "outbox-poll-commit");
            t.setDaemon(true);
            return t;
        });
    }

    /** Asks the loop to finish the batch in flight and return. */
    public void stop() {
        stopping = true;
        waker.wake();
    }

    public long lastProgressNanos() {
        return lastProgressNanos;
    }

    /** Since when (System.nanoTime) Kafka has not taken a whole batch, or 0. */
    public long kafkaTroubleSinceNanos() {
        return kafkaTroubleSinceNanos;
    }

    /** Since when (System.nanoTime) claims or commits fail, or 0. */
    public long databaseTroubleSinceNanos() {
        return databaseTroubleSinceNanos;
    }

    public String lastError() {
        return lastError;
    }

    public int lastBatchSize() {
        return lastBatchSize;
    }

    @Override
    public void run() {
        Batch current = null;
        Batch next = null;
        try {
            while (true) {
                if (current == null) {
                    if (stopping) {
                        break;
                    }
                    sleepIfIdleOrFailing();
                    if (stopping) {
                        break;
                    }
                    current = claim();
                    if (current == null) {
                        continue;
                    }
                    send(current);
                }
                boolean carefulBatch = careful;
                // Pipelining: claim the next batch while this one waits for Kafka (only when configured: that claim
                // must step over this batch's locked rows, which costs PostgreSQL more than it saves on a fast Kafka).
                next = stopping || carefulBatch || !settings.pipelineClaims() ? null : claim();
                boolean resolved = await(current);
                boolean clean = resolved && current.count(Batch.State.FAILED) == 0;
                if (next != null) {
                    if (clean) {
                        if (hold) {
                            next.block(current.parkedAggregates());
                        }
                        send(next);
                    } else {
                        next.withholdAll();
                        giveBack(next);
                        next = null;
                    }
                }
                if (clean && !carefulBatch && current.count(Batch.State.ACKED) == current.size()) {
                    // The common case, everything acknowledged: commit off the critical path, while the loop
                    // claims the next batch. (Order does not depend on it: those records are already published.)
                    Batch done = current;
                    current = next;
                    next = null;
                    commitAsync(done);
                    backoffMillis = 0;
                    continue;
                }
                awaitCommitter();
                boolean committed = finish(current, clean);
                if (!resolved) {
                    awaitStragglers(current);
                }
                if (!clean) {
                    if (!careful) {
                        log.info("poll relay {}: retrying in careful mode (batches of at most {} rows, one record at a "
                                + "time) until a batch passes", settings.instanceId(), CAREFUL_BATCH);
                    }
                    careful = true;
                } else if (carefulBatch && committed) {
                    careful = false;
                    log.info("poll relay {}: a careful batch passed; back to full batches", settings.instanceId());
                }
                if (!clean || !committed) {
                    failedSinceLastSleep = true;
                    metrics.retried();
                } else {
                    backoffMillis = 0;
                }
                current = next;
                next = null;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            log.warn("poll relay {}: claim loop interrupted; the batch in flight is rolled back (published again later)",
                    settings.instanceId());
        } catch (RuntimeException | Error e) {
            lastError = e.toString();
            log.error("poll relay {}: claim loop failed unexpectedly; the batch in flight is rolled back", settings.instanceId(), e);
            throw e;
        } finally {
            for (Batch open : new Batch[] {current, next}) {
                if (open != null) {
                    open.withholdAll();
                    giveBack(open);
                }
            }
            awaitCommitterQuietly();
            committer.shutdown();
            flusher.stop();
        }
    }

    private void commitAsync(Batch b) throws InterruptedException {
        try {
            awaitCommitter();
        } catch (InterruptedException e) {
            giveBack(b); // acknowledged but not forgotten: published again later (a duplicate)
            throw e;
        }
        pendingCommit = committer.submit(() -> {
            if (!finish(b, true)) {
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
                log.error("poll relay {}: committing a batch failed unexpectedly; its rows stay in outbox_event",
                        settings.instanceId(), e.getCause());
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
            long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(backoffMillis);
            while (!stopping && System.nanoTime() < until) {
                TimeUnit.MILLISECONDS.sleep(Math.min(100, Math.max(1, (until - System.nanoTime()) / 1_000_000)));
            }
            return;
        }
        if (emptyStreak > 0) {
            long max = settings.maxPollDelay().toNanos();
            long delay = emptyStreak > 30 ? max : Math.min(max, MIN_IDLE_NANOS << (emptyStreak - 1));
            if (System.nanoTime() < activeUntilNanos) {
                delay = Math.min(delay, ACTIVE_MAX_IDLE_NANOS);
            }
            waker.sleep(delay);
        }
    }

    /** Claims the next batch in a new transaction; null when there is nothing (or no lease, or a failure). */
    private Batch claim() {
        Ownership own = leases.ownership();
        if (own.isEmpty()) {
            emptyStreak = Math.max(emptyStreak + 1, 31); // standby: poll at the slowest rate; a lease gain wakes us
            return null;
        }
        Connection c = null;
        try {
            c = dataSource.getConnection();
            if (emptyStreak > 0 && !anyRow(c)) {
                // Idle: a cheap look at the index instead of a claim transaction that locks the leases.
                databaseTroubleSinceNanos = 0;
                c.close();
                c = null;
                emptyStreak++;
                lastProgressNanos = System.nanoTime();
                return null;
            }
            c.setAutoCommit(false);
            List<ClaimedRow> rows = new ArrayList<>();
            // One round trip: the transaction's timeouts, then the claim.
            try (PreparedStatement ps = c.prepareStatement(own.holdsAll() ? sql.claimAll : sql.claimSome)) {
                ps.setString(1, idleTimeout);
                ps.setString(2, statementTimeout);
                ps.setString(3, statementTimeout);
                ps.setArray(4, LeaseManager.ints(c, own.partitions()));
                ps.setArray(5, LeaseManager.longs(c, own.fences()));
                ps.setString(6, settings.instanceId());
                ps.setInt(7, careful ? Math.min(CAREFUL_BATCH, settings.batchSize()) : settings.batchSize());
                ps.execute();
                if (!ps.getMoreResults()) {
                    throw new SQLException("the claim statement returned no rows result");
                }
                try (ResultSet rs = ps.getResultSet()) {
                    while (rs.next()) {
                        rows.add(ClaimedRow.read(rs));
                    }
                }
            }
            databaseTroubleSinceNanos = 0;
            if (rows.isEmpty()) {
                c.commit();
                c.close();
                emptyStreak++;
                lastProgressNanos = System.nanoTime();
                return null;
            }
            emptyStreak = 0;
            activeUntilNanos = System.nanoTime() + ACTIVE_PERIOD_NANOS;
            metrics.batch(rows.size());
            lastBatchSize = rows.size();
            Batch b = new Batch(c, own, rows, hold, careful, settings.clock());
            c = null;
            return b;
        } catch (SQLException e) {
            databaseTrouble("claim", e);
            failedSinceLastSleep = true;
            return null;
        } finally {
            if (c != null) {
                LeaseManager.rollbackQuietly(c);
                closeQuietly(c);
            }
        }
    }

    private boolean anyRow(Connection c) throws SQLException {
        c.setAutoCommit(true);
        try (PreparedStatement ps = c.prepareStatement(sql.anyRow); ResultSet rs = ps.executeQuery()) {
            return rs.next();
        }
    }

    private void send(Batch b) {
        b.ackDeadlineNanos = System.nanoTime() + settings.ackTimeout().toNanos();
        b.sendWave(producer, records, hold);
        // Send now unless something useful overlaps the linger: only a pipelined claim does, and only while a
        // backlog drains (a full batch). Every record of the batch is appended already, so the producer's
        // batches are as full as they will get.
        if (!settings.pipelineClaims() || b.size() < settings.batchSize() || b.hasMoreWaves()) {
            flusher.request();
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
            b.sendWave(producer, records, hold);
            flusher.request();
        }
    }

    /**
     * Ends the batch's transaction: parks refused rows, puts back the rows that did not make it,
     * checks the fence and commits. Returns false when the commit did not happen.
     */
    private boolean finish(Batch b, boolean clean) {
        int acked = b.count(Batch.State.ACKED);
        int refused = b.count(Batch.State.PARKED);
        // Attempts count only when Kafka answered for other records (a row's own failure, not an outage).
        boolean kafkaAnswered = acked > 0 || refused > 0;
        List<Integer> park = new ArrayList<>();
        List<Integer> putBack = new ArrayList<>();
        int[] attempts = new int[b.size()];
        for (int i = 0; i < b.size(); i++) {
            ClaimedRow row = b.rows[i];
            attempts[i] = row.attempts;
            switch (b.state(i)) {
                case ACKED -> metrics.commitToAck(b.ackMicros(i) - row.createdAtMicros());
                case PARKED -> {
                    attempts[i] = row.attempts + 1;
                    park.add(i);
                }
                case FAILED -> {
                    // A timeout says Kafka is slow or away, not that this row is bad: it never counts. Nor does a
                    // failure that needs an operator (authorization, versions): the row is fine, it must not be parked.
                    PublishFailures.Classified failure = PublishFailures.classify(b.error(i));
                    boolean counts = kafkaAnswered && failure.outcome() == PublishFailure.RETRIABLE
                            && !(failure.cause() instanceof TimeoutException);
                    if (counts) {
                        attempts[i] = row.attempts + 1;
                    }
                    if (counts && attempts[i] >= settings.maxAttempts()) {
                        park.add(i);
                    } else {
                        putBack.add(i);
                    }
                }
                default -> putBack.add(i);
            }
        }
        metrics.published(acked);
        noteKafka(b, acked, clean);
        Connection c = b.connection;
        try {
            if (!kafkaAnswered) {
                c.rollback(); // nothing reached Kafka for good: every row back exactly as it was
                return true;
            }
            if (!park.isEmpty()) {
                park(c, b, park, attempts);
            }
            if (!putBack.isEmpty()) {
                putBack(c, b, putBack, attempts);
            }
            int[] parts = b.partitions();
            if (!fenceHolds(c, b.claimedUnder, parts)) {
                LeaseManager.rollbackQuietly(c);
                closeQuietly(c);
                leases.fenced(b.claimedUnder, parts, "the commit of a batch of " + b.size() + " rows found the lease gone (a newer holder "
                        + "has it, or it expired while this instance stalled)");
                return false;
            }
            c.commit();
            lastProgressNanos = System.nanoTime();
            if (!park.isEmpty()) {
                metrics.deadLettered(park.size());
                for (int i : park) {
                    ClaimedRow r = b.rows[i];
                    Throwable e = b.error(i);
                    log.warn("poll relay {}: parked event {} (seq {}, aggregate {}/{}) in outbox_dead_letter after {} "
                                    + "attempt(s): {}. Retry or discard it with 'outbox dead-letters'",
                            settings.instanceId(), r.id, r.seq, r.aggregateType, r.aggregateId, attempts[i],
                            PublishFailures.classify(e).describe());
                }
            }
            return true;
        } catch (SQLException e) {
            LeaseManager.rollbackQuietly(c);
            databaseTrouble("commit", e);
            return false;
        } finally {
            closeQuietly(c);
        }
    }

    private void noteKafka(Batch b, int acked, boolean clean) {
        if (clean) {
            kafkaTroubleSinceNanos = 0;
            return;
        }
        if (kafkaTroubleSinceNanos == 0) {
            kafkaTroubleSinceNanos = System.nanoTime();
        }
        // The first failure that needs an operator, else the first failure: what health and the log report.
        PublishFailures.Classified sample = null;
        for (int i = 0; i < b.size() && (sample == null || sample.outcome() != PublishFailure.FATAL); i++) {
            if (b.state(i) == Batch.State.FAILED && b.error(i) != null) {
                PublishFailures.Classified c = PublishFailures.classify(b.error(i));
                if (sample == null || c.outcome() == PublishFailure.FATAL) {
                    sample = c;
                }
            }
        }
        int failed = b.count(Batch.State.FAILED);
        boolean fatal = sample != null && sample.outcome() == PublishFailure.FATAL;
        lastError = "Kafka: " + failed + " of " + b.size() + " records not acknowledged"
                + (sample == null ? "" : " (" + (fatal ? PublishFailures.OPERATOR_HINT + ": " : "") + sample.describe() + ")");
        if (fatal) {
            log.error("poll relay {}: {} of {} records of a batch were not acknowledged by Kafka ({} acknowledged): {}: {}. "
                            + "The rows stay in outbox_event (not counted as attempts, never parked for this) and are "
                            + "retried after a back-off until it is fixed", settings.instanceId(), failed, b.size(), acked,
                    PublishFailures.OPERATOR_HINT, sample.describe());
        } else {
            log.warn("poll relay {}: {} of {} records of a batch were not acknowledged by Kafka ({} acknowledged); the rows "
                            + "stay in outbox_event and are retried after a back-off. First error: {}",
                    settings.instanceId(), failed, b.size(), acked, sample == null ? "none" : sample.describe());
        }
        int risks = b.orderRisks();
        if (risks > 0) {
            log.warn("poll relay {}: {} acknowledged record(s) follow a failed record of the same aggregate in this batch; "
                    + "Kafka may hold them ahead of it until it is retried. Use ParkPolicy.HOLD_AGGREGATE to rule this out",
                    settings.instanceId(), risks);
        }
    }

    private void park(Connection c, Batch b, List<Integer> park, int[] attempts) throws SQLException {
        List<DeadLetterWriter.Letter> letters = new ArrayList<>(park.size());
        for (int i : park) {
            ClaimedRow r = b.rows[i];
            Throwable e = b.error(i);
            PublishFailures.Classified why = PublishFailures.classify(
                    e != null ? e : new IllegalStateException("parked without a recorded error"));
            letters.add(DeadLetterWriter.Letter.of(r.id, r.seq, r.aggregateType, r.aggregateId, r.eventType, r.payload,
                    r.headersJson, r.topic, r.createdAt, why, attempts[i]));
        }
        deadLetters.park(c, letters, settings.instanceId());
        if (mark) {
            try (PreparedStatement ps = c.prepareStatement(sql.deleteParked)) {
                Long[] seqs = park.stream().map(i -> b.rows[i].seq).toArray(Long[]::new);
                ps.setArray(1, c.createArrayOf("int8", seqs));
                ps.executeUpdate();
            }
        }
    }

    private void putBack(Connection c, Batch b, List<Integer> rows, int[] attempts) throws SQLException {
        int n = rows.size();
        Long[] seq = new Long[n];
        Integer[] att = new Integer[n];
        for (int k = 0; k < n; k++) {
            seq[k] = b.rows[rows.get(k)].seq;
            att[k] = attempts[rows.get(k)];
        }
        try (PreparedStatement ps = c.prepareStatement(sql.requeue)) {
            if (mark) {
                ps.setArray(1, c.createArrayOf("int8", seq));
                ps.setArray(2, c.createArrayOf("int4", att));
            } else {
                String[][] text = new String[8][n];
                for (int k = 0; k < n; k++) {
                    ClaimedRow r = b.rows[rows.get(k)];
                    text[0][k] = r.id.toString();
                    text[1][k] = r.aggregateType;
                    text[2][k] = r.aggregateId;
                    text[3][k] = r.eventType;
                    text[4][k] = r.topic;
                    text[5][k] = r.payload;
                    text[6][k] = r.headersJson;
                    text[7][k] = r.createdAtText();
                }
                ps.setArray(1, c.createArrayOf("int8", seq));
                for (int col = 0; col < 8; col++) {
                    ps.setArray(2 + col, c.createArrayOf("text", text[col]));
                }
                ps.setArray(10, c.createArrayOf("int4", att));
            }
            ps.executeUpdate();
        }
    }

    private boolean fenceHolds(Connection c, Ownership own, int[] parts) throws SQLException {
        long[] fences = new long[parts.length];
        for (int i = 0; i < parts.length; i++) {
            fences[i] = own.fence(parts[i]);
            if (fences[i] < 0) {
                return false;
            }
        }
        return sql.leases.countHeld(c, PollerSql.leaseMap(parts, fences), settings.instanceId()) == parts.length;
    }

    /** Rolls back a batch that was not (or not wholly) sent: its rows come back as they were. */
    private void giveBack(Batch b) {
        LeaseManager.rollbackQuietly(b.connection);
        closeQuietly(b.connection);
    }

    /**
     * A given-up batch may still have records inside the producer. Give Kafka one more ack timeout
     * to answer them; if it does not, replace the producer: the old one is closed at once (its
     * pending records fail) so stale copies do not pile up, and a partition the idempotent producer
     * may have wedged (a first batch refused while later ones were written, KAFKA-14359) starts
     * again with a new producer id.
     */
    private void awaitStragglers(Batch b) throws InterruptedException {
        b.awaitWave(System.nanoTime() + settings.ackTimeout().toNanos());
        if (!b.settled()) {
            log.warn("poll relay {}: Kafka did not answer records of a given-up batch within {}; replacing the producer "
                    + "(check that the brokers are reachable)", settings.instanceId(), settings.ackTimeout().multipliedBy(2));
            recycleProducer();
        }
    }

    private void recycleProducer() {
        Producer<byte[], byte[]> old = producer;
        try {
            old.close(Duration.ZERO);
        } catch (RuntimeException e) {
            log.warn("poll relay {}: closing the stuck producer failed: {}", settings.instanceId(), e.getMessage());
        }
        producer = producers.get();
    }

    /** Closes the producer (after the loop ended). */
    public void closeProducer(Duration timeout) {
        producer.close(timeout);
    }

    private void databaseTrouble(String what, SQLException e) {
        if (databaseTroubleSinceNanos == 0) {
            databaseTroubleSinceNanos = System.nanoTime();
        }
        lastError = "database (" + what + "): " + e.getMessage();
        boolean idleKilled = "25P03".equals(e.getSQLState());
        if (idleKilled) {
            log.warn("poll relay {}: the database ended this instance's claim transaction because it stalled for longer than "
                            + "{} (idle_in_transaction_session_timeout); its rows went back to outbox_event and its work is "
                            + "fenced off. Stepping down from the leases it cannot renew",
                    settings.instanceId(), settings.idleTransactionTimeout());
        } else {
            log.warn("poll relay {}: {} failed ({}, SQLState {}); the batch's rows stay in outbox_event and are retried "
                    + "after a back-off", settings.instanceId(), what, e.getMessage(), e.getSQLState());
        }
    }

    private static void closeQuietly(Connection c) {
        try {
            c.close();
        } catch (SQLException ignored) {
            // broken connection: the pool discards it
        }
    }
}
