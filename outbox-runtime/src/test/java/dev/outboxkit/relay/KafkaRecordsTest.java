package dev.outboxkit.relay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxkit.core.HeaderNames;
import dev.outboxkit.core.InvalidEventException;
import dev.outboxkit.core.OutboxEvent;
import dev.outboxkit.core.TopicRoute;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.junit.jupiter.api.Test;

class KafkaRecordsTest {

    private static final UUID ID = UUID.fromString("018f3a5e-7b2c-7d11-8a00-0123456789ab");
    private static final Instant CREATED = Instant.parse("2026-11-29T08:38:37.1234Z");
    private final KafkaRecords records = new KafkaRecords(TopicRoute.defaultRoute());

    private static OutboxEvent event(String topic, String headersJson) {
        return OutboxEvent.fromRow(ID, "account", "acc-42", "MoneyDeposited", topic,
                "{\"amount\": 10}", headersJson, CREATED);
    }

    @Test
    void mapsTheContract() {
        ProducerRecord<byte[], byte[]> r = records.toRecord(event(null, "{\"traceparent\": \"00-abc-def-01\"}"));
        assertThat(r.topic()).isEqualTo("outbox.event.account");
        assertThat(r.partition()).isNull();
        assertThat(new String(r.key(), StandardCharsets.UTF_8)).isEqualTo("acc-42");
        assertThat(new String(r.value(), StandardCharsets.UTF_8)).isEqualTo("{\"amount\": 10}");
        assertThat(headers(r)).containsExactly(
                "id=018f3a5e-7b2c-7d11-8a00-0123456789ab",
                "eventType=MoneyDeposited",
                "aggregateType=account",
                "createdAt=2026-11-29T08:38:37.123400Z",
                "traceparent=00-abc-def-01");
    }

    @Test
    void aBinaryEventsValueIsItsBytesWithAContentTypeHeader() {
        byte[] bytes = {0, (byte) 0x80, (byte) 0xff, '{'};
        OutboxEvent binary = OutboxEvent.fromRow(ID, "account", "acc-42", "MoneyDeposited", null, null, bytes,
                "application/vnd.confluent.avro", "{\"traceparent\": \"00-abc-def-01\"}", CREATED);
        ProducerRecord<byte[], byte[]> r = records.toRecord(binary);
        assertThat(r.value()).isSameAs(bytes);
        assertThat(headers(r)).containsExactly(
                "id=018f3a5e-7b2c-7d11-8a00-0123456789ab",
                "eventType=MoneyDeposited",
                "aggregateType=account",
                "createdAt=2026-11-29T08:38:37.123400Z",
                "content-type=application/vnd.confluent.avro",
                "traceparent=00-abc-def-01");
    }

    @Test
    void aJsonEventGetsNoContentTypeAndKeepsAUserHeaderOfThatName() {
        assertThat(headers(records.toRecord(event(null, "{}")))).noneMatch(h -> h.startsWith("content-type="));
        assertThat(headers(records.toRecord(event(null, "{\"content-type\": \"text/x-legacy\"}"))))
                .contains("content-type=text/x-legacy");
        OutboxEvent binaryWithHeader = OutboxEvent.fromRow(ID, "account", "acc-42", "E", null, null, new byte[] {1},
                "application/octet-stream", "{\"Content-Type\": \"text/plain\"}", CREATED);
        assertThatThrownBy(() -> records.toRecord(binaryWithHeader)).isInstanceOf(InvalidEventException.class)
                .hasMessageContaining("may not have a header 'Content-Type'");
    }

    @Test
    void aRowIsJsonOrBinaryNeverBothOrNeither() {
        assertThatThrownBy(() -> OutboxEvent.fromRow(ID, "a", "1", "e", null, "{}", new byte[0], "application/x-a", "{}",
                CREATED)).isInstanceOf(InvalidEventException.class).hasMessageContaining("it has both");
        assertThatThrownBy(() -> OutboxEvent.fromRow(ID, "a", "1", "e", null, null, null, null, "{}", CREATED))
                .isInstanceOf(InvalidEventException.class).hasMessageContaining("it has neither");
        assertThatThrownBy(() -> OutboxEvent.fromRow(ID, "a", "1", "e", null, null, new byte[0], null, "{}", CREATED))
                .isInstanceOf(InvalidEventException.class).hasMessageContaining("needs a content type");
        assertThatThrownBy(() -> OutboxEvent.fromRow(ID, "a", "1", "e", null, "{}", null, "application/json", "{}", CREATED))
                .isInstanceOf(InvalidEventException.class).hasMessageContaining("is JSON but has a content type");
    }

    @Test
    void explicitTopicWinsOverTheRoute() {
        assertThat(records.toRecord(event("payments.v1", "{}")).topic()).isEqualTo("payments.v1");
    }

    @Test
    void routeTemplateMayUseEventType() {
        KafkaRecords byType = new KafkaRecords(TopicRoute.of("app.${aggregateType}.${eventType}"));
        assertThat(byType.toRecord(event(null, "{}")).topic()).isEqualTo("app.account.MoneyDeposited");
    }

    @Test
    void createdAtAlwaysHasSixFractionDigits() {
        assertThat(KafkaRecords.formatCreatedAt(Instant.parse("2026-01-02T03:04:05Z"))).isEqualTo("2026-01-02T03:04:05.000000Z");
        assertThat(KafkaRecords.formatCreatedAt(Instant.parse("2026-01-02T03:04:05.000001Z"))).isEqualTo("2026-01-02T03:04:05.000001Z");
    }

    @Test
    void createdAtIsTheFormattersOutputCharacterForCharacter() {
        java.util.Random random = new java.util.Random(42);
        List<Instant> instants = new ArrayList<>(List.of(Instant.parse("0000-01-01T00:00:00Z"),
                Instant.parse("9999-12-31T23:59:59.999999999Z"), Instant.parse("+10000-01-01T00:00:00Z"),
                Instant.parse("-0001-12-31T23:59:59.5Z"), Instant.parse("1970-01-01T00:00:00Z"),
                Instant.parse("2000-02-29T12:00:00.000999Z")));
        for (int i = 0; i < 100_000; i++) {
            instants.add(Instant.ofEpochSecond(random.nextLong(-70_000_000_000L, 300_000_000_000L), random.nextInt(1_000_000_000)));
        }
        for (Instant t : instants) {
            assertThat(KafkaRecords.formatCreatedAt(t)).as(t.toString()).isEqualTo(KafkaRecords.CREATED_AT_FORMAT.format(t));
        }
    }

    @Test
    void nonStringHeaderValuesBecomeTheirJsonText() {
        ProducerRecord<byte[], byte[]> r = records.toRecord(event(null, "{\"n\": 5, \"flags\": [true, null], \"o\": {\"a\": 1}}"));
        assertThat(headers(r)).endsWith("n=5", "flags=[true,null]", "o={\"a\":1}");
    }

    @Test
    void headerReusingAReservedNameIsRefused() {
        for (String reserved : HeaderNames.RESERVED) {
            assertThatThrownBy(() -> records.toRecord(event(null, "{\"" + reserved + "\": \"x\"}")))
                    .isInstanceOf(InvalidEventException.class)
                    .hasMessageContaining("reserved");
        }
    }

    @Test
    void illegalTopicsAreRefusedAsInvalidEvents() {
        assertThatThrownBy(() -> records.toRecord(event("bad topic", "{}")))
                .isInstanceOf(InvalidEventException.class).hasMessageContaining("characters Kafka does not allow");
        KafkaRecords routed = new KafkaRecords(TopicRoute.defaultRoute());
        OutboxEvent weird = OutboxEvent.fromRow(ID, "acc/unt", "1", "t", null, "{}", "{}", CREATED);
        assertThatThrownBy(() -> routed.toRecord(weird)).isInstanceOf(InvalidEventException.class);
    }

    @Test
    void headersThatAreNotAnObjectAreRefused() {
        assertThatThrownBy(() -> event(null, "[1,2]")).isInstanceOf(InvalidEventException.class)
                .hasMessageContaining("JSON object");
        assertThatThrownBy(() -> event(null, "{\"a\": ")).isInstanceOf(InvalidEventException.class)
                .hasMessageContaining("not valid JSON");
    }

    @Test
    void routeTemplatesAreValidated() {
        assertThatThrownBy(() -> TopicRoute.of("outbox ${aggregateType}")).hasMessageContaining("cannot produce a legal topic");
        assertThatThrownBy(() -> TopicRoute.of("x.${tenant}")).hasMessageContaining("unknown placeholder");
        assertThat(TopicRoute.of("fixed-topic").template()).isEqualTo("fixed-topic");
    }

    private static List<String> headers(ProducerRecord<byte[], byte[]> r) {
        List<String> out = new ArrayList<>();
        for (Header h : r.headers()) {
            out.add(h.key() + "=" + new String(h.value(), StandardCharsets.UTF_8));
        }
        return out;
    }
}
