package dev.outboxkit.relay.poller;

import dev.outboxkit.core.HeaderNames;
import dev.outboxkit.testkit.History;
import dev.outboxkit.testkit.TestKafka;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;

/** Reads topics back and feeds a {@link History} as an idempotent consumer would. */
final class Topic {

    private Topic() {
    }

    /**
     * Every record of {@code topics} is a delivery; the first delivery of each id is an
     * application (per partition in offset order, so per aggregate in Kafka's order).
     */
    static List<ConsumerRecord<byte[], byte[]>> feed(TestKafka kafka, List<String> topics, History history) {
        List<ConsumerRecord<byte[], byte[]>> records = kafka.readAll(topics);
        Set<UUID> seen = new HashSet<>();
        for (ConsumerRecord<byte[], byte[]> r : records) {
            UUID id = UUID.fromString(header(r, HeaderNames.ID));
            history.delivered(id);
            if (seen.add(id)) {
                history.applied(id, new String(r.key(), StandardCharsets.UTF_8));
            }
        }
        return records;
    }

    static String header(ConsumerRecord<byte[], byte[]> r, String name) {
        Header h = r.headers().lastHeader(name);
        return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
    }
}
