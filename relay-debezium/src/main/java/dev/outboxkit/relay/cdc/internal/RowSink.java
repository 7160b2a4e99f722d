package dev.outboxkit.relay.cdc.internal;

import dev.outboxkit.core.internal.DeadLetterWriter;
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

    private final DataSource dataSource;
    private final CdcSettings settings;
    private final LeaseKeeper lease;
    private final LongSupplier fence;
    private final Consumer<Throwable> onFenced;
    private final CdcMetrics metrics;
    private final String deleteSql;
    private final DeadLetterWriter deadLetters;
    private final LinkedBlockingQueue<long[]> pending = new LinkedBlockingQueue<>();
    private final AtomicLong queued = new AtomicLong();
    private final AtomicLong done = new AtomicLong();
    private final Thread deleter;
    private volatile boolean closed;

    RowSink(DataSource dataSource, CdcSettings settings, LeaseKeeper lease, LongSupplier fence, Consumer<Throwable> onFenced,
            CdcMetrics metrics) {
        this.dataSource = dataSource;
        this.settings = settings;
        this.lease = lease;
        this.fence = fence;
        this.onFenced = onFenced;
        this.metrics = metrics;
        String outbox = settings.outboxTable();
        deleteSql = "DELETE FROM " + outbox + " WHERE seq = ANY (?)";
        deadLetters = new DeadLetterWriter(settings.schema());
        deleter = new Thread(this::deleteLoop, "outboxkit-cdc-deleter-" + settings.slotName());
        deleter.setDaemon(true);
        if (settings.deleteAfterPublish()) {
            deleter.start();
        }
    }

    /**
     * Parks {@code letters} in {@code outbox_dead_letter} (and, with deleteAfterPublish, removes their
     * rows from the outbox) in one fenced transaction.
     */
    void park(List<Publisher.DeadLetter> letters) throws SQLException {
        if (letters.isEmpty()) {
            return;
        }
        try (Connection c = dataSource.getConnection()) {
            lease.inFencedTransaction(c, fence.getAsLong(), tx -> {
                List<Long> seqs = new ArrayList<>();
                List<DeadLetterWriter.Letter> rows = new ArrayList<>(letters.size());
                for (Publisher.DeadLetter letter : letters) {
                    rows.add(toLetter(letter));
                    if (letter.row().seq() > 0) {
                        seqs.add(letter.row().seq());
                    }
                }
                deadLetters.park(tx, rows, settings.instanceId());
                if (settings.deleteAfterPublish() && !seqs.isEmpty()) {
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

    /** Queues acknowledged rows for deletion (deleteAfterPublish only). */
    void deleteLater(long[] seqs) {
        if (!settings.deleteAfterPublish() || seqs.length == 0) {
            return;
        }
        queued.addAndGet(seqs.length);
        pending.add(seqs);
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
        List<long[]> batch = new ArrayList<>();
        while (!closed || !pending.isEmpty()) {
            try {
                long[] first = pending.poll(200, TimeUnit.MILLISECONDS);
                if (first == null) {
                    continue;
                }
                batch.add(first);
                int size = first.length;
                while (size < DELETE_CHUNK && pending.peek() != null) {
                    long[] next = pending.poll();
                    batch.add(next);
                    size += next.length;
                }
                long[] all = new long[size];
                int at = 0;
                for (long[] part : batch) {
                    System.arraycopy(part, 0, all, at, part.length);
                    at += part.length;
                }
                while (true) {
                    try {
                        delete(all);
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
                                settings.outboxTable(), e.toString(), backoffMillis);
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

    private void delete(long[] seqs) throws SQLException {
        Arrays.sort(seqs);
        Long[] boxed = new Long[seqs.length];
        for (int i = 0; i < seqs.length; i++) {
            boxed[i] = seqs[i];
        }
        try (Connection c = dataSource.getConnection()) {
            lease.inFencedTransaction(c, fence.getAsLong(), tx -> {
                try (PreparedStatement ps = tx.prepareStatement(deleteSql)) {
                    ps.setArray(1, tx.createArrayOf("bigint", boxed));
                    ps.executeUpdate();
                }
            });
        }
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
