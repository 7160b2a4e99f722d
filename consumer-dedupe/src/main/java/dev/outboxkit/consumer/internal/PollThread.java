package dev.outboxkit.consumer.internal;

import dev.outboxkit.runtime.KafkaWrites;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
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
 * The poll thread: owns the Kafka consumer. It polls, decodes, hands a batch to the {@link Worker},
 * commits finished offsets and serves rebalances ({@link Listener}). While the worker is slow
 * (retrying), it pauses its partitions and keeps polling, so the member stays in its group without
 * reading more. A revoked partition's finished offsets are committed in the rebalance callback,
 * which first waits for the worker's transaction in flight ({@link Ownership#txLock}).
 */
final class PollThread {

    private static final Logger log = LoggerFactory.getLogger(ConsumerLoop.class);
    private static final long HANDOFF_WAIT_MILLIS = 100;

    private final ConsumerSettings s;
    private final ConsumerMetrics metrics;
    private final RecordDecoder decoder;
    private final Forwarder forwarder;
    private final Ownership ownership;
    private final LoopState state;
    private final Worker worker;

    private KafkaConsumer<byte[], byte[]> consumer;
    private boolean paused;

    PollThread(ConsumerSettings settings, ConsumerMetrics metrics, Forwarder forwarder, Ownership ownership,
               LoopState state, Worker worker) {
        this.s = settings;
        this.metrics = metrics;
        this.decoder = new RecordDecoder(settings.idHeader());
        this.forwarder = forwarder;
        this.ownership = ownership;
        this.state = state;
        this.worker = worker;
    }

    void run() {
        state.running = true;
        Thread workerThread = new Thread(worker, s.clientId() + "-worker");
        try {
            consumer = new KafkaConsumer<>(s.consumerConfig());
            state.consumerCreated(consumer);
            if (state.stopping) {
                return;
            }
            workerThread.start();
            if (s.topicPattern() != null) {
                consumer.subscribe(s.topicPattern(), new Listener());
            } else {
                consumer.subscribe(s.topics(), new Listener());
            }
            log.info("consumer {} of group {} started on {}", s.clientId(), s.group(),
                    s.topicPattern() != null ? "pattern " + s.topicPattern() : s.topics());
            List<BatchEntry> next = null;
            while (!state.stopping && state.fatal == null) {
                if (next != null) {
                    // hand the batch over the moment the worker takes the previous one
                    if (state.handoff.offer(next, HANDOFF_WAIT_MILLIS, TimeUnit.MILLISECONDS)) {
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
                state.polled = true;
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
            state.fatal = t;
        } finally {
            state.stopping = true;
            state.handoff.clear();
            joinWorker(workerThread);
            shutdown();
            state.running = false;
            Throwable f = state.fatal;
            if (f != null) {
                log.error("consumer {} of group {} stopped on an error it cannot recover from: {}. Offsets of finished "
                                + "events are committed; fix the cause and start it again.", s.clientId(), s.group(),
                        ApplyFailures.describe(f), f);
            }
        }
    }

    private List<BatchEntry> decode(ConsumerRecords<byte[], byte[]> records) {
        Instant lateBefore = s.clock().instant().minus(s.retention());
        List<BatchEntry> entries = new ArrayList<>(records.count());
        for (TopicPartition tp : records.partitions()) {
            long generation = ownership.generation(tp);
            for (ConsumerRecord<byte[], byte[]> record : records.records(tp)) {
                RecordDecoder.Decoded decoded = decoder.decode(record);
                boolean late = decoded.event() != null && isLate(decoded, lateBefore);
                entries.add(new BatchEntry(record, tp, generation, decoded, late));
            }
        }
        return entries;
    }

    private static boolean isLate(RecordDecoder.Decoded decoded, Instant lateBefore) {
        Instant created = BatchEntry.createdAtOrIdTime(decoded.event());
        return created != null && created.isBefore(lateBefore);
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

    private void joinWorker(Thread workerThread) {
        if (!workerThread.isAlive()) {
            return;
        }
        long deadline = System.nanoTime() + s.closeTimeout().toNanos();
        try {
            while (workerThread.isAlive() && System.nanoTime() < deadline) {
                workerThread.join(50);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (workerThread.isAlive()) {
            log.warn("consumer {}: the batch in flight did not finish within {}; its records are not committed and "
                    + "will be redelivered (the inbox skips what did commit)", s.clientId(), s.closeTimeout());
            workerThread.interrupt();
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
                log.warn("consumer {}: error while leaving the group: {}", s.clientId(), ApplyFailures.describe(e));
            }
        }
        forwarder.close();
        metrics.close();
        log.info("consumer {} of group {} stopped", s.clientId(), s.group());
    }

    private void commitDone() {
        commit(ownership.partitionsWithFinished());
    }

    private void commit(Collection<TopicPartition> partitions) {
        Map<TopicPartition, OffsetAndMetadata> offsets = ownership.toCommit(partitions);
        if (offsets.isEmpty()) {
            return;
        }
        for (int attempt = 1; attempt <= 2; attempt++) {
            // counted while it waits: readiness drops when Kafka takes no commit (the group coordinator's partition of
            // __consumer_offsets below min.insync.replicas, or without a leader)
            KafkaWrites.Pending pending = metrics.kafkaWrites.handedOver(null);
            try {
                consumer.commitSync(offsets);
                pending.answered(null);
                ownership.committed(offsets);
                return;
            } catch (WakeupException e) {
                // close() woke us up; the flag is cleared now, so commit once more before leaving
                state.stopping = true;
            } catch (KafkaException e) {
                pending.answered(e);
                log.warn("group {}: offset commit of {} partition(s) failed ({}); the events are recorded in processed_event, "
                        + "so redelivered records will be skipped", s.group(), offsets.size(), ApplyFailures.describe(e));
                return;
            } finally {
                pending.abandoned(); // no answer above: a wake-up, or an error that is not Kafka's
            }
        }
    }

    private void updateLag() {
        long lag = 0;
        for (TopicPartition tp : ownership.partitions()) {
            var l = consumer.currentLag(tp);
            if (l.isPresent()) {
                lag += l.getAsLong();
            }
        }
        metrics.lag.set(lag);
    }

    /** Runs on the poll thread, inside poll() or close(). */
    private final class Listener implements ConsumerRebalanceListener {
        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            if (partitions.isEmpty()) {
                return;
            }
            // the worker finishes the transaction in flight (and marks it finished) first; after
            // the lock it starts nothing on these partitions, and the finished offsets are committed
            ownership.txLock.lock();
            try {
                ownership.disown(partitions);
                commit(partitions);
            } finally {
                ownership.txLock.unlock();
            }
            ownership.forget(partitions);
            log.info("group {}: {} partition(s) revoked, finished offsets committed", s.group(), partitions.size());
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> partitions) {
            ownership.txLock.lock();
            try {
                ownership.disown(partitions);
            } finally {
                ownership.txLock.unlock();
            }
            ownership.forget(partitions);
            log.warn("group {}: {} partition(s) lost (this member was evicted); their new owner redelivers and the inbox "
                    + "skips what was applied here", s.group(), partitions.size());
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            ownership.assign(partitions);
            if (paused && !partitions.isEmpty()) {
                consumer.pause(partitions);
            }
            if (!partitions.isEmpty()) {
                log.info("group {}: {} partition(s) assigned", s.group(), partitions.size());
            }
        }
    }
}
