package dev.outboxkit.relay.cdc.internal;

import dev.outboxkit.core.FencedException;
import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.RecordChangeEvent;
import io.debezium.engine.StopEngineException;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.apache.kafka.connect.source.SourceRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Debezium's batches in, Kafka records out. For each batch: decode and hand what belongs to the outbox to
 * the producer. Each batch joins a queue with the position it may mark; a position is marked only when
 * Kafka answered every record of its batch and of every batch before it: then dead letters are parked,
 * the deletion of published rows queued, and the position marked as processed. The position marked is
 * always a transaction boundary (see {@link Position}); everything before it is acknowledged. At most
 * {@code maxInFlight} records are still unanswered when the handler returns; past that it waits for the oldest
 * batch, so with the default (0) every batch waits for its own answers, and with a bound above a batch the
 * handler returns at once and Debezium decodes the next batch while this one is on its way.
 *
 * <p>Graceful stop ({@link #requestStop()}): the handler finishes the transaction it is in the middle
 * of (so the offset can cover everything it published), marks that boundary, flushes the offset and
 * then ends Debezium's polling ({@link StopEngineException}). Nothing published is left outside the stored offset,
 * so a restart publishes nothing twice.
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
    private final int maxInFlight;
    /** Batches handed to the producer, oldest first, with the position each may mark (poll thread only). */
    private final ArrayDeque<Pending> pending = new ArrayDeque<>();
    private int inFlight;
    private final CountDownLatch stopped = new CountDownLatch(1);
    private volatile StartupDrain.Result drained;
    private volatile boolean stopRequested;
    private volatile boolean stopReached;
    private volatile long batches;
    /** Held closed while the session still publishes from the table (the bridge); null when there is none. */
    private final CountDownLatch bridged;
    private volatile long firstBatchNanos;
    /** This handler ended Debezium's polling ({@link #endPolling}): the engine closes itself. */
    private volatile boolean pollingEnded;
    /** The bridge failed: the session ends without the stream publishing ({@link #abandon()}). */
    private volatile boolean abandoned;
    private boolean warnedAboutMessages;
    /** Told (once) of an event without a row in the table while the table should be the truth ({@link Session#walOnlyEvent}). */
    private final Consumer<String> walOnlyEvent;

    /** Last record of the transaction in progress (poll thread only); null at a boundary. */
    private RecordChangeEvent<SourceRecord> openTail;
    private Long openTx;

    /**
     * Records on their way to Kafka, the transactions that wrote them (their deletes may have to wait for those to be
     * visible, {@link RowSink#deleteLater(long[], long[])}), and the position to mark once they and everything before
     * are answered.
     */
    private record Pending(Publisher.Sent sent, long[] txIds, RecordChangeEvent<SourceRecord> mark) {
    }

    StreamHandler(ChangeDecoder decoder, Publisher publisher, RowSink sink, CdcMetrics metrics, FlushPolicy flushPolicy,
                  BooleanSupplier authority, StartupDrain.Result drained, boolean trackInFlightAge, int maxInFlight,
                  boolean bridged, Consumer<String> walOnlyEvent) {
        this.walOnlyEvent = walOnlyEvent;
        this.decoder = decoder;
        this.publisher = publisher;
        this.sink = sink;
        this.metrics = metrics;
        this.flushPolicy = flushPolicy;
        this.authority = authority;
        this.drained = drained == null || drained.drainedSeqs().length == 0 ? null : drained;
        this.bridged = bridged ? new CountDownLatch(1) : null;
        this.trackInFlightAge = trackInFlightAge;
        this.maxInFlight = maxInFlight;
    }

    /**
     * Ends the bridge: the table's passes are over and acknowledged, {@code drained} is all they handled; the first
     * batch (waiting in {@link #handleBatch}) goes on with it.
     */
    void open(StartupDrain.Result drained) {
        this.drained = drained == null || drained.drainedSeqs().length == 0 ? null : drained;
        if (bridged != null) {
            bridged.countDown();
        }
    }

    /**
     * Ends the bridge without the stream: a pass failed and the session ends; the batch Debezium hands over ends its
     * polling, neither published nor marked (streamed again at the next start).
     */
    void abandon() {
        abandoned = true;
        if (bridged != null) {
            bridged.countDown();
        }
    }

    /** When Debezium handed over its first batch (System.nanoTime()), 0 before. */
    long firstBatchNanos() {
        return firstBatchNanos;
    }

    void requestStop() {
        stopRequested = true;
    }

    /** Waits until the handler reached its stop point; false on timeout. */
    boolean awaitStopped(Duration timeout) throws InterruptedException {
        return stopped.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** True once the handler ended Debezium's polling: the engine then closes itself, with no interrupt. */
    boolean pollingEnded() {
        return pollingEnded;
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
        if (firstBatchNanos == 0) {
            firstBatchNanos = System.nanoTime();
        }
        if (bridged != null) {
            bridged.await(); // the session's pass over the table in progress ends first (Session's class doc)
        }
        if (stopReached || abandoned) {
            // past the stop point, or the bridge failed: neither published nor marked (streamed again at the next start)
            throw endPolling(stopReached ? "past the stop point" : "the drain bridging Debezium's start failed");
        }
        if (!authority.getAsBoolean()) {
            throw new FencedException("the relay lease is no longer this instance's: stopping without publishing");
        }
        boolean stopping = stopRequested;
        int limit = events.size();
        if (stopping) {
            if (openTail == null) {
                settle(committer, true);
                throw finishStop(committer);
            }
            limit = firstCompletion(events);
        }
        Decoded batch = decode(events, limit);
        Mark mark = lastBoundary(events, batch.changes(), limit);
        boolean stopNow = stopping && limit < events.size();
        if (stopNow) {
            mark = stopPoint(mark);
        }
        send(batch, mark);
        settle(committer, stopNow);
        batches++;
        if (stopNow) {
            throw finishStop(committer);
        } else {
            committer.markBatchFinished();
        }
    }

    /**
     * A batch's first {@code limit} changes, and the rows among them to publish: {@code rowAt} holds the index in the
     * batch of each row.
     */
    private record Decoded(List<ChangeDecoder.Change> changes, List<OutboxRow> rows, int[] rowAt) {
    }

    /**
     * Where a batch may be marked: {@code event}, the last position of the batch that may be stored, and where it is
     * ({@code at}: its index in the batch; -1 for the open transaction's last change from an earlier batch; none (-2)
     * when this batch completes no transaction); {@code tailAt}, the index of the open transaction's last change when it
     * is in this batch, else -1.
     */
    private record Mark(RecordChangeEvent<SourceRecord> event, int at, int tailAt) {
    }

    /** Decodes the first {@code limit} events, skipping the WAL copies of rows the table's passes handled. */
    private Decoded decode(List<RecordChangeEvent<SourceRecord>> events, int limit) {
        List<ChangeDecoder.Change> changes = new ArrayList<>(limit);
        List<OutboxRow> rows = new ArrayList<>(limit);
        int[] rowAt = new int[limit]; // the index in 'events' of each row
        for (int i = 0; i < limit; i++) {
            ChangeDecoder.Change change = decoder.decode(events.get(i).record());
            changes.add(change);
            if (change.kind() == ChangeDecoder.Kind.OUTBOX_ROW) {
                StartupDrain.Result d = drained;
                if (d != null && d.drained(change.row().seq(), change.position().lsn())) {
                    metrics.duplicatesSkipped.increment();
                    continue;
                }
                rowAt[rows.size()] = i;
                rows.add(change.row());
            } else if (change.kind() == ChangeDecoder.Kind.OUTBOX_MESSAGE) {
                rowAt[rows.size()] = i;
                rows.add(change.row());
                if (!trackInFlightAge && !warnedAboutMessages) {
                    walOnlyMessage(change);
                }
            }
        }
        return new Decoded(changes, rows, rowAt);
    }

    /** A logical decoding message while the table should hold every unpublished event: said once, remembered. */
    private void walOnlyMessage(ChangeDecoder.Change change) {
        warnedAboutMessages = true;
        log.error("a logical decoding message (the writer's emit-message mode) arrived while the relay runs with "
                + "deleteAfterPublish(true), where the table is meant to hold every unpublished event. It is "
                + "published; the relay remembers that this slot carries events the WAL alone holds "
                + "(outbox_cdc_slot.wal_only_seen_at), so from now on it never fast-forwards the slot and stops "
                + "rather than create it again when it is lost. Configure deleteAfterPublish(false) for the "
                + "emit-message writer mode.");
        Long at = change.position().lsn();
        walOnlyEvent.accept("a logical decoding message at " + (at == null ? "an unknown position" : Lsns.format(at)));
    }

    /**
     * The last position of the first {@code limit} changes that may be stored: the end of the last transaction they
     * complete. Follows the open transaction across batches ({@link #openTail}).
     */
    private Mark lastBoundary(List<RecordChangeEvent<SourceRecord>> events, List<ChangeDecoder.Change> changes, int limit) {
        RecordChangeEvent<SourceRecord> candidate = null;
        int candidateAt = -2;
        int tailAt = -1;
        for (int i = 0; i < limit; i++) {
            Position position = changes.get(i).position();
            if (position.boundary()) {
                if (position.isCommit()) {
                    // proof that the open transaction is complete; its last change is the position to store
                    if (openTail != null) {
                        candidate = openTail;
                        candidateAt = tailAt;
                    }
                } else {
                    candidate = events.get(i); // a non-transactional message is its own transaction
                    candidateAt = i;
                }
                openTail = null;
                openTx = null;
                passed(position);
            } else if (position.inTransaction()) {
                if (openTail != null && !position.txId().equals(openTx)) {
                    candidate = openTail;
                    candidateAt = tailAt;
                }
                openTail = events.get(i);
                tailAt = i;
                openTx = position.txId();
                passed(position);
            }
        }
        return new Mark(candidate, candidateAt, tailAt);
    }

    /** Stopping, and the change after the batch's first {@code limit} showed the open transaction complete. */
    private Mark stopPoint(Mark mark) {
        // Record 'limit' shows the open transaction is complete: its last change is the stop position.
        // Record 'limit' itself is neither published nor marked; it is streamed again at the next start.
        Mark stop = openTail != null ? new Mark(openTail, mark.tailAt(), mark.tailAt()) : mark;
        openTail = null;
        openTx = null;
        return stop;
    }

    /** Hands the batch's rows to the producer: those up to the mark with it, the rest to wait for a later position. */
    private void send(Decoded batch, Mark mark) {
        List<OutboxRow> rows = batch.rows();
        int[] rowAt = batch.rowAt();
        if (!rows.isEmpty()) {
            metrics.batchSize.record(rows.size());
        }
        // Rows up to the candidate go with it; the rest wait for a later batch's position.
        int upTo = 0;
        while (upTo < rows.size() && rowAt[upTo] <= mark.at()) {
            upTo++;
        }
        if (upTo > 0 || mark.event() != null) {
            enqueue(upTo == 0 ? null : publisher.send(rows.subList(0, upTo)), txIds(batch.changes(), rowAt, 0, upTo),
                    mark.event());
        }
        if (upTo < rows.size()) {
            enqueue(publisher.send(rows.subList(upTo, rows.size())), txIds(batch.changes(), rowAt, upTo, rows.size()), null);
        }
    }

    private void enqueue(Publisher.Sent sent, long[] txIds, RecordChangeEvent<SourceRecord> mark) {
        pending.add(new Pending(sent, txIds, mark));
        inFlight += sent == null ? 0 : sent.size();
    }

    /** The distinct transaction ids of rows {@code from} to {@code to} (their changes' positions). */
    private static long[] txIds(List<ChangeDecoder.Change> changes, int[] rowAt, int from, int to) {
        return Arrays.stream(rowAt, from, to).mapToObj(i -> changes.get(i).position().txId())
                .filter(Objects::nonNull).mapToLong(Long::longValue).distinct().toArray();
    }

    /**
     * Settles the batches Kafka has answered, oldest first (all of them, waiting, when {@code all}), then waits
     * for the oldest while more than {@code maxInFlight} records are unanswered.
     */
    private void settle(DebeziumEngine.RecordCommitter<RecordChangeEvent<SourceRecord>> committer, boolean all)
            throws InterruptedException {
        while (!pending.isEmpty() && (all || inFlight > maxInFlight || answered(pending.peek()))) {
            settleOldest(committer);
        }
        if (trackInFlightAge) {
            metrics.oldestUnackedMicros.set(oldestUnacked());
        }
    }

    private static boolean answered(Pending p) {
        return p.sent() == null || p.sent().answered();
    }

    /** Dead letters parked and published rows queued for deletion before the position may move past them. */
    private void settleOldest(DebeziumEngine.RecordCommitter<RecordChangeEvent<SourceRecord>> committer)
            throws InterruptedException {
        Pending p = pending.poll();
        if (p.sent() != null) {
            Publisher.Outcome outcome = publisher.settle(p.sent());
            inFlight -= p.sent().size();
            try {
                sink.park(outcome.deadLetters(), p.txIds());
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
            sink.deleteLater(n == seqs.length ? seqs : Arrays.copyOf(seqs, n), p.txIds());
        }
        if (p.mark() != null) {
            if (log.isDebugEnabled()) {
                log.debug("marking {} processed ({} records still on their way)", p.mark().record().sourceOffset(), inFlight);
            }
            committer.markProcessed(p.mark());
        }
    }

    /** created_at of the oldest unanswered event (micros), 0 when none; a row that has none counts as none. */
    private long oldestUnacked() {
        for (Pending p : pending) {
            OutboxRow first = p.sent() == null ? null : p.sent().first();
            if (first != null) {
                try {
                    return micros(first);
                } catch (RuntimeException e) {
                    return 0; // not a timestamp: the publisher parks the event
                }
            }
        }
        return 0;
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

    /**
     * Ends Debezium's polling from its own thread: Debezium 3.6.1's polling loop ends on this exception (at DEBUG), and
     * its engine then closes itself in order with no thread interrupted: the record pool is shut down with nothing in
     * it, the offset commit finds nothing new (the stop point's was forced), and the task stops (confirming the stored
     * offset to the slot, closing its connections, so the walsender leaves). A close from outside instead interrupts
     * the polling thread wherever it is, e.g. in the task's offset read and confirmation at the start of its next
     * poll, which Debezium logged at ERROR on a clean stop; and a batch it polled meanwhile met the shut-down record
     * pool (a RejectedExecutionException at ERROR).
     */
    private StopEngineException endPolling(String why) {
        pollingEnded = true;
        log.debug("ending Debezium's polling: {}", why);
        return new StopEngineException("outboxkit: " + why);
    }

    /** Marks the stop point and stores it at once; returns what ends Debezium's polling (the caller throws it). */
    private StopEngineException finishStop(DebeziumEngine.RecordCommitter<RecordChangeEvent<SourceRecord>> committer)
            throws InterruptedException {
        flushPolicy.forceNext();
        committer.markBatchFinished();
        stopReached = true;
        stopped.countDown();
        log.info("stop point reached: every published event is covered by the stored offset");
        return endPolling("stop point reached");
    }
}
