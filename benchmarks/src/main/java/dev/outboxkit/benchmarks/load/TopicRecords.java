package dev.outboxkit.benchmarks.load;

import dev.outboxkit.testkit.FailoverGap;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Everything one topic holds, from its first record: how many records Kafka has ({@link #count()}, the end
 * offsets: for a drain that only ends when Kafka has every event) and, read in order, which event each record
 * carries ({@link #readAvailable()}, for the crash runs' history). One consumer, assigned, no group.
 */
public final class TopicRecords implements AutoCloseable {

    /** One record as the history needs it: its event id (null when it carries none) and its key (the aggregate). */
    public record Delivery(UUID id, String aggregate) {
    }

    private final KafkaConsumer<byte[], byte[]> consumer;
    private final List<TopicPartition> partitions = new ArrayList<>();
    private final EventIdReader ids;
    private final List<Delivery> read = new ArrayList<>();
    private final List<FailoverGap.Published> published = new ArrayList<>();

    public TopicRecords(String bootstrap, String topic, EventIdReader ids) {
        this.ids = ids;
        consumer = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName(),
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName(),
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false",
                ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, "false",
                ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "5000"));
        consumer.partitionsFor(topic, Duration.ofSeconds(30))
                .forEach(p -> partitions.add(new TopicPartition(topic, p.partition())));
        if (partitions.isEmpty()) {
            consumer.close();
            throw new IllegalStateException("topic " + topic + " has no partitions; create it first");
        }
        consumer.assign(partitions);
        consumer.seekToBeginning(partitions);
    }

    /** Records in the topic now (the sum of its end offsets; the topics are never compacted or truncated). */
    public long count() {
        return consumer.endOffsets(partitions, Duration.ofSeconds(30)).values().stream().mapToLong(Long::longValue).sum();
    }

    /** Reads up to the current end of every partition and returns every record read so far, in order. */
    public List<Delivery> readAvailable() {
        Map<TopicPartition, Long> end = consumer.endOffsets(partitions, Duration.ofSeconds(30));
        while (partitions.stream().anyMatch(p -> consumer.position(p) < end.get(p))) {
            for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                read.add(new Delivery(ids.read(r), r.key() == null ? null : new String(r.key(),
                        java.nio.charset.StandardCharsets.UTF_8)));
                published.add(FailoverGap.published(r));
            }
        }
        return List.copyOf(read);
    }

    /**
     * Reads up to the current end like {@link #readAvailable()} and returns every record read so far with its Kafka
     * timestamp and the event's {@code createdAt} (for the failover scenario's gaps).
     */
    public List<FailoverGap.Published> publishedAvailable() {
        readAvailable();
        return List.copyOf(published);
    }

    @Override
    public void close() {
        consumer.close(Duration.ofSeconds(5));
    }
}
