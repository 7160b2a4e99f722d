package dev.outboxkit.core;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Map;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;

/**
 * The one mapping from an outbox row to a Kafka record. Both relays call it, so a record is
 * byte-identical whichever relay published it: topic from the row or the route, key = aggregate
 * id, value = payload, headers id, eventType, aggregateType, createdAt, then the row's headers.
 */
public final class KafkaRecords {

    /** createdAt is always written with six fractional digits, so both relays agree to the byte. */
    public static final DateTimeFormatter CREATED_AT_FORMAT =
            DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSSSSS'Z'").withZone(ZoneOffset.UTC);

    private final TopicRoute route;

    public KafkaRecords(TopicRoute route) {
        this.route = route;
    }

    public TopicRoute route() {
        return route;
    }

    /**
     * The record for {@code event}.
     *
     * @throws InvalidEventException when the event can never be published as it is (illegal
     *                               topic, a header that reuses a reserved name): park it
     */
    public ProducerRecord<byte[], byte[]> toRecord(OutboxEvent event) {
        String topic = Topics.requireLegal(route.topicFor(event));
        RecordHeaders headers = new RecordHeaders();
        headers.add(HeaderNames.ID, utf8(event.id().toString()));
        headers.add(HeaderNames.EVENT_TYPE, utf8(event.eventType()));
        headers.add(HeaderNames.AGGREGATE_TYPE, utf8(event.aggregateType()));
        headers.add(HeaderNames.CREATED_AT, utf8(formatCreatedAt(event.createdAt())));
        for (Map.Entry<String, String> header : event.headers().entrySet()) {
            String problem = HeaderNames.problem(header.getKey());
            if (problem != null) {
                throw new InvalidEventException("event " + event.id() + ": " + problem);
            }
            headers.add(header.getKey(), utf8(header.getValue()));
        }
        return new ProducerRecord<>(topic, null, null, utf8(event.aggregateId()), utf8(event.payload()), headers);
    }

    public static String formatCreatedAt(Instant createdAt) {
        return CREATED_AT_FORMAT.format(createdAt);
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
