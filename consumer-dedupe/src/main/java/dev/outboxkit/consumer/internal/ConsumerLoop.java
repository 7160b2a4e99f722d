package dev.outboxkit.consumer.internal;

import dev.outboxkit.consumer.DeadLetterHeaders;
import dev.outboxkit.consumer.InboxEvent;
import dev.outboxkit.consumer.LateArrivalPolicy;
import dev.outboxkit.core.EventIds;
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
 * The poll loop. Everything that touches the Kafka consumer or the database connection runs on
 * this one thread. Per poll batch: decode, one database transaction (record ids, handler for the
 * new ones, commit), forward what must not be applied (poison, late arrivals) and wait for Kafka's
 * acks, then commit the batch's offsets. An offset is committed only when every record before it
 * in its partition is finished, so a crash or a rebalance at any point redelivers, never skips.
 */
public final class ConsumerLoop implements Runnable {

    private static final Logger log = LoggerFactory.getLogger(ConsumerLoop.class);
    private static final Duration WAIT_SLICE = Duration.ofMillis(200);

    private final ConsumerSettings s;
    private final ConsumerMetrics metrics;
    private final RecordDecoder decoder;
    private final InboxSql sql;
    private final Forwarder forwarder;

    // poll thread only
    private KafkaConsumer<byte[], byte[]> consumer;
    private Connection connection;
    private final Set<TopicPartition> assigned = new HashSet<>();
    /** Per partition: the offset after the last record that is finished, with all before it finished too. */
    private final Map<TopicPartition, Long> done = new HashMap<>();
    private final Map<TopicPartition, Long> committed = new HashMap<>();
    private boolean waiting;

    // read by other threads
    private volatile KafkaConsumer<byte[], byte[]> consumerForWakeup;
    private volatile boolean stopping;
    private volatile boolean running;
    private volatile boolean polled;
    private volatile int assignedCount;
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
        final InboxEvent event;
        final RuntimeException failure;
        final boolean late;

        Entry(ConsumerRecord<byte[], byte[]> record, RecordDecoder.Decoded decoded, boolean late) {
            this.record = record;
            this.partition = new TopicPartition(record.topic(), record.partition());
            this.event = decoded.event();
            this.failure = decoded.failure();
            this.late = late;
        }
    }

    /** What one committed transaction did. */
    private record Applied(int applied, int duplicates, int late, List<Entry> lateToForward) {
    }

    /** Thrown out of a wait when the consumer is closing: the rest of the batch is left for redelivery. */
    private static final class Abandoned extends Exception {
        private static final long serialVersionUID = 1L;

        Abandoned() {
            super(null, null, false, false);
        }
    }

    // ---------------------------------------------------------------------------------------------
    // lifecycle

    @Override
    public void run() {
        running = true;
        try {
            consumer = new KafkaConsumer<>(s.consumerConfig());
            consumerForWakeup = consumer;
            if (stopping) {
                return;
            }
            if (s.topicPattern() != null) {
                consumer.subscribe(s.topicPattern(), new Listener());
            } else {
                consumer.subscribe(s.topics(), new Listener());
            }
            log.info("consumer {} of group {} started on {}", s.clientId(), s.group(),
                    s.topicPattern() != null ? "pattern " + s.topicPattern() : s.topics());
            while (!stopping) {
                ConsumerRecords<byte[], byte[]> records;
                try {
                    records = consumer.poll(s.pollTimeout());
                } catch (WakeupException e) {
                    break;
                }
                polled = true;
                updateLag();
                if (!records.isEmpty()) {
                    try {
                        process(records);
                    } catch (Abandoned e) {
                        break;
                    }
                }
                commitDone();
            }
        } catch (Throwable t) {
            fatal = t;
            log.error("consumer {} of group {} stopped on an error it cannot recover from: {}. Offsets of finished "
                    + "events are committed; fix the cause and start it again.", s.clientId(), s.group(), Failures.describe(t), t);
        } finally {
            shutdown();
            running = false;
        }
    }

    /** Asks the loop to finish its batch, commit and leave the group; returns at once. */
    public void stop() {
        stopping = true;
        KafkaConsumer<byte[], byte[]> c = consumerForWakeup;
        if (c != null) {
            c.wakeup();
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
        closeConnection();
        metrics.close();
        log.info("consumer {} of group {} stopped", s.clientId(), s.group());
    }

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
        return new Relay.Health(true, true, "group " + s.group() + ": " + assignedCount + " partition(s) assigned, lag "
                + metrics.lag.get() + ", applied " + (long) metrics.applied.count() + ", duplicates "
                + (long) metrics.duplicates.count() + ", dead-lettered " + (long) metrics.deadLettered.count());
    }

    // ---------------------------------------------------------------------------------------------
    // one poll batch

    private void process(ConsumerRecords<byte[], byte[]> records) throws Abandoned {
        Instant lateBefore = s.clock().instant().minus(s.retention());
        List<Entry> entries = new ArrayList<>(records.count());
        for (ConsumerRecord<byte[], byte[]> record : records) {
            RecordDecoder.Decoded decoded = decoder.decode(record);
            entries.add(new Entry(record, decoded, decoded.event() != null && isLate(decoded.event(), lateBefore)));
        }
        int transientFailures = 0;
        while (true) {
            entries = owned(entries);
            if (entries.isEmpty()) {
                return;
            }
            Applied applied;
            try {
                applied = applyInTransaction(entries);
            } catch (Exception e) {
                rollback(e);
                if (Failures.isTransient(e)) {
                    transientFailures++;
                    waitAfterTransient("applying a batch of " + entries.size(), e, transientFailures);
                    continue;
                }
                log.warn("group {}: a batch of {} events failed ({}); applying them one per transaction to find the "
                        + "failing event", s.group(), entries.size(), Failures.describe(e));
                metrics.retries.increment();
                isolate(entries);
                return;
            }
            trouble = null;
            List<Forwarder.Forward> forwards = new ArrayList<>();
            for (Entry e : entries) {
                if (e.failure != null) {
                    forwards.add(deadLetter(e, DeadLetterHeaders.REASON_UNDECODABLE, e.failure, 0));
                }
            }
            forwards.addAll(lateForwards(applied));
            forwardWithRetry(forwards);
            count(applied, forwards);
            entries.forEach(this::markDone);
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
            if (!assigned.contains(e.partition)) {
                continue;
            }
            if (e.failure != null) {
                Forwarder.Forward f = deadLetter(e, DeadLetterHeaders.REASON_UNDECODABLE, e.failure, 0);
                forwardWithRetry(List.of(f));
                count(new Applied(0, 0, 0, List.of()), List.of(f));
                markDone(e);
                continue;
            }
            int attempts = 0;
            int transientFailures = 0;
            while (assigned.contains(e.partition)) {
                Applied applied;
                try {
                    applied = applyInTransaction(List.of(e));
                } catch (Exception failure) {
                    rollback(failure);
                    if (Failures.isTransient(failure)) {
                        transientFailures++;
                        waitAfterTransient("applying event " + e.event.id(), failure, transientFailures);
                        continue;
                    }
                    attempts++;
                    if (Failures.isPoison(failure) || attempts >= s.maxAttempts()) {
                        log.error("group {}: event {} ({}-{} offset {}) failed {} time(s), last with {}; sending it to the "
                                        + "dead-letter topic {} and carrying on", s.group(), e.event.id(), e.record.topic(),
                                e.record.partition(), e.record.offset(), attempts, Failures.describe(failure),
                                s.deadLetterTopic().apply(e.record.topic()));
                        Forwarder.Forward f = deadLetter(e, DeadLetterHeaders.REASON_HANDLER_FAILED, failure, attempts);
                        forwardWithRetry(List.of(f));
                        count(new Applied(0, 0, 0, List.of()), List.of(f));
                        markDone(e);
                        break;
                    }
                    metrics.retries.increment();
                    Duration wait = backoff(attempts);
                    log.warn("group {}: event {} ({}-{} offset {}) failed (attempt {} of {}): {}; retrying in {} ms",
                            s.group(), e.event.id(), e.record.topic(), e.record.partition(), e.record.offset(), attempts,
                            s.maxAttempts(), Failures.describe(failure), wait.toMillis());
                    pauseAndWait(wait);
                    continue;
                }
                trouble = null;
                List<Forwarder.Forward> forwards = lateForwards(applied);
                forwardWithRetry(forwards);
                count(applied, forwards);
                markDone(e);
                break;
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
        Set<UUID> fresh = sql.insert(c, s.group(), rows, s.clock().instant(), false);
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

    private List<Forwarder.Forward> lateForwards(Applied applied) {
        List<Forwarder.Forward> forwards = new ArrayList<>(applied.lateToForward().size());
        for (Entry e : applied.lateToForward()) {
            LateArrivalPolicy policy = s.lateArrivalPolicy();
            IllegalStateException why = new IllegalStateException("event " + e.event.id() + " was created at "
                    + e.event.createdAt() + ", before the retention window of " + s.retention() + "; its id may have been "
                    + "purged already, so applying it could apply it twice");
            log.warn("group {}: late arrival: event {} ({}-{} offset {}) created {} is older than the retention window {}; "
                            + "policy {}", s.group(), e.event.id(), e.record.topic(), e.record.partition(), e.record.offset(),
                    createdAtOrIdTime(e.event), s.retention(), policy.action());
            if (policy.action() == LateArrivalPolicy.Action.ROUTE) {
                forwards.add(new Forwarder.Forward(e.record, policy.reviewTopic(e.record.topic()),
                        DeadLetterHeaders.REASON_LATE_ARRIVAL, why, 0));
            } else {
                forwards.add(deadLetter(e, DeadLetterHeaders.REASON_LATE_ARRIVAL, why, 0));
            }
        }
        return forwards;
    }

    private Forwarder.Forward deadLetter(Entry e, String reason, Throwable error, int attempts) {
        if (DeadLetterHeaders.REASON_UNDECODABLE.equals(reason)) {
            log.error("group {}: record {}-{} offset {} cannot be decoded ({}); sending it to the dead-letter topic {}",
                    s.group(), e.record.topic(), e.record.partition(), e.record.offset(), error.getMessage(),
                    s.deadLetterTopic().apply(e.record.topic()));
        }
        return new Forwarder.Forward(e.record, s.deadLetterTopic().apply(e.record.topic()), reason, error, attempts);
    }

    private void count(Applied applied, List<Forwarder.Forward> forwards) {
        metrics.applied.increment(applied.applied());
        metrics.duplicates.increment(applied.duplicates());
        metrics.lateArrivals.increment(applied.late());
        long deadLettered = forwards.stream().filter(f -> !DeadLetterHeaders.REASON_LATE_ARRIVAL.equals(f.reason())
                || s.lateArrivalPolicy().action() == LateArrivalPolicy.Action.DEAD_LETTER).count();
        metrics.deadLettered.increment(deadLettered);
    }

    private void forwardWithRetry(List<Forwarder.Forward> forwards) throws Abandoned {
        int failures = 0;
        List<Forwarder.Forward> pending = forwards;
        while (!pending.isEmpty()) {
            try {
                forwarder.forwardAll(pending);
                trouble = null;
                return;
            } catch (Forwarder.ForwardingException e) {
                failures++;
                Duration wait = backoff(failures);
                trouble = "cannot forward to " + pending.get(0).topic() + ": " + e.getMessage();
                log.warn("group {}: {} (attempt {}); the original offsets stay uncommitted, retrying in {} ms. Does the "
                        + "topic exist?", s.group(), trouble, failures, wait.toMillis());
                pauseAndWait(wait);
                pending = pending.stream().filter(f -> assigned.contains(
                        new TopicPartition(f.record().topic(), f.record().partition()))).toList();
            }
        }
    }

    private boolean isLate(InboxEvent event, Instant lateBefore) {
        Instant created = createdAtOrIdTime(event);
        return created != null && created.isBefore(lateBefore);
    }

    private static Instant createdAtOrIdTime(InboxEvent event) {
        if (event.createdAt() != null) {
            return event.createdAt();
        }
        return event.id().version() == 7 ? Instant.ofEpochMilli(EventIds.unixMillis(event.id())) : null;
    }

    // ---------------------------------------------------------------------------------------------
    // waiting without leaving the group

    private void waitAfterTransient(String what, Exception e, int failures) throws Abandoned {
        metrics.retries.increment();
        Duration wait = backoff(failures);
        trouble = what + " failed with a transient database error: " + Failures.describe(e);
        log.warn("group {}: {} (failure {} in a row); retrying in {} ms, nothing is skipped", s.group(), trouble, failures,
                wait.toMillis());
        pauseAndWait(wait);
    }

    private Duration backoff(int failures) {
        long base = s.backoff().toMillis();
        long ms = base << Math.min(Math.max(failures - 1, 0), 20);
        return Duration.ofMillis(Math.min(ms, s.maxBackoff().toMillis()));
    }

    /**
     * Waits with every assigned partition paused while still polling, so the group keeps this
     * member (no max.poll.interval.ms eviction) and rebalances are served.
     */
    private void pauseAndWait(Duration duration) throws Abandoned {
        consumer.pause(consumer.assignment());
        waiting = true;
        try {
            long deadline = System.nanoTime() + duration.toNanos();
            while (true) {
                if (stopping) {
                    throw new Abandoned();
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return;
                }
                ConsumerRecords<byte[], byte[]> unexpected = consumer.poll(Duration.ofNanos(Math.min(left, WAIT_SLICE.toNanos())));
                for (TopicPartition tp : unexpected.partitions()) {
                    consumer.seek(tp, unexpected.records(tp).get(0).offset());
                }
            }
        } catch (WakeupException e) {
            throw new Abandoned();
        } finally {
            waiting = false;
            consumer.resume(consumer.assignment());
        }
    }

    // ---------------------------------------------------------------------------------------------
    // offsets

    private List<Entry> owned(List<Entry> entries) {
        for (Entry e : entries) {
            if (!assigned.contains(e.partition)) {
                return entries.stream().filter(x -> assigned.contains(x.partition)).toList();
            }
        }
        return entries;
    }

    private void markDone(Entry e) {
        if (assigned.contains(e.partition)) {
            done.merge(e.partition, e.record.offset() + 1, Math::max);
        }
    }

    private void commitDone() {
        commit(done.keySet());
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
        for (TopicPartition tp : assigned) {
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
            commit(partitions);
            forget(partitions);
            log.info("group {}: {} partition(s) revoked, finished offsets committed", s.group(), partitions.size());
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> partitions) {
            forget(partitions);
            log.warn("group {}: {} partition(s) lost (this member was evicted); their new owner redelivers and the inbox "
                    + "skips what was applied here", s.group(), partitions.size());
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            assigned.addAll(partitions);
            assignedCount = assigned.size();
            if (waiting && !partitions.isEmpty()) {
                consumer.pause(partitions);
            }
            if (!partitions.isEmpty()) {
                log.info("group {}: {} partition(s) assigned", s.group(), partitions.size());
            }
        }

        private void forget(Collection<TopicPartition> partitions) {
            assigned.removeAll(partitions);
            done.keySet().removeAll(partitions);
            committed.keySet().removeAll(partitions);
            assignedCount = assigned.size();
        }
    }

    // ---------------------------------------------------------------------------------------------
    // database connection

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

    private void rollback(Exception cause) {
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
