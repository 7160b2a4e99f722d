package dev.outboxkit.benchmarks.load;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.outboxkit.core.HeaderNames;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;

/** Where a system under test puts the event id in its Kafka records. */
@FunctionalInterface
public interface EventIdReader {

    /** The event id of {@code record}, or null when it carries none. */
    UUID read(ConsumerRecord<byte[], byte[]> record);

    /** outboxkit's relays and stock Debezium: the {@code id} header. */
    EventIdReader HEADER = record -> {
        Header id = record.headers().lastHeader(HeaderNames.ID);
        return id == null ? null : UUID.fromString(new String(id.value(), StandardCharsets.UTF_8));
    };

    /**
     * Spring Modulith: the event itself is the JSON value, and its {@code id} field is the id (Spring Messaging
     * reserves the {@code id} header for its own message ids, so Modulith's header support cannot carry it).
     */
    EventIdReader JSON_ID_FIELD = new EventIdReader() {
        private final ObjectMapper json = new ObjectMapper();

        @Override
        public UUID read(ConsumerRecord<byte[], byte[]> record) {
            if (record.value() == null) {
                return null;
            }
            try {
                JsonNode id = json.readTree(record.value()).get("id");
                return id == null || !id.isTextual() ? null : UUID.fromString(id.asText());
            } catch (IOException e) {
                throw new UncheckedIOException("record at " + record.topic() + "-" + record.partition() + "@"
                        + record.offset() + " is not the JSON event the peer sends", e);
            }
        }
    };
}
