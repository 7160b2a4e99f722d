package dev.outboxkit.relay.cdc.internal;

import dev.outboxkit.runtime.DeadLetterWriter;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The relay's writes to the outbox tables, each under the fencing token: dead letters (synchronous:
 * parked before the offset may move past them) and, with {@code deleteAfterPublish}, the deletion of
 * acknowledged rows in batches on a thread of its own, so the table keeps only what is unpublished.
 * A deletion that lags behind only means the row is published again after a crash, never lost.
 */
final class RowSink implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(RowSink.class);
    private static final int DELETE_CHUNK = 10_000;
    /**
     * How long a delete that found fewer rows than asked for waits for the transactions that wrote them to end: one whose
     * commit record is written is visible within milliseconds.
     */
    private static final Duration VISIBILITY_WAIT = Duration.ofSeconds(5);

    private final DataSource dataSource;
    private final String instanceId;
    /** The table is the truth: acknowledged rows are deleted. */
    private final boolean deleteAfterPublish;
    private final LeaseKeeper lease;
    private final LongSupplier fence;
    private final Consumer<Throwable> onFenced;
    private final CdcMetrics metrics;
    private final Duration visibilityWait;
    private final String outboxTable;
    private final String deleteSql;
    private final DeadLetterWriter deadLetters;
    private final LinkedBlockingQueue<Batch> pending = new LinkedBlockingQueue<>();
    private final AtomicLong queued = new AtomicLong();
    private final AtomicLong done = new AtomicLong();
    private final AtomicLong unseenAtFirstDelete = new AtomicLong();
    private final Thread deleter;
    private volatile boolean closed;
    /** Told of every failed delete but a fenced one (the session ends on a broken database connection). */
    private volatile Consumer<Throwable> onDatabaseError = e -> { };

    RowSink(DataSource dataSource, SlotTerms terms, String instanceId, LeaseKeeper lease, LongSupplier fence,
            Consumer<Throwable> onFenced, CdcMetrics metrics) {
        this(dataSource, terms, instanceId, lease, fence, onFenced, metrics, VISIBILITY_WAIT);
    }

    /** With the longest wait for the transactions of rows not yet visible (tests hold one open on purpose). */
    RowSink(DataSource dataSource, SlotTerms terms, String instanceId, LeaseKeeper lease, LongSupplier fence,
            Consumer<Throwable> onFenced, CdcMetrics metrics, Duration visibilityWait) {
        this.visibilityWait = visibilityWait;
        this.dataSource = dataSource;
        this.instanceId = instanceId;
        this.deleteAfterPublish = terms.deleteAfterPublish();
        this.outboxTable = terms.outboxTable();
        this.lease = lease;
        this.fence = fence;
        this.onFenced = onFenced;
        this.metrics = metrics;
        deleteSql = "DELETE FROM " + outboxTable + " WHERE seq = ANY (?)";
        deadLetters = new DeadLetterWriter(terms.schema());
        deleter = new Thread(this::deleteLoop, "outboxkit-cdc-deleter-" + terms.slotName());
        deleter.setDaemon(true);
        if (deleteAfterPublish) {
            deleter.start();
        }
    }

    /** Who is told of a failed delete (it is retried meanwhile): the session, which ends on a broken connection. */
    RowSink onDatabaseError(Consumer<Throwable> listener) {
        this.onDatabaseError = listener;
        return this;
    }

    /** Parks rows a pass over the table read (so visible): {@link #park(List, long[])} with nothing to wait for. */
    void park(List<Publisher.DeadLetter> letters) throws SQLException, InterruptedException {
        park(letters, new long[0]);
    }

    /**
     * Parks {@code letters} in {@code outbox_dead_letter} (and, with deleteAfterPublish, removes their
     * rows from the outbox) in one fenced transaction. Rows the stream handed over may not be visible yet (see
     * {@link #delete}): with deleteAfterPublish it first waits for the transactions {@code txIds} that wrote them, so
     * the delete finds them. A row it missed would stay and be parked again at the next start; a delete after the
     * transaction could remove the row {@code outbox dead-letters retry} puts back under the same seq.
     */
    void park(List<Publisher.DeadLetter> letters, long[] txIds) throws SQLException, InterruptedException {
        if (letters.isEmpty()) {
            return;
        }
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(true);
            boolean anyRow = letters.stream().anyMatch(letter -> letter.row().seq() > 0); // a message has none
            if (deleteAfterPublish && anyRow && txIds.length > 0
                    && !RunningTransactions.awaitEnded(c, txIds, visibilityWait)) {
                log.warn("parking {} events: the transactions that wrote them were still running after {} s; a row not "
                        + "deleted now is parked again at the next start", letters.size(), visibilityWait.toSeconds());
            }
            lease.inFencedTransaction(c, fence.getAsLong(), tx -> {
                List<Long> seqs = new ArrayList<>();
                List<DeadLetterWriter.Letter> rows = new ArrayList<>(letters.size());
                for (Publisher.DeadLetter letter : letters) {
                    rows.add(toLetter(letter));
                    if (letter.row().seq() > 0) {
                        seqs.add(letter.row().seq());
                    }
                }
                deadLetters.park(tx, rows, instanceId);
                if (deleteAfterPublish && !seqs.isEmpty()) {
                    try (PreparedStatement ps = tx.prepareStatement(deleteSql)) {
                        ps.setArray(1, tx.createArrayOf("bigint", seqs.toArray()));
                        ps.executeUpdate();
                    }
                }
            });
        } catch (FencedWriteException e) {
            metrics.fenceRejections.increment();
            onFenced.accept(e);
            throw e;
        }
        metrics.deadLettered.increment(letters.size());
        for (Publisher.DeadLetter letter : letters) {
            log.warn("parked event {} (seq {}) in outbox_dead_letter after {} attempt(s): {}. Retry or discard it with "
                    + "'outbox dead-letters'", letter.row().id(), letter.row().seq(), letter.attempts(),
                    letter.failure().describe());
        }
    }

    /** Poison is parked at its first attempt; a row Kafka kept refusing retriably after its counted attempts. */
    private static DeadLetterWriter.Letter toLetter(Publisher.DeadLetter letter) {
        OutboxRow row = letter.row();
        UUID id;
        try {
            id = UUID.fromString(row.id());
        } catch (RuntimeException e) {
            // Not even an id: park it under one derived from its content, so it is kept and found again.
            id = UUID.nameUUIDFromBytes(String.valueOf(row).getBytes(StandardCharsets.UTF_8));
        }
        Instant createdAt;
        try {
            createdAt = row.createdAtInstant();
        } catch (RuntimeException e) {
            createdAt = null; // parked at the time of parking
        }
        return DeadLetterWriter.Letter.of(id, row.seq(), row.aggregateType(), row.aggregateId(), row.eventType(),
                row.payload(), row.payloadBytes(), row.contentType(), row.headers(), row.topic(), createdAt, letter.failure(), letter.attempts());
    }

    /** Rows to delete, and the transactions that wrote them when those may not be visible yet. */
    private record Batch(long[] seqs, long[] txIds) {
    }

    /** Queues acknowledged rows a pass over the table read (so visible) for deletion (deleteAfterPublish only). */
    void deleteLater(long[] seqs) {
        deleteLater(seqs, new long[0]);
    }

    /**
     * Queues acknowledged rows the stream handed over for deletion (deleteAfterPublish only), with the ids of the
     * transactions that wrote them as logical decoding reports them: a delete that does not find a row waits for those
     * ({@link #delete}).
     */
    void deleteLater(long[] seqs, long[] txIds) {
        if (!deleteAfterPublish || seqs.length == 0) {
            return;
        }
        queued.addAndGet(seqs.length);
        pending.add(new Batch(seqs, txIds));
    }

    /** Waits until every queued deletion is done, or {@code timeout} passed; false on timeout. */
    boolean flush(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (done.get() < queued.get()) {
            if (System.nanoTime() > deadline || !deleter.isAlive()) {
                return false;
            }
            TimeUnit.MILLISECONDS.sleep(5);
        }
        return true;
    }

    private void deleteLoop() {
        long backoffMillis = 100;
        List<Batch> batch = new ArrayList<>();
        while (!closed || !pending.isEmpty()) {
            try {
                Batch first = pending.poll(200, TimeUnit.MILLISECONDS);
                if (first == null) {
                    continue;
                }
                batch.add(first);
                int size = first.seqs().length;
                while (size < DELETE_CHUNK && pending.peek() != null) {
                    Batch next = pending.poll();
                    batch.add(next);
                    size += next.seqs().length;
                }
                long[] all = batch.stream().flatMapToLong(b -> Arrays.stream(b.seqs())).toArray();
                long[] txIds = batch.stream().flatMapToLong(b -> Arrays.stream(b.txIds())).distinct().toArray();
                while (true) {
                    try {
                        delete(all, txIds);
                        break;
                    } catch (FencedWriteException e) {
                        metrics.fenceRejections.increment();
                        onFenced.accept(e);
                        // The new holder's start-up drain sees these rows and deals with them.
                        pending.clear();
                        done.set(queued.get());
                        batch.clear();
                        return;
                    } catch (SQLException | RuntimeException e) {
                        if (closed) {
                            log.warn("could not delete {} published rows on stop ({}); they are published again at the "
                                    + "next start (duplicates, no loss)", all.length, e.toString());
                            break;
                        }
                        log.warn("deleting {} published rows from {} failed ({}); retrying in {} ms", all.length,
                                outboxTable, e.toString(), backoffMillis);
                        onDatabaseError.accept(e);
                        TimeUnit.MILLISECONDS.sleep(backoffMillis);
                        backoffMillis = Math.min(backoffMillis * 2, 5_000);
                    }
                }
                backoffMillis = 100;
                done.addAndGet(all.length);
                batch.clear();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /**
     * Deletes the rows {@code seqs}. A row the stream handed over may not be visible yet: logical decoding sends a
     * transaction once its commit record is written, a moment before other sessions see it, and Kafka's acknowledgement
     * can come back within that moment (on a busy machine the writer's backend may wait that long for a core). Fewer
     * rows deleted than asked for therefore waits for the transactions {@code txIds} that wrote them to end and deletes
     * once more; what is still missing then was deleted before (a row published again).
     */
    private void delete(long[] seqs, long[] txIds) throws SQLException, InterruptedException {
        Long[] unique = Arrays.stream(seqs).sorted().distinct().boxed().toArray(Long[]::new);
        try (Connection c = dataSource.getConnection()) {
            int deleted = deleteOnce(c, unique);
            if (deleted < unique.length && txIds.length > 0) {
                unseenAtFirstDelete.addAndGet(unique.length - deleted);
                c.setAutoCommit(true);
                RunningTransactions.awaitEnded(c, txIds, visibilityWait);
                int more = deleteOnce(c, unique);
                log.debug("deleting {} published rows found {} at first and {} more once their transactions had ended",
                        unique.length, deleted, more);
            }
        }
    }

    private int deleteOnce(Connection c, Long[] seqs) throws SQLException {
        int[] deleted = new int[1];
        lease.inFencedTransaction(c, fence.getAsLong(), tx -> {
            try (PreparedStatement ps = tx.prepareStatement(deleteSql)) {
                ps.setArray(1, tx.createArrayOf("bigint", seqs));
                deleted[0] = ps.executeUpdate();
            }
        });
        return deleted[0];
    }

    /** Rows a delete did not find at its first try (not yet visible, or deleted before); for tests. */
    long unseenAtFirstDelete() {
        return unseenAtFirstDelete.get();
    }

    @Override
    public void close() {
        closed = true;
        try {
            deleter.join(30_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
