package dev.outboxkit.consumer.internal;

import dev.outboxkit.consumer.DeadLetterHeaders;
import dev.outboxkit.consumer.InboxEvent;
import dev.outboxkit.consumer.LateArrivalPolicy;
import dev.outboxkit.core.Relay;
import io.micrometer.core.instrument.Timer;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Not API: public for {@code dev.outboxkit.consumer.DedupeConsumer}.
 *
 * <p>The consumer's two threads. The <em>poll thread</em> ({@link #run()}) owns the Kafka consumer:
 * it polls, decodes, hands a batch to the worker, commits finished offsets and serves rebalances.
 * The <em>worker</em> owns the database connection: per batch one transaction (record ids, handler
 * for the new ones, commit), then it forwards what must not be applied (poison, late arrivals) and
 * marks the records finished. The poll thread reads and decodes the next batches while the worker
 * writes the current one: one waits in the hand-off queue, one more in the poll thread. While the
 * worker is slow (retrying), the poll thread pauses its partitions and keeps polling, so the
 * member stays in its group without reading more.
 *
 * <p>Offsets: a record is finished when its transaction committed (or it was forwarded and Kafka
 * acknowledged); an offset is committed only when every record before it in its partition is
 * finished. A revoked partition's finished offsets are committed in the rebalance callback, which
 * first waits for the worker's transaction in flight ({@link #txLock}); the worker never touches
 * a record of a partition this member no longer owns, nor one from an earlier assignment of it
 * ({@link #owned} maps each partition to the generation of its assignment).
 */
public final class ConsumerLoop implements Runnable {

    private static final Logger log = LoggerFactory.getLogger(ConsumerLoop.class);
    private static final long WAIT_SLICE_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    private static final long HANDOFF_WAIT_MILLIS = 100;

    private final ConsumerSettings s;
    private final ConsumerMetrics metrics;
    private final RecordDecoder decoder;
    private final InboxSql sql;
    private final Forwarder forwarder;

    // shared between the poll thread and the worker
    private final Map<TopicPartition, Long> owned = new ConcurrentHashMap<>();
    private final Map<TopicPartition, Long> done = new ConcurrentHashMap<>();
    private final ReentrantLock txLock = new ReentrantLock();
    private final BlockingQueue<List<Entry>> handoff = new ArrayBlockingQueue<>(1);
    private final AtomicLong generations = new AtomicLong();

    // poll thread only
    private KafkaConsumer<byte[], byte[]> consumer;
    private final Map<TopicPartition, Long> committed = new HashMap<>();
    private boolean paused;

    // worker only
    private Connection connection;

    // read by other threads
    private volatile KafkaConsumer<byte[], byte[]> consumerForWakeup;
    private volatile boolean stopping;
    private volatile boolean running;
    private volatile boolean polled;
    private volatile String trouble;
    private volatile Throwable fatal;

    public ConsumerLoop(ConsumerSettings settings, ConsumerMetrics metrics) {
        this.s = settings;
        this.metrics = metrics;
        this.decoder = new RecordDecoder(settings.idHeader());
        this.sql = new InboxSql(settings.schema());
        this.forwarder = new Forwarder(settings.bootstrapServers(), settings.kafkaProperties(), settings.group(),
                settings.clientId(), settings.clock());
    }

    /** One record of a batch and what we know about it. */
    private static final class Entry {
        final ConsumerRecord<byte[], byte[]> record;
        final TopicPartition partition;
        final long generation;
        final InboxEvent event;
        final RuntimeException failure;
        final boolean late;

        Entry(ConsumerRecord<byte[], byte[]> record, TopicPartition partition, long generation,
              RecordDecoder.Decoded decoded, boolean late) {
            this.record = record;
            this.partition = partition;
            this.generation = generation;
            this.event = decoded.event();
            this.failure = decoded.failure();
            this.late = late;
        }
    }

    /** What one committed transaction did. */
    private record Applied(int applied, int duplicates, int late, List<Entry> lateToForward) {
    }

    /** The consumer is closing while the worker waits to retry: the rest of the batch is left for redelivery. */
    private static final class Abandoned extends Exception {
        private static final long serialVersionUID = 1L;

        Abandoned() {
            super(null, null, false, false);
        }
    }

    // =============================================================================================
    // poll thread

    @Override
    public void run() {
        running = true;
        Thread worker = new Thread(this::work, s.clientId() + "-worker");
        try {
            consumer = new KafkaConsumer<>(s.consumerConfig());
            consumerForWakeup = consumer;
            if (stopping) {
                return;
            }
            worker.start();
            if (s.topicPattern() != null) {
                consumer.subscribe(s.topicPattern(), new Listener());
            } else {
                consumer.subscribe(s.topics(), new Listener());
            }
            log.info("consumer {} of group {} started on {}", s.clientId(), s.group(),
                    s.topicPattern() != null ? "pattern " + s.topicPattern() : s.topics());
            List<Entry> next = null;
            while (!stopping && fatal == null) {
                if (next != null) {
                    // hand the batch over the moment the worker takes the previous one
                    if (handoff.offer(next, HANDOFF_WAIT_MILLIS, TimeUnit.MILLISECONDS)) {
                        next = null;
                        if (paused) {
                            setPaused(false);
                        }
                    } else if (!paused) {
                        // the worker is busy for a while (retries): keep polling, read nothing new
                        setPaused(true);
                    }
                }
                ConsumerRecords<byte[], byte[]> records;
                try {
                    records = consumer.poll(next == null ? s.pollTimeout() : Duration.ZERO);
                } catch (WakeupException e) {
                    break;
                }
                polled = true;
                if (!records.isEmpty()) {
                    if (next == null) {
                        next = decode(records);
                    } else {
                        // records of a partition assigned while paused: read them again later
                        rewind(records);
                    }
                }
                updateLag();
                commitDone();
            }
        } catch (Throwable t) {
            fatal = t;
        } finally {
            stopping = true;
            handoff.clear();
            joinWorker(worker);
            shutdown();
            running = false;
            Throwable f = fatal;
            if (f != null) {
                log.error("consumer {} of group {} stopped on an error it cannot recover from: {}. Offsets of finished "
                                + "events are committed; fix the cause and start it again.", s.clientId(), s.group(),
                        Failures.describe(f), f);
            }
        }
    }

    /** Called by the owner just before it starts the thread: from now on the consumer counts as live. */
    public void starting() {
        running = true;
    }

    /** Asks both threads to finish the batch in flight, commit and leave the group; returns at once. */
    public void stop() {
        stopping = true;
        KafkaConsumer<byte[], byte[]> c = consumerForWakeup;
        if (c != null) {
            c.wakeup();
        }
    }

    private List<Entry> decode(ConsumerRecords<byte[], byte[]> records) {
        Instant lateBefore = s.clock().instant().minus(s.retention());
        List<Entry> entries = new ArrayList<>(records.count());
        for (TopicPartition tp : records.partitions()) {
            Long generation = owned.get(tp);
            for (ConsumerRecord<byte[], byte[]> record : records.records(tp)) {
                RecordDecoder.Decoded decoded = decoder.decode(record);
                boolean late = decoded.event() != null && isLate(decoded.event(), lateBefore);
                entries.add(new Entry(record, tp, generation == null ? -1 : generation, decoded, late));
            }
        }
        return entries;
    }

    private void setPaused(boolean pause) {
        if (pause) {
            consumer.pause(consumer.assignment());
        } else {
            consumer.resume(consumer.assignment());
        }
        paused = pause;
    }

    private void rewind(ConsumerRecords<byte[], byte[]> records) {
        for (TopicPartition tp : records.partitions()) {
            consumer.seek(tp, records.records(tp).get(0).offset());
        }
    }

    private void joinWorker(Thread worker) {
        if (!worker.isAlive()) {
            return;
        }
        long deadline = System.nanoTime() + s.closeTimeout().toNanos();
        try {
            while (worker.isAlive() && System.nanoTime() < deadline) {
                worker.join(50);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (worker.isAlive()) {
            log.warn("consumer {}: the batch in flight did not finish within {}; its records are not committed and "
                    + "will be redelivered (the inbox skips what did commit)", s.clientId(), s.closeTimeout());
            worker.interrupt();
        }
    }

    private void shutdown() {
        if (consumer != null) {
            commitDone();
            try {
                // leaves the group; the rebalance listener commits what is still open
                consumer.close(CloseOptions.timeout(s.closeTimeout()));
            } catch (WakeupException e) {
                consumer.close(CloseOptions.timeout(s.closeTimeout()));
            } catch (RuntimeException e) {
                log.warn("consumer {}: error while leaving the group: {}", s.clientId(), Failures.describe(e));
            }
        }
        forwarder.close();
        metrics.close();
        log.info("consumer {} of group {} stopped", s.clientId(), s.group());
    }

    private void commitDone() {
        commit(new ArrayList<>(done.keySet()));
    }

    private void commit(Collection<TopicPartition> partitions) {
        Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
        for (TopicPartition tp : partitions) {
            Long next = done.get(tp);
            if (next != null && !next.equals(committed.get(tp))) {
                offsets.put(tp, new OffsetAndMetadata(next));
            }
        }
        if (offsets.isEmpty()) {
            return;
        }
        for (int attempt = 1; attempt <= 2; attempt++) {
            try {
                consumer.commitSync(offsets);
                offsets.forEach((tp, o) -> committed.put(tp, o.offset()));
                return;
            } catch (WakeupException e) {
                // close() woke us up; the flag is cleared now, so commit once more before leaving
                stopping = true;
            } catch (KafkaException e) {
                log.warn("group {}: offset commit of {} partition(s) failed ({}); the events are recorded in processed_event, "
                        + "so redelivered records will be skipped", s.group(), offsets.size(), Failures.describe(e));
                return;
            }
        }
    }

    private void updateLag() {
        long lag = 0;
        for (TopicPartition tp : owned.keySet()) {
            var l = consumer.currentLag(tp);
            if (l.isPresent()) {
                lag += l.getAsLong();
            }
        }
        metrics.lag.set(lag);
    }

    private final class Listener implements ConsumerRebalanceListener {
        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            if (partitions.isEmpty()) {
                return;
            }
            // the worker finishes the transaction in flight (and marks it finished) first; after
            // the lock it starts nothing on these partitions, and the finished offsets are committed
            txLock.lock();
            try {
                partitions.forEach(owned::remove);
                commit(partitions);
            } finally {
                txLock.unlock();
            }
            forget(partitions);
            log.info("group {}: {} partition(s) revoked, finished offsets committed", s.group(), partitions.size());
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> partitions) {
            txLock.lock();
            try {
                partitions.forEach(owned::remove);
            } finally {
                txLock.unlock();
            }
            forget(partitions);
            log.warn("group {}: {} partition(s) lost (this member was evicted); their new owner redelivers and the inbox "
                    + "skips what was applied here", s.group(), partitions.size());
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            long generation = generations.incrementAndGet();
            partitions.forEach(tp -> owned.put(tp, generation));
            if (paused && !partitions.isEmpty()) {
                consumer.pause(partitions);
            }
            if (!partitions.isEmpty()) {
                log.info("group {}: {} partition(s) assigned", s.group(), partitions.size());
            }
        }

        private void forget(Collection<TopicPartition> partitions) {
            partitions.forEach(tp -> {
                done.remove(tp);
                committed.remove(tp);
            });
        }
    }

    // =============================================================================================
    // worker

    private void work() {
        try {
            while (!stopping) {
                List<Entry> batch = handoff.poll(100, TimeUnit.MILLISECONDS);
                if (batch != null && !stopping) {
                    process(batch);
                }
            }
        } catch (Abandoned | InterruptedException e) {
            // closing
        } catch (Throwable t) {
            fatal = t;
            KafkaConsumer<byte[], byte[]> c = consumerForWakeup;
            if (c != null) {
                c.wakeup();
            }
        } finally {
            closeConnection();
        }
    }

    private void process(List<Entry> batch) throws Abandoned {
        List<Entry> entries = batch;
        int transientFailures = 0;
        while (true) {
            Throwable failure = null;
            txLock.lock();
            try {
                entries = owned(entries);
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
                    for (Entry e : entries) {
                        if (e.failure != null) {
                            outs.add(deadLetter(e, DeadLetterHeaders.REASON_UNDECODABLE, e.failure, 0));
                        }
                    }
                    outs.addAll(lateForwards(applied));
                    finish(entries, outs, applied);
                    return;
                }
            } finally {
                txLock.unlock();
            }
            if (Failures.isTransient(failure)) {
                transientFailures++;
                waitAfterTransient("applying a batch of " + entries.size(), failure, transientFailures);
                continue;
            }
            if (stopping) {
                // closing: leave the batch for redelivery rather than judge events now
                throw new Abandoned();
            }
            log.warn("group {}: a batch of {} events failed ({}); applying them one per transaction to find the "
                    + "failing event", s.group(), entries.size(), Failures.describe(failure));
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
    private void isolate(List<Entry> entries) throws Abandoned {
        for (Entry e : entries) {
            int attempts = 0;
            int transientFailures = 0;
            while (true) {
                Throwable failure = null;
                txLock.lock();
                try {
                    if (!owns(e)) {
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
                    if (stopping) {
                        throw new Abandoned();
                    }
                    if (!Failures.isTransient(failure)) {
                        attempts++;
                        if (Failures.isPoison(failure) || attempts >= s.maxAttempts()) {
                            log.error("group {}: event {} ({}-{} offset {}) failed {} time(s), last with {}; sending it to "
                                            + "the dead-letter topic {} and carrying on", s.group(), e.event.id(),
                                    e.record.topic(), e.record.partition(), e.record.offset(), attempts,
                                    Failures.describe(failure), s.deadLetterTopic().apply(e.record.topic()));
                            finish(List.of(e), List.of(deadLetter(e, DeadLetterHeaders.REASON_HANDLER_FAILED, failure,
                                    attempts)), null);
                            break;
                        }
                    }
                } finally {
                    txLock.unlock();
                }
                if (Failures.isTransient(failure)) {
                    transientFailures++;
                    waitAfterTransient("applying event " + e.event.id(), failure, transientFailures);
                    continue;
                }
                metrics.retries.increment();
                Duration wait = backoff(attempts);
                log.warn("group {}: event {} ({}-{} offset {}) failed (attempt {} of {}): {}; retrying in {} ms", s.group(),
                        e.event.id(), e.record.topic(), e.record.partition(), e.record.offset(), attempts, s.maxAttempts(),
                        Failures.describe(failure), wait.toMillis());
                sleep(wait);
            }
        }
    }

    /** A record to forward, and the entry it came from. */
    private record Out(Entry entry, Forwarder.Forward forward) {
    }

    /**
     * Called holding {@link #txLock}, after the transaction committed: forwards (waiting for
     * Kafka's acks; while Kafka refuses, retries with the lock released during the waits), then
     * counts and marks the entries finished, so a revocation sees either all of it or none.
     */
    private void finish(List<Entry> entries, List<Out> outs, Applied applied) throws Abandoned {
        int failures = 0;
        List<Out> pending = outs;
        while (true) {
            pending = pending.stream().filter(o -> owns(o.entry())).toList();
            try {
                forwarder.forwardAll(pending.stream().map(Out::forward).toList());
                count(applied, pending);
                entries.forEach(this::markDone);
                trouble = null;
                return;
            } catch (Forwarder.ForwardingException x) {
                failures++;
                Duration wait = backoff(failures);
                trouble = "cannot forward to " + pending.get(0).forward().topic() + ": " + x.getMessage();
                log.warn("group {}: {} (attempt {}); the original offsets stay uncommitted, retrying in {} ms{}", s.group(),
                        trouble, failures, wait.toMillis(),
                        x.failure() == dev.outboxkit.core.PublishFailure.RETRIABLE ? ". Does the topic exist?" : "");
                txLock.unlock();
                try {
                    sleep(wait);
                } finally {
                    txLock.lock();
                }
            }
        }
    }

    /** Records the ids, runs the handler for the new events and commits. Rolls nothing back itself. */
    private Applied applyInTransaction(List<Entry> entries) throws Exception {
        Connection c = connection();
        boolean routeLate = s.lateArrivalPolicy().action() != LateArrivalPolicy.Action.APPLY;
        List<InboxSql.Row> rows = new ArrayList<>(entries.size());
        List<UUID> lateIds = new ArrayList<>();
        for (Entry e : entries) {
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
        List<Entry> lateToForward = new ArrayList<>();
        Set<UUID> lateSeen = new HashSet<>();
        int duplicates = 0;
        int late = 0;
        for (Entry e : entries) {
            if (e.event == null) {
                continue;
            }
            if (e.late && routeLate) {
                if (lateKnown.contains(e.event.id()) || !lateSeen.add(e.event.id())) {
                    duplicates++;
                } else {
                    late++;
                    lateToForward.add(e);
                }
            } else if (fresh.remove(e.event.id())) {
                newEvents.add(e.event);
                if (e.late) {
                    late++;
                }
            } else {
                duplicates++;
            }
        }
        if (!newEvents.isEmpty()) {
            Timer.Sample sample = Timer.start();
            try {
                if (s.batchHandler() != null) {
                    s.batchHandler().handle(c, Collections.unmodifiableList(newEvents));
                }
                if (s.handler() != null) {
                    for (InboxEvent event : newEvents) {
                        s.handler().handle(c, event);
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

    private List<Out> lateForwards(Applied applied) {
        List<Out> forwards = new ArrayList<>(applied.lateToForward().size());
        for (Entry e : applied.lateToForward()) {
            LateArrivalPolicy policy = s.lateArrivalPolicy();
            Instant created = RecordDecoder.eventTime(e.event.createdAt(), e.event.id());
            IllegalStateException why = new IllegalStateException("event " + e.event.id() + " was created at "
                    + created + ", before the retention window of " + s.retention() + "; its id may have "
                    + "been purged already, so applying it could apply it twice");
            log.warn("group {}: late arrival: event {} ({}-{} offset {}) created {} is older than the retention window {}; "
                            + "policy {}", s.group(), e.event.id(), e.record.topic(), e.record.partition(), e.record.offset(),
                    created, s.retention(), policy.action());
            if (policy.action() == LateArrivalPolicy.Action.ROUTE) {
                forwards.add(new Out(e, new Forwarder.Forward(e.record, policy.reviewTopic(e.record.topic()),
                        DeadLetterHeaders.REASON_LATE_ARRIVAL, why, 0)));
            } else {
                forwards.add(deadLetter(e, DeadLetterHeaders.REASON_LATE_ARRIVAL, why, 0));
            }
        }
        return forwards;
    }

    private Out deadLetter(Entry e, String reason, Throwable error, int attempts) {
        if (DeadLetterHeaders.REASON_UNDECODABLE.equals(reason)) {
            log.error("group {}: record {}-{} offset {} cannot be decoded ({}); sending it to the dead-letter topic {}",
                    s.group(), e.record.topic(), e.record.partition(), e.record.offset(), error.getMessage(),
                    s.deadLetterTopic().apply(e.record.topic()));
        }
        return new Out(e, new Forwarder.Forward(e.record, s.deadLetterTopic().apply(e.record.topic()), reason, error,
                attempts));
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

    private boolean isLate(InboxEvent event, Instant lateBefore) {
        Instant created = RecordDecoder.eventTime(event.createdAt(), event.id());
        return created != null && created.isBefore(lateBefore);
    }

    private void waitAfterTransient(String what, Throwable e, int failures) throws Abandoned {
        metrics.retries.increment();
        Duration wait = backoff(failures);
        trouble = what + " failed with a transient database error: " + Failures.describe(e);
        log.warn("group {}: {} (failure {} in a row); retrying in {} ms, nothing is skipped", s.group(), trouble, failures,
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
            if (stopping) {
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

    // ---------------------------------------------------------------------------------------------
    // ownership and offsets (worker side)

    private boolean owns(Entry e) {
        Long generation = owned.get(e.partition);
        return generation != null && generation == e.generation;
    }

    private List<Entry> owned(List<Entry> entries) {
        for (Entry e : entries) {
            if (!owns(e)) {
                return entries.stream().filter(this::owns).toList();
            }
        }
        return entries;
    }

    /** Under {@link #txLock}: the record is finished; its partition's committable offset moves past it. */
    private void markDone(Entry e) {
        if (owns(e)) {
            done.merge(e.partition, e.record.offset() + 1, Math::max);
        }
    }

    // ---------------------------------------------------------------------------------------------
    // health

    public Relay.Health health() {
        Throwable f = fatal;
        if (f != null) {
            return new Relay.Health(false, false, "group " + s.group() + ": stopped: " + Failures.describe(f));
        }
        if (!running) {
            return new Relay.Health(false, false, "group " + s.group() + ": not running");
        }
        String t = trouble;
        if (t != null) {
            return new Relay.Health(true, false, "group " + s.group() + ": " + t);
        }
        if (!polled) {
            return new Relay.Health(true, false, "group " + s.group() + ": joining");
        }
        return new Relay.Health(true, true, "group " + s.group() + ": " + owned.size() + " partition(s) assigned, lag "
                + metrics.lag.get() + ", applied " + (long) metrics.applied.count() + ", duplicates "
                + (long) metrics.duplicates.count() + ", dead-lettered " + (long) metrics.deadLettered.count());
    }

    // ---------------------------------------------------------------------------------------------
    // database connection (worker only)

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
            if (Failures.isConnectionBroken(cause)) {
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
