package dev.outboxkit.consumer;

import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.search.RequiredSearch;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/** Consumer settings the tests share: short timeouts, small polls, quick retries. */
final class Consumers {

    private Consumers() {
    }

    static Map<String, Object> testKafkaProperties() {
        Map<String, Object> p = new HashMap<>();
        p.put("session.timeout.ms", "10000");
        p.put("heartbeat.interval.ms", "1000");
        p.put("max.poll.records", "100");
        return p;
    }

    static DedupeConsumer.Builder builder(TestKafka kafka, TestDatabase db, String topic, String group) {
        return DedupeConsumer.builder()
                .bootstrapServers(kafka.bootstrapServers())
                .kafkaProperties(testKafkaProperties())
                .group(group)
                .topics(List.of(topic))
                .dataSource(db.dataSource())
                .backoff(Duration.ofMillis(20))
                .maxBackoff(Duration.ofMillis(500))
                .pollTimeout(Duration.ofMillis(100));
    }

    static double count(MeterRegistry registry, String name, String group) {
        RequiredSearch search = registry.get(name).tag("group", group);
        return search.counter().count();
    }

    /** The group's committed offsets, by partition. */
    static Map<TopicPartition, Long> committed(TestKafka kafka, String group) throws Exception {
        Map<TopicPartition, Long> out = new HashMap<>();
        try (Admin admin = kafka.admin()) {
            Map<TopicPartition, OffsetAndMetadata> offsets = admin.listConsumerGroupOffsets(group)
                    .partitionsToOffsetAndMetadata().get(60, TimeUnit.SECONDS);
            offsets.forEach((tp, o) -> {
                if (o != null) {
                    out.put(tp, o.offset());
                }
            });
        }
        return out;
    }

    /** Every partition's end offset. */
    static Map<TopicPartition, Long> endOffsets(TestKafka kafka, String topic, int partitions) throws Exception {
        Map<TopicPartition, OffsetSpec> request = new HashMap<>();
        for (int p = 0; p < partitions; p++) {
            request.put(new TopicPartition(topic, p), OffsetSpec.latest());
        }
        Map<TopicPartition, Long> out = new HashMap<>();
        try (Admin admin = kafka.admin()) {
            admin.listOffsets(request).all().get(60, TimeUnit.SECONDS).forEach((tp, info) -> out.put(tp, info.offset()));
        }
        return out;
    }
}
