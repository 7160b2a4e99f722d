package dev.outboxkit.relay.cdc.internal;

import dev.outboxkit.core.FencedException;
import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.RecordChangeEvent;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.apache.kafka.connect.source.SourceRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Debezium's batches in, Kafka records out. For each batch: decode, publish what belongs to the
 * outbox, wait for every acknowledgement, park dead letters, queue the deletion of published rows,
 * and only then mark a position as processed. The position marked is always a transaction boundary
 * (see {@link Position}); everything before it is acknowledged.
 *
 * <p>Graceful stop ({@link #requestStop()}): the handler finishes the transaction it is in the middle
 * of (so the offset can cover everything it published), marks that boundary, flushes the offset and
 * then ignores further records. Nothing published is left outside the stored offset, so a restart
 * publishes nothing twice.
 */
final class StreamHandler implements DebeziumEngine.ChangeConsumer<RecordChangeEvent<SourceRecord>> {

    private static final Logger log = LoggerFactory.getLogger(StreamHandler.class);

    private final ChangeDecoder decoder;
    private final Publisher publisher;
    private final RowSink sink;
    private final CdcMetrics metrics;
    private final FlushPolicy flushPolicy;
    private final BooleanSupplier authority;
    private final boolean trackInFlightAge;
    private final CountDownLatch stopped = new CountDownLatch(1);
    private volatile StartupDrain.Result drained;
    private volatile boolean stopRequested;
    private volatile boolean stopReached;
    private volatile long batches;
    private boolean warnedAboutMessages;

    /** Last record of the transaction in progress (poll thread only); null at a boundary. */
    private RecordChangeEvent<SourceRecord> openTail;
    private Long openTx;

    StreamHandler(ChangeDecoder decoder, Publisher publisher, RowSink sink, CdcMetrics metrics, FlushPolicy flushPolicy,
                  BooleanSupplier authority, StartupDrain.Result drained, boolean trackInFlightAge) {
        this.decoder = decoder;
        this.publisher = publisher;
        this.sink = sink;
        this.metrics = metrics;
        this.flushPolicy = flushPolicy;
        this.authority = authority;
        this.drained = drained == null || drained.drainedSeqs().length == 0 ? null : drained;
        this.trackInFlightAge = trackInFlightAge;
    }

    void requestStop() {
        stopRequested = true;
    }

    /** Waits until the handler reached its stop point; false on timeout. */
    boolean awaitStopped(Duration timeout) throws InterruptedException {
        return stopped.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    boolean stopReached() {
        return stopReached;
    }

    long batches() {
        return batches;
    }

    @Override
    public void handleBatch(List<RecordChangeEvent<SourceRecord>> events,
                            DebeziumEngine.RecordCommitter<RecordChangeEvent<SourceRecord>> committer) throws InterruptedException {
        if (stopReached) {
            return; // past the stop point: neither published nor marked; streamed again at the next start
        }
        if (!authority.getAsBoolean()) {
            throw new FencedException("the relay lease is no longer this instance's: stopping without publishing");
        }
        boolean stopping = stopRequested;
        int limit = events.size();
        if (stopping) {
            if (openTail == null) {
                finishStop(committer);
                return;
            }
            limit = firstCompletion(events);
        }

        List<ChangeDecoder.Change> changes = new ArrayList<>(limit);
        List<OutboxRow> rows = new ArrayList<>(limit);
        for (int i = 0; i < limit; i++) {
            ChangeDecoder.Change change = decoder.decode(events.get(i).record());
            changes.add(change);
            if (change.kind() == ChangeDecoder.Kind.OUTBOX_ROW) {
                StartupDrain.Result d = drained;
                if (d != null && d.drained(change.row().seq(), change.position().lsn())) {
                    metrics.duplicatesSkipped.increment();
                    continue;
                }
                rows.add(change.row());
            } else if (change.kind() == ChangeDecoder.Kind.OUTBOX_MESSAGE) {
                rows.add(change.row());
                if (!trackInFlightAge && !warnedAboutMessages) {
                    warnedAboutMessages = true;
                    log.error("a logical decoding message (the writer's emit-message mode) arrived while the relay runs with "
                            + "deleteAfterPublish(true): messages are published, but at start-up the relay skips WAL that the "
                            + "table vouches for, and messages emitted while it was down would be skipped. Configure "
                            + "deleteAfterPublish(false) for the emit-message writer mode.");
                }
            }
        }
        if (!rows.isEmpty()) {
            publish(rows);
        }

        RecordChangeEvent<SourceRecord> candidate = null;
        for (int i = 0; i < limit; i++) {
            Position position = changes.get(i).position();
            if (position.boundary()) {
                if (position.isCommit()) {
                    // proof that the open transaction is complete; its last change is the position to store
                    if (openTail != null) {
                        candidate = openTail;
                    }
                } else {
                    candidate = events.get(i); // a non-transactional message is its own transaction
                }
                openTail = null;
                openTx = null;
                passed(position);
            } else if (position.inTransaction()) {
                if (openTail != null && !position.txId().equals(openTx)) {
                    candidate = openTail;
                }
                openTail = events.get(i);
                openTx = position.txId();
                passed(position);
            }
        }
        boolean stopNow = false;
        if (stopping && limit < events.size()) {
            // Record 'limit' shows the open transaction is complete: its last change is the stop position.
            // Record 'limit' itself is neither published nor marked; it is streamed again at the next start.
            if (openTail != null) {
                candidate = openTail;
            }
            openTail = null;
            openTx = null;
            stopNow = true;
        }
        if (candidate != null) {
            if (log.isDebugEnabled()) {
                log.debug("marking {} processed (batch of {}, open transaction {})", candidate.record().sourceOffset(),
                        events.size(), openTx);
            }
            committer.markProcessed(candidate);
        }
        batches++;
        if (stopNow) {
            finishStop(committer);
        } else {
            committer.markBatchFinished();
        }
    }

    private void publish(List<OutboxRow> rows) throws InterruptedException {
        if (trackInFlightAge) {
            try {
                metrics.oldestUnackedMicros.set(micros(rows.get(0)));
            } catch (RuntimeException e) {
                // not a timestamp: the publisher parks the event
            }
        }
        Publisher.Outcome outcome = publisher.publish(rows);
        try {
            sink.park(outcome.deadLetters());
        } catch (SQLException e) {
            throw new IllegalStateException("could not park " + outcome.deadLetters().size()
                    + " events in outbox_dead_letter: " + e.getMessage(), e);
        }
        int n = 0;
        long[] seqs = new long[outcome.acked().size()];
        for (OutboxRow row : outcome.acked()) {
            if (row.seq() > 0) {
                seqs[n++] = row.seq();
            }
        }
        sink.deleteLater(n == seqs.length ? seqs : java.util.Arrays.copyOf(seqs, n));
        if (trackInFlightAge) {
            metrics.oldestUnackedMicros.set(0);
        }
    }

    private static long micros(OutboxRow row) {
        java.time.Instant at = row.createdAtInstant();
        return at.getEpochSecond() * 1_000_000 + at.getNano() / 1000;
    }

    /** Index of the first record that shows the open transaction complete, or the batch size. */
    private int firstCompletion(List<RecordChangeEvent<SourceRecord>> events) {
        for (int i = 0; i < events.size(); i++) {
            Position p = Position.of(events.get(i).record().sourceOffset());
            if (p.boundary() || (p.inTransaction() && !p.txId().equals(openTx))) {
                return i;
            }
        }
        return events.size();
    }

    /** The start-up drain's memory is needed only until the stream passes the drain's snapshot. */
    private void passed(Position position) {
        StartupDrain.Result d = drained;
        if (d != null && position.commitLsn() >= d.snapshotLsn()) {
            drained = null;
        }
    }

    private void finishStop(DebeziumEngine.RecordCommitter<RecordChangeEvent<SourceRecord>> committer)
            throws InterruptedException {
        flushPolicy.forceNext();
        committer.markBatchFinished();
        stopReached = true;
        stopped.countDown();
        log.info("stop point reached: every published event is covered by the stored offset");
    }
}
