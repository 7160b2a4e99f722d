package dev.outboxkit.consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxkit.consumer.internal.RecordDecoder;
import dev.outboxkit.core.EventIds;
import dev.outboxkit.core.InvalidEventException;
import dev.outboxkit.core.OutboxEvent;
import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.relay.KafkaRecords;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;

/** The record contract read back: our relays' records, Debezium's shapes, and what is poison. */
class RecordDecodingTest {

    private static final String NO_ID_HEADER = "the record has no 'id' header (nor a CloudEvents 'ce_id'), so it has no "
            + "event id to deduplicate by (set the consumer's idHeader if the producer uses another name)";

    private final RecordDecoder decoder = new RecordDecoder("id");

    @Test
    void aRelayRecordRoundTrips() {
        Instant created = Instant.parse("2025-01-02T03:04:05.123456Z");
        OutboxEvent e = new OutboxEvent(EventIds.next(), "order", "o-1", "placed", "orders", "{\"total\":5}",
                Map.of("traceparent", "00-abc"), created);
        ProducerRecord<byte[], byte[]> sent = Projection.RECORDS.toRecord(e);
        ConsumerRecord<byte[], byte[]> received = new ConsumerRecord<>("orders", 2, 77L, sent.key(), sent.value());
        sent.headers().forEach(h -> received.headers().add(h));

        InboxEvent event = decoder.decode(received).event();
        assertThat(event.id()).isEqualTo(e.id());
        assertThat(event.eventType()).isEqualTo("placed");
        assertThat(event.aggregateType()).isEqualTo("order");
        assertThat(event.aggregateId()).isEqualTo("o-1");
        assertThat(event.createdAt()).isEqualTo(created);
        assertThat(event.header("traceparent")).isEqualTo("00-abc");
        assertThat(event.payloadJson().get("total").asInt()).isEqualTo(5);
        assertThat(event.payloadText()).isEqualTo("{\"total\":5}");
        assertThat(event.topic()).isEqualTo("orders");
        assertThat(event.partition()).isEqualTo(2);
        assertThat(event.offset()).isEqualTo(77L);
        assertThat(event.toString()).doesNotContain("total");
    }

    @Test
    void aCloudEventsRecordDecodesToTheSameEvent() {
        Instant created = Instant.parse("2025-01-02T03:04:05.123456Z");
        OutboxEvent e = new OutboxEvent(EventIds.next(), "order", "o-1", "placed", "orders", "{\"total\":5}",
                Map.of("traceparent", "00-abc"), created);
        InboxEvent plain = decode(received(Projection.RECORDS.toRecord(e)));
        InboxEvent cloud = decode(received(new KafkaRecords(TopicRoute.defaultRoute().withCloudEvents("/shop")).toRecord(e)));
        assertThat(cloud.id()).isEqualTo(e.id()).isEqualTo(plain.id());
        assertThat(cloud.eventType()).isEqualTo("placed").isEqualTo(plain.eventType());
        assertThat(cloud.aggregateType()).isEqualTo("order").isEqualTo(plain.aggregateType());
        assertThat(cloud.aggregateId()).isEqualTo("o-1").isEqualTo(plain.aggregateId());
        assertThat(cloud.createdAt()).isEqualTo(created).isEqualTo(plain.createdAt());
        assertThat(cloud.payloadJson()).isEqualTo(plain.payloadJson());
        assertThat(cloud.header("ce_source")).isEqualTo("/shop");
        assertThat(cloud.header("traceparent")).isEqualTo("00-abc");

        ConsumerRecord<byte[], byte[]> badTime = record(null, "{}");
        badTime.headers().add("ce_id", UUID.randomUUID().toString().getBytes(StandardCharsets.UTF_8));
        badTime.headers().add("ce_time", "yesterday".getBytes(StandardCharsets.UTF_8));
        assertThat(failure(badTime)).hasMessage("header 'ce_time' is not an ISO-8601 instant: 'yesterday'");
        ConsumerRecord<byte[], byte[]> badId = record(null, "{}");
        badId.headers().add("ce_id", "42".getBytes(StandardCharsets.UTF_8));
        assertThat(failure(badId)).hasMessage("header 'ce_id' is not a UUID: '42'");
    }

    private static ConsumerRecord<byte[], byte[]> received(ProducerRecord<byte[], byte[]> sent) {
        ConsumerRecord<byte[], byte[]> received = new ConsumerRecord<>(sent.topic(), 0, 1L, sent.key(), sent.value());
        sent.headers().forEach(h -> received.headers().add(h));
        return received;
    }

    @Test
    void aBinaryRecordHandsOverItsBytesAndContentType() {
        byte[] bytes = {0, 0, 0, 0, 42, 6, 'E', 'U', 'R'};
        OutboxEvent e = new OutboxEvent(EventIds.next(), "order", "o-1", "paid", "orders", null, Map.of(),
                Instant.parse("2025-01-02T03:04:05.123456Z"), bytes, "application/vnd.confluent.avro");
        ProducerRecord<byte[], byte[]> sent = Projection.RECORDS.toRecord(e);
        ConsumerRecord<byte[], byte[]> received = new ConsumerRecord<>("orders", 0, 1L, sent.key(), sent.value());
        sent.headers().forEach(h -> received.headers().add(h));

        InboxEvent event = decoder.decode(received).event();
        assertThat(event.payloadBytes()).isEqualTo(bytes);
        assertThat(event.contentType()).isEqualTo("application/vnd.confluent.avro");
        assertThat(event.isBinary()).isTrue();
        assertThatThrownBy(event::payloadJson).isInstanceOf(InvalidEventException.class).hasMessage("event " + e.id()
                + " is a binary event (content-type application/vnd.confluent.avro), not JSON: read payloadBytes() and "
                + "decode it with the library for that type");
        assertThat(event.toString()).contains("payloadBytes=9").doesNotContain("EUR");

        InboxEvent json = decode(UUID.randomUUID().toString(), "{\"total\":5}");
        assertThat(json.contentType()).isNull();
        assertThat(json.isBinary()).isFalse();
        ConsumerRecord<byte[], byte[]> cloudEventsJson = new ConsumerRecord<>("orders", 0, 2L, null,
                "{\"total\":5}".getBytes(StandardCharsets.UTF_8));
        cloudEventsJson.headers().add("id", UUID.randomUUID().toString().getBytes(StandardCharsets.UTF_8));
        cloudEventsJson.headers().add("content-type", "application/json; charset=utf-8".getBytes(StandardCharsets.UTF_8));
        InboxEvent declaredJson = decoder.decode(cloudEventsJson).event();
        assertThat(declaredJson.isBinary()).isFalse();
        assertThat(declaredJson.payloadJson().get("total").asInt()).isEqualTo(5);
    }

    @Test
    void debeziumShapesDecodeToTheSameTree() {
        UUID id = UUID.randomUUID();
        InboxEvent plain = decode(id.toString(), "{\"total\":5}");
        InboxEvent quotedString = decode("\"" + id + "\"", "\"{\\\"total\\\":5}\"");
        InboxEvent envelope = decode(id.toString(), "{\"schema\":{\"type\":\"string\",\"name\":\"io.debezium.data.Json\"},"
                + "\"payload\":\"{\\\"total\\\":5}\"}");
        assertThat(quotedString.id()).isEqualTo(id);
        assertThat(quotedString.payloadJson()).isEqualTo(plain.payloadJson());
        assertThat(envelope.payloadJson()).isEqualTo(plain.payloadJson());
        assertThat(plain.eventType()).isNull();
        assertThat(plain.createdAt()).isNull();
        // a payload that merely has a "payload" field is left alone
        InboxEvent own = decode(id.toString(), "{\"payload\":1,\"schema\":2}");
        assertThat(own.payloadJson().get("payload").asInt()).isEqualTo(1);
    }

    @Test
    void headersKafkaConnectsJsonConverterWroteAreReadThrough() {
        UUID id = UUID.randomUUID();
        Instant created = Instant.parse("2025-01-02T03:04:05.123456Z");
        for (boolean schemas : new boolean[] {false, true}) {
            ConsumerRecord<byte[], byte[]> r = record(connectJson(id.toString(), schemas), "{}");
            r.headers().add("eventType", connectJson("Order\"Placed\"", schemas).getBytes(StandardCharsets.UTF_8));
            r.headers().add("aggregateType", connectJson("order", schemas).getBytes(StandardCharsets.UTF_8));
            r.headers().add("createdAt", connectJson(created.toString(), schemas).getBytes(StandardCharsets.UTF_8));
            InboxEvent e = decode(r);
            assertThat(e.id()).isEqualTo(id);
            assertThat(e.eventType()).isEqualTo("Order\"Placed\"");
            assertThat(e.aggregateType()).isEqualTo("order");
            assertThat(e.createdAt()).isEqualTo(created);
            assertThat(e.header("aggregateType")).as("headers() keeps the bytes as they came")
                    .isEqualTo(connectJson("order", schemas));
        }
        // what is not JsonConverter's encoding of a string is taken as it is
        ConsumerRecord<byte[], byte[]> plain = record(id.toString(), "{}");
        plain.headers().add("eventType", "{\"payload\": 1}".getBytes(StandardCharsets.UTF_8));
        assertThat(decode(plain).eventType()).isEqualTo("{\"payload\": 1}");
        plain.headers().add("eventType", "\"unbalanced".getBytes(StandardCharsets.UTF_8));
        assertThat(decode(plain).eventType()).isEqualTo("\"unbalanced");
    }

    /** {@code text} as JsonConverter writes a string header, with or without its schema envelope. */
    private static String connectJson(String text, boolean schemas) {
        String quoted = "\"" + text.replace("\"", "\\\"") + "\"";
        return schemas ? "{\"schema\":{\"type\":\"string\",\"optional\":false},\"payload\":" + quoted + "}" : quoted;
    }

    @Test
    void poisonIsRecognisedWithAReason() {
        assertThat(failure(record(null, "{}"))).hasMessage(NO_ID_HEADER).hasNoCause();
        assertThat(failure(record("1-2-3-4-5", "{}")))
                .as("UUID.fromString accepts it, the canonical form check does not")
                .hasMessage("header 'id' is not a UUID: '1-2-3-4-5'");
        assertThat(failure(record("not-a-uuid", "{}"))).hasMessage("header 'id' is not a UUID: 'not-a-uuid'");
        assertThat(failure(record("x".repeat(100), "{}")))
                .hasMessage("header 'id' is not a UUID: '" + "x".repeat(80) + "…'");
        ConsumerRecord<byte[], byte[]> badTime = record(UUID.randomUUID().toString(), "{}");
        badTime.headers().add("createdAt", "last tuesday".getBytes(StandardCharsets.UTF_8));
        assertThat(failure(badTime)).hasMessage("header 'createdAt' is not an ISO-8601 instant: 'last tuesday'");
        InboxEvent notJson = decode(UUID.randomUUID().toString(), "<xml/>");
        assertThatThrownBy(notJson::payloadJson).isInstanceOf(InvalidEventException.class)
                .hasMessageStartingWith("the record value is not JSON: Unexpected character ('<'");
    }

    @Test
    void createdAtInTheRelaysFormatAndInOtherIsoFormsReadsBackExactly() {
        java.util.Random random = new java.util.Random(42);
        for (int i = 0; i < 2000; i++) {
            Instant t = Instant.ofEpochSecond(random.nextLong(0, 4_102_444_800L), random.nextInt(1_000_000) * 1_000L);
            assertThat(createdAt(dev.outboxkit.relay.KafkaRecords.formatCreatedAt(t))).isEqualTo(t);
        }
        assertThat(createdAt("2025-01-02T03:04:05Z")).isEqualTo(Instant.parse("2025-01-02T03:04:05Z"));
        assertThat(createdAt("2025-01-02T03:04:05.1Z")).isEqualTo(Instant.parse("2025-01-02T03:04:05.100Z"));
        ConsumerRecord<byte[], byte[]> impossible = record(UUID.randomUUID().toString(), "{}");
        impossible.headers().add("createdAt", "2025-02-30T00:00:00.000000Z".getBytes(StandardCharsets.UTF_8));
        assertThat(failure(impossible))
                .as("the relay's format, but no such day: the general parser refuses it too")
                .hasMessage("header 'createdAt' is not an ISO-8601 instant: '2025-02-30T00:00:00.000000Z'");
    }

    private Instant createdAt(String text) {
        ConsumerRecord<byte[], byte[]> r = record(UUID.randomUUID().toString(), "{}");
        r.headers().add("createdAt", text.getBytes(StandardCharsets.UTF_8));
        return decode(r).createdAt();
    }

    @Test
    void anotherIdHeaderCanBeConfigured() {
        UUID id = UUID.randomUUID();
        ConsumerRecord<byte[], byte[]> r = new ConsumerRecord<>("t", 0, 0L, null, "{}".getBytes(StandardCharsets.UTF_8));
        r.headers().add("eventId", id.toString().getBytes(StandardCharsets.UTF_8));
        assertThat(new RecordDecoder("eventId").decode(r).event().id()).isEqualTo(id);
        assertThat(failure(r)).as("the default decoder looks for 'id'").hasMessage(NO_ID_HEADER);
    }

    private InboxEvent decode(String id, String value) {
        return decode(record(id, value));
    }

    private InboxEvent decode(ConsumerRecord<byte[], byte[]> record) {
        RecordDecoder.Decoded d = decoder.decode(record);
        assertThat(d.failure()).isNull();
        return d.event();
    }

    /** The reason {@code record} is poison; a poison record decodes to no event. */
    private InvalidEventException failure(ConsumerRecord<byte[], byte[]> record) {
        RecordDecoder.Decoded d = decoder.decode(record);
        assertThat(d.event()).isNull();
        assertThat(d.failure()).isNotNull();
        return d.failure();
    }

    private static ConsumerRecord<byte[], byte[]> record(String id, String value) {
        ConsumerRecord<byte[], byte[]> r = new ConsumerRecord<>("t", 0, 0L, "k".getBytes(StandardCharsets.UTF_8),
                value.getBytes(StandardCharsets.UTF_8));
        if (id != null) {
            r.headers().add("id", id.getBytes(StandardCharsets.UTF_8));
        }
        return r;
    }
}
