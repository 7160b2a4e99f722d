package dev.outboxkit.spring.test;

import dev.outboxkit.core.HeaderNames;
import dev.outboxkit.core.OutboxEvent;
import dev.outboxkit.relay.CloudEventsHeaders;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/** Reads a topic from its beginning, without a consumer group, until the record of one event id shows up. */
final class KafkaWait {

    private KafkaWait() {
    }

    static ConsumerRecord<byte[], byte[]> find(Map<String, Object> settings, String topic, OutboxEvent event, Duration timeout) {
        Map<String, Object> config = new HashMap<>(settings);
        config.remove(ConsumerConfig.GROUP_ID_CONFIG);
        config.remove(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG);
        config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        config.put(ConsumerConfig.CLIENT_ID_CONFIG, "outboxkit-test");
        config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        String id = event.id().toString();
        long deadline = System.nanoTime() + timeout.toNanos();
        long read = 0;
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(config, new ByteArrayDeserializer(),
                new ByteArrayDeserializer())) {
            List<TopicPartition> partitions = List.of();
            while (System.nanoTime() < deadline) {
                if (partitions.isEmpty()) {       // the relay may not have created the topic yet
                    List<PartitionInfo> infos = consumer.partitionsFor(topic, remaining(deadline));
                    partitions = infos == null ? List.of() : infos.stream().map(p -> new TopicPartition(topic, p.partition())).toList();
                    if (partitions.isEmpty()) {
                        OutboxEvents.pause();
                        continue;
                    }
                    consumer.assign(partitions);
                    consumer.seekToBeginning(partitions);
                }
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    read++;
                    if (id.equals(header(r, HeaderNames.ID)) || id.equals(header(r, CloudEventsHeaders.ID))) {
                        return r;
                    }
                }
            }
        }
        throw new AssertionError(event + " did not reach Kafka topic " + topic + " within " + timeout + " (" + read
                + " records read, none with id " + id + " in header id or ce_id). Is the relay running (outboxkit.relay.mode) "
                + "and publishing to " + config.get(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG) + "?");
    }

    private static String header(ConsumerRecord<?, ?> r, String name) {
        Header h = r.headers().lastHeader(name);
        return h == null || h.value() == null ? null : new String(h.value(), StandardCharsets.UTF_8);
    }

    private static Duration remaining(long deadline) {
        return Duration.ofNanos(Math.max(1_000_000, deadline - System.nanoTime()));
    }
}
