package dev.outboxkit.consumer.internal;

import dev.outboxkit.consumer.DeadLetterHeaders;
import dev.outboxkit.consumer.InboxEvent;
import dev.outboxkit.consumer.LateArrivalPolicy;
import dev.outboxkit.runtime.ProcessSpan;
import io.micrometer.core.instrument.Timer;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The worker thread: owns the database connection. Per batch one transaction (record ids, handler
 * for the new ones, commit), then it forwards what must not be applied (poison, late arrivals) and
 * marks the records finished in {@link Ownership}. A failed batch is applied again one event per
 * transaction to find the failing event.
 */
final class Worker implements Runnable {

    private static final Logger log = LoggerFactory.getLogger(ConsumerLoop.class);
    private static final long WAIT_SLICE_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    private final ConsumerSettings s;
    private final ConsumerMetrics metrics;
    private final InboxSql sql;
    private final Forwarder forwarder;
    private final Ownership ownership;
    private final LoopState state;

    private Connection connection;

    Worker(ConsumerSettings settings, ConsumerMetrics metrics, Forwarder forwarder, Ownership ownership,
           LoopState state) {
        this.s = settings;
        this.metrics = metrics;
        this.sql = new InboxSql(settings.schema());
        this.forwarder = forwarder;
        this.ownership = ownership;
        this.state = state;
    }

    /** What one committed transaction did. */
    private record Applied(int applied, int duplicates, int late, List<BatchEntry> lateToForward) {
    }

    /** A record to forward, and the entry it came from. */
    private record Out(BatchEntry entry, Forwarder.Forward forward) {
    }

    /** The consumer is closing while the worker waits to retry: the rest of the batch is left for redelivery. */
    private static final class Abandoned extends Exception {
        private static final long serialVersionUID = 1L;

        Abandoned() {
            super(null, null, false, false);
        }
    }

    @Override
    public void run() {
        try {
            while (!state.stopping) {
                List<BatchEntry> batch = state.handoff.poll(100, TimeUnit.MILLISECONDS);
                if (batch != null && !state.stopping) {
                    process(batch);
                }
            }
        } catch (Abandoned | InterruptedException e) {
            // closing
        } catch (Throwable t) {
            state.fatal = t;
            state.wakeUpConsumer();
        } finally {
            closeConnection();
        }
    }

    private void process(List<BatchEntry> batch) throws Abandoned {
        List<BatchEntry> entries = batch;
        int transientFailures = 0;
        while (true) {
            Throwable failure = null;
            ownership.txLock.lock();
            try {
                entries = ownership.owned(entries);
                if (entries.isEmpty()) {
                    return;
                }
                Applied applied = null;
                try {
                    applied = applyInTransaction(entries);
                } catch (Exception | LinkageError | AssertionError e) {
                    rollback(e);
                    failure = e;
                }
                if (applied != null) {
                    List<Out> outs = new ArrayList<>();
                    for (BatchEntry e : entries) {
                        if (e.failure != null) {
                            outs.add(deadLetter(e, DeadLetterHeaders.REASON_UNDECODABLE, e.failure, 0));
                        }
                    }
                    outs.addAll(lateForwards(applied));
                    finish(entries, outs, applied);
                    return;
                }
            } finally {
                ownership.txLock.unlock();
            }
            if (ApplyFailures.isTransient(failure)) {
                transientFailures++;
                waitAfterTransient("applying a batch of " + entries.size(), failure, transientFailures);
                continue;
            }
            if (state.stopping) {
                // closing: leave the batch for redelivery rather than judge events now
                throw new Abandoned();
            }
            log.warn("group {}: a batch of {} events failed ({}); applying them one per transaction to find the "
                    + "failing event", s.group(), entries.size(), ApplyFailures.describe(failure));
            metrics.retries.increment();
            isolate(entries);
            return;
        }
    }

    /**
     * After a failed batch: one transaction per event, in poll order. A failing event is retried
     * with backoff up to maxAttempts (transient database errors do not count), then dead-lettered;
     * the events after it carry on.
     */
    private void isolate(List<BatchEntry> entries) throws Abandoned {
        for (BatchEntry e : entries) {
            int attempts = 0;
            int transientFailures = 0;
            while (true) {
                Throwable failure = null;
                ownership.txLock.lock();
                try {
                    if (!ownership.owns(e)) {
                        break;
                    }
                    if (e.failure != null) {
                        finish(List.of(e), List.of(deadLetter(e, DeadLetterHeaders.REASON_UNDECODABLE, e.failure, 0)), null);
                        break;
                    }
                    Applied applied = null;
                    try {
                        applied = applyInTransaction(List.of(e));
                    } catch (Exception | LinkageError | AssertionError x) {
                        rollback(x);
                        failure = x;
                    }
                    if (applied != null) {
                        finish(List.of(e), lateForwards(applied), applied);
                        break;
                    }
                    if (state.stopping) {
                        throw new Abandoned();
                    }
                    if (!ApplyFailures.isTransient(failure)) {
                        attempts++;
                        if (ApplyFailures.isPoison(failure) || attempts >= s.maxAttempts()) {
                            log.error("group {}: event {} ({}-{} offset {}) failed {} time(s), last with {}; sending it to "
                                            + "the dead-letter topic {} and carrying on", s.group(), e.event.id(),
                                    e.record.topic(), e.record.partition(), e.record.offset(), attempts,
                                    ApplyFailures.describe(failure), s.deadLetterTopic().apply(e.record.topic()));
                            finish(List.of(e), List.of(deadLetter(e, DeadLetterHeaders.REASON_HANDLER_FAILED, failure,
                                    attempts)), null);
                            break;
                        }
                    }
                } finally {
                    ownership.txLock.unlock();
                }
                if (ApplyFailures.isTransient(failure)) {
                    transientFailures++;
                    waitAfterTransient("applying event " + e.event.id(), failure, transientFailures);
                    continue;
                }
                metrics.retries.increment();
                Duration wait = backoff(attempts);
                log.warn("group {}: event {} ({}-{} offset {}) failed (attempt {} of {}): {}; retrying in {} ms", s.group(),
                        e.event.id(), e.record.topic(), e.record.partition(), e.record.offset(), attempts, s.maxAttempts(),
                        ApplyFailures.describe(failure), wait.toMillis());
                sleep(wait);
            }
        }
    }

    /**
     * Called holding {@link Ownership#txLock}, after the transaction committed: forwards (waiting for
     * Kafka's acks; while Kafka refuses, retries with the lock released during the waits), then
     * counts and marks the entries finished, so a revocation sees either all of it or none.
     */
    private void finish(List<BatchEntry> entries, List<Out> outs, Applied applied) throws Abandoned {
        int failures = 0;
        List<Out> pending = outs;
        while (true) {
            pending = pending.stream().filter(o -> ownership.owns(o.entry())).toList();
            try {
                forwarder.forwardAll(pending.stream().map(Out::forward).toList());
                count(applied, pending);
                entries.forEach(ownership::markDone);
                state.trouble = null;
                return;
            } catch (Forwarder.ForwardingException x) {
                failures++;
                Duration wait = backoff(failures);
                state.trouble = "cannot forward to " + pending.get(0).forward().topic() + ": " + x.getMessage();
                log.warn("group {}: {} (attempt {}); the original offsets stay uncommitted, retrying in {} ms{}", s.group(),
                        state.trouble, failures, wait.toMillis(),
                        x.failure() == dev.outboxkit.relay.PublishFailure.RETRIABLE ? ". Does the topic exist?" : "");
                ownership.txLock.unlock();
                try {
                    sleep(wait);
                } finally {
                    ownership.txLock.lock();
                }
            }
        }
    }

    /** Records the ids, runs the handler for the new events and commits. Rolls nothing back itself. */
    private Applied applyInTransaction(List<BatchEntry> entries) throws Exception {
        Connection c = connection();
        boolean routeLate = s.lateArrivalPolicy().action() != LateArrivalPolicy.Action.APPLY;
        List<InboxSql.Row> rows = new ArrayList<>(entries.size());
        List<UUID> lateIds = new ArrayList<>();
        for (BatchEntry e : entries) {
            if (e.event == null) {
                continue;
            }
            if (e.late && routeLate) {
                lateIds.add(e.event.id());
            } else {
                rows.add(new InboxSql.Row(e.event.id(), e.record.topic(), e.record.partition(), e.record.offset()));
            }
        }
        Timer.Sample inboxSample = Timer.start();
        Set<UUID> fresh = sql.insert(c, s.group(), rows, s.clock().instant(), false);
        inboxSample.stop(metrics.inbox);
        Set<UUID> lateKnown = lateIds.isEmpty() ? Set.of() : sql.existing(c, s.group(), lateIds);
        List<InboxEvent> newEvents = new ArrayList<>(fresh.size());
        List<BatchEntry> newEntries = new ArrayList<>(fresh.size());
        List<BatchEntry> lateToForward = new ArrayList<>();
        Set<UUID> lateSeen = new HashSet<>();
        int duplicates = 0;
        int late = 0;
        for (BatchEntry e : entries) {
            if (e.event == null) {
                continue;
            }
            if (e.late && routeLate) {
                if (lateKnown.contains(e.event.id()) || !lateSeen.add(e.event.id())) {
                    duplicates++;
                    traceDuplicate(e);
                } else {
                    late++;
                    lateToForward.add(e);
                }
            } else if (fresh.remove(e.event.id())) {
                newEvents.add(e.event);
                newEntries.add(e);
                if (e.late) {
                    late++;
                }
            } else {
                duplicates++;
                traceDuplicate(e);
            }
        }
        if (!newEvents.isEmpty()) {
            Timer.Sample sample = Timer.start();
            try {
                if (s.batchHandler() != null) {
                    ProcessSpan span = s.tracing().startBatchProcess(newEntries.stream().map(e -> e.record).toList(), s.group());
                    try (ProcessSpan.Scope ignored = span.makeCurrent()) {
                        s.batchHandler().handle(c, Collections.unmodifiableList(newEvents));
                    } catch (Exception | Error x) {
                        span.failed(x);
                        throw x;
                    } finally {
                        span.end();
                    }
                }
                if (s.handler() != null) {
                    for (BatchEntry e : newEntries) {
                        ProcessSpan span = s.tracing().startProcess(e.record, s.group(), e.event.id());
                        try (ProcessSpan.Scope ignored = span.makeCurrent()) {
                            s.handler().handle(c, e.event);
                        } catch (Exception | Error x) {
                            span.failed(x);
                            throw x;
                        } finally {
                            span.end();
                        }
                    }
                }
            } finally {
                sample.stop(metrics.handler);
            }
        }
        c.commit();
        s.afterDatabaseCommit().run();
        return new Applied(newEvents.size(), duplicates, late, lateToForward);
    }

    /** The inbox skipped {@code e}: a process span that says so, and no handler call. */
    private void traceDuplicate(BatchEntry e) {
        ProcessSpan span = s.tracing().startProcess(e.record, s.group(), e.event.id());
        span.duplicate();
        span.end();
    }

    private List<Out> lateForwards(Applied applied) {
        List<Out> forwards = new ArrayList<>(applied.lateToForward().size());
        for (BatchEntry e : applied.lateToForward()) {
            LateArrivalPolicy policy = s.lateArrivalPolicy();
            IllegalStateException why = new IllegalStateException("event " + e.event.id() + " was created at "
                    + BatchEntry.createdAtOrIdTime(e.event) + ", before the retention window of " + s.retention() + "; its id may have "
                    + "been purged already, so applying it could apply it twice");
            log.warn("group {}: late arrival: event {} ({}-{} offset {}) created {} is older than the retention window {}; "
                            + "policy {}", s.group(), e.event.id(), e.record.topic(), e.record.partition(), e.record.offset(),
                    BatchEntry.createdAtOrIdTime(e.event), s.retention(), policy.action());
            if (policy.action() == LateArrivalPolicy.Action.ROUTE) {
                forwards.add(new Out(e, new Forwarder.Forward(e.record, policy.reviewTopic(e.record.topic()),
                        DeadLetterHeaders.REASON_LATE_ARRIVAL, why, 0)));
            } else {
                forwards.add(deadLetter(e, DeadLetterHeaders.REASON_LATE_ARRIVAL, why, 0));
            }
        }
        return forwards;
    }

    private Out deadLetter(BatchEntry e, String reason, Throwable error, int attempts) {
        if (DeadLetterHeaders.REASON_UNDECODABLE.equals(reason)) {
            log.error("group {}: record {}-{} offset {} cannot be decoded ({}); sending it to the dead-letter topic {}",
                    s.group(), e.record.topic(), e.record.partition(), e.record.offset(), error.getMessage(),
                    s.deadLetterTopic().apply(e.record.topic()));
        }
        String topic = s.deadLetterTopic().apply(e.record.topic());
        // the dead letter keeps the record's headers, traceparent included; this span says where it went
        ProcessSpan span = s.tracing().startProcess(e.record, s.group(), e.event == null ? null : e.event.id());
        span.deadLettered(topic, reason + ": " + error.getMessage());
        span.end();
        return new Out(e, new Forwarder.Forward(e.record, topic, reason, error, attempts));
    }

    private void count(Applied applied, List<Out> forwards) {
        if (applied != null) {
            metrics.applied.increment(applied.applied());
            metrics.duplicates.increment(applied.duplicates());
            metrics.lateArrivals.increment(applied.late());
        }
        long deadLettered = forwards.stream().map(Out::forward)
                .filter(f -> !DeadLetterHeaders.REASON_LATE_ARRIVAL.equals(f.reason())
                || s.lateArrivalPolicy().action() == LateArrivalPolicy.Action.DEAD_LETTER).count();
        metrics.deadLettered.increment(deadLettered);
    }

    private void waitAfterTransient(String what, Throwable e, int failures) throws Abandoned {
        metrics.retries.increment();
        Duration wait = backoff(failures);
        state.trouble = what + " failed with a transient database error: " + ApplyFailures.describe(e);
        log.warn("group {}: {} (failure {} in a row); retrying in {} ms, nothing is skipped", s.group(), state.trouble, failures,
                wait.toMillis());
        sleep(wait);
    }

    private Duration backoff(int failures) {
        long base = s.backoff().toMillis();
        long ms = base << Math.min(Math.max(failures - 1, 0), 20);
        return Duration.ofMillis(Math.min(ms, s.maxBackoff().toMillis()));
    }

    /** Waits (the poll thread keeps the member in its group meanwhile); a close abandons the wait. */
    private void sleep(Duration duration) throws Abandoned {
        long deadline = System.nanoTime() + duration.toNanos();
        while (true) {
            if (state.stopping) {
                throw new Abandoned();
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return;
            }
            try {
                TimeUnit.NANOSECONDS.sleep(Math.min(left, WAIT_SLICE_NANOS));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new Abandoned();
            }
        }
    }

    private Connection connection() throws SQLException {
        if (connection == null) {
            Connection c = s.dataSource().getConnection();
            try {
                c.setAutoCommit(false);
            } catch (SQLException e) {
                c.close();
                throw e;
            }
            connection = c;
        }
        return connection;
    }

    private void rollback(Throwable cause) {
        if (connection == null) {
            return;
        }
        try {
            connection.rollback();
            if (ApplyFailures.isConnectionBroken(cause)) {
                closeConnection();
            }
        } catch (SQLException e) {
            closeConnection();
        }
    }

    private void closeConnection() {
        if (connection != null) {
            try {
                connection.close();
            } catch (SQLException e) {
                log.debug("closing the consumer's connection failed", e);
            }
            connection = null;
        }
    }
}
