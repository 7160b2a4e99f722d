package dev.outboxkit.benchmarks.load;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * The ack side of a latency measurement: a consumer in this JVM reads the topics from their
 * current end (assigned, no group join) and marks every record's event id (header {@code id}, or
 * where the system's {@link EventIdReader} finds it) acknowledged in a {@link LatencyTracker}. A record a consumer can read has been acknowledged
 * by the broker (acks=all, high watermark), so this is commit→ack plus one fetch — the same
 * fetch for every system measured, which the Kafka-alone floor shows by itself.
 */
public final class KafkaAckObserver implements AutoCloseable {

    private final KafkaConsumer<byte[], byte[]> consumer;
    private final Thread thread;
    private final AtomicReference<Exception> failure = new AtomicReference<>();
    private volatile boolean running = true;

    private KafkaAckObserver(String bootstrapServers, Collection<String> topics, LatencyTracker tracker,
                             EventIdReader ids) throws InterruptedException {
        consumer = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
                ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName(),
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName(),
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false",
                ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, "false",
                ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "100",
                ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "5000"));
        CountDownLatch positioned = new CountDownLatch(1);
        thread = new Thread(() -> observe(topics, tracker, ids, positioned), "kafka-ack-observer");
        thread.setDaemon(true);
        thread.start();
        if (!positioned.await(60, TimeUnit.SECONDS)) {
            close();
            throw new IllegalStateException("the ack observer could not reach the end of " + topics + " in 60 s");
        }
        if (failure.get() != null) {
            close();
            throw new IllegalStateException("the ack observer failed: " + failure.get().getMessage(), failure.get());
        }
    }

    /** Starts observing {@code topics} (which must exist) from their end; returns once positioned. */
    public static KafkaAckObserver start(String bootstrapServers, Collection<String> topics, LatencyTracker tracker)
            throws InterruptedException {
        return start(bootstrapServers, topics, tracker, EventIdReader.HEADER);
    }

    /** The same for a system that carries the event id elsewhere. */
    public static KafkaAckObserver start(String bootstrapServers, Collection<String> topics, LatencyTracker tracker,
                                         EventIdReader ids) throws InterruptedException {
        return new KafkaAckObserver(bootstrapServers, topics, tracker, ids);
    }

    private void observe(Collection<String> topics, LatencyTracker tracker, EventIdReader ids,
                         CountDownLatch positioned) {
        try {
            List<TopicPartition> partitions = new ArrayList<>();
            for (String topic : topics) {
                partitionsOf(topic).forEach(p -> partitions.add(new TopicPartition(p.topic(), p.partition())));
            }
            consumer.assign(partitions);
            consumer.seekToEnd(partitions);
            partitions.forEach(consumer::position);
            positioned.countDown();
            while (running) {
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(100))) {
                    UUID id = ids.read(record);
                    if (id != null) {
                        tracker.acked(id);
                    }
                }
            }
        } catch (WakeupException e) {
            // closing
        } catch (Exception e) {
            failure.compareAndSet(null, e);
        } finally {
            positioned.countDown();
            consumer.close(Duration.ofSeconds(5));
        }
    }

    /** A topic just created may not be in the metadata yet: ask again until it is (60 s at most). */
    private List<PartitionInfo> partitionsOf(String topic) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            List<PartitionInfo> partitions = consumer.partitionsFor(topic, Duration.ofSeconds(30));
            if (!partitions.isEmpty()) {
                return partitions;
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("topic " + topic + " has no partitions after 60 s; create it before observing it");
            }
            TimeUnit.MILLISECONDS.sleep(100);
        }
    }

    /** The error that stopped the observer, or null. */
    public Exception failure() {
        return failure.get();
    }

    @Override
    public void close() throws InterruptedException {
        running = false;
        consumer.wakeup();
        thread.join(30_000);
    }
}
