package dev.outboxkit.relay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxkit.core.InvalidEventException;
import dev.outboxkit.core.OutboxEvent;
import dev.outboxkit.core.RecordFormat;
import dev.outboxkit.core.TopicRoute;
import io.cloudevents.CloudEvent;
import io.cloudevents.SpecVersion;
import io.cloudevents.core.builder.CloudEventBuilder;
import io.cloudevents.kafka.KafkaMessageFactory;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.junit.jupiter.api.Test;

/** The CloudEvents record format, read back with the CloudEvents Java SDK's Kafka reader. */
class CloudEventsRecordsTest {

    private static final UUID ID = UUID.fromString("018f3a5e-7b2c-7d11-8a00-0123456789ab");
    private static final Instant CREATED = Instant.parse("2026-11-29T08:38:37.1234Z");
    private final KafkaRecords records = new KafkaRecords(
            TopicRoute.defaultRoute().withCloudEvents("https://orders.example.com/${aggregateType}"));

    private static OutboxEvent event(String aggregateId, String payload, String headersJson) {
        return OutboxEvent.fromRow(ID, "account", aggregateId, "MoneyDeposited", null, payload, headersJson, CREATED);
    }

    @Test
    void aBinaryEventKeepsItsBytesAndItsOwnContentType() {
        byte[] bytes = {0, 0, 0, 0, 7, 2, 'o', 'k'};
        OutboxEvent binary = new OutboxEvent(ID, "account", "acc-7", "MoneyDeposited", null, null, java.util.Map.of(),
                CREATED, bytes, "application/vnd.confluent.avro");
        ProducerRecord<byte[], byte[]> r = records.toRecord(binary);
        assertThat(r.value()).isEqualTo(bytes);
        assertThat(headers(r)).contains("content-type=application/vnd.confluent.avro")
                .doesNotContain("content-type=application/json");
        CloudEvent read = KafkaMessageFactory.createReader(r.headers(), r.value()).toEvent();
        assertThat(read.getDataContentType()).isEqualTo("application/vnd.confluent.avro");
        assertThat(read.getData().toBytes()).isEqualTo(bytes);
    }

    @Test
    void mapsTheKafkaBindingInBinaryMode() {
        ProducerRecord<byte[], byte[]> r = records.toRecord(event("acc-42", "{\"amount\": 10}", "{\"traceparent\": \"00-abc\"}"));
        assertThat(r.topic()).isEqualTo("outbox.event.account");
        assertThat(new String(r.key(), StandardCharsets.UTF_8)).isEqualTo("acc-42");
        assertThat(new String(r.value(), StandardCharsets.UTF_8)).isEqualTo("{\"amount\": 10}");
        assertThat(headers(r)).containsExactly(
                "ce_specversion=1.0",
                "ce_id=018f3a5e-7b2c-7d11-8a00-0123456789ab",
                "ce_source=https://orders.example.com/account",
                "ce_type=MoneyDeposited",
                "ce_time=2026-11-29T08:38:37.123400Z",
                "ce_subject=acc-42",
                "ce_aggregatetype=account",
                "content-type=application/json",
                "traceparent=00-abc");

        CloudEvent read = KafkaMessageFactory.createReader(r.headers(), r.value()).toEvent();
        CloudEvent expected = CloudEventBuilder.v1()
                .withId(ID.toString())
                .withSource(URI.create("https://orders.example.com/account"))
                .withType("MoneyDeposited")
                .withTime(CREATED.atOffset(ZoneOffset.UTC))
                .withSubject("acc-42")
                .withDataContentType("application/json")
                .withExtension("aggregatetype", "account")
                .withData("{\"amount\": 10}".getBytes(StandardCharsets.UTF_8))
                .build();
        assertThat(read).isEqualTo(expected);
        assertThat(read.getSpecVersion()).isEqualTo(SpecVersion.V1);
        assertThat(read.getExtensionNames()).as("other headers are not attributes").containsExactly("aggregatetype");
    }

    @Test
    void everyEventReadsBackWhateverItsTextsAndTimes() {
        Random random = new Random(7);
        String[] ids = {"acc-1", "\u00e9t\u00e9 \"quoted\" \\ tab\t", "\uD83D\uDE00", " ", "a/b?c#d"};
        for (int i = 0; i < 2000; i++) {
            Instant created = Instant.ofEpochSecond(random.nextLong(0, 4_102_444_800L), random.nextInt(1_000_000) * 1_000L);
            UUID id = UUID.randomUUID();
            String aggregateId = ids[i % ids.length] + i;
            OutboxEvent e = OutboxEvent.fromRow(id, "account", aggregateId, "Type." + i, null, "[" + i + "]", "{}", created);
            ProducerRecord<byte[], byte[]> r = records.toRecord(e);
            CloudEvent read = KafkaMessageFactory.createReader(r.headers(), r.value()).toEvent();
            assertThat(read.getId()).isEqualTo(id.toString());
            assertThat(read.getType()).isEqualTo("Type." + i);
            assertThat(read.getSubject()).isEqualTo(aggregateId);
            assertThat(read.getTime().toInstant()).isEqualTo(created);
            assertThat(read.getData().toBytes()).isEqualTo(r.value());
        }
    }

    @Test
    void theSourceTemplateTakesTheRoutesPlaceholdersAndMustBeAUriReference() {
        KafkaRecords byType = new KafkaRecords(TopicRoute.defaultRoute().withCloudEvents("/orders/${aggregateType}/${eventType}"));
        ProducerRecord<byte[], byte[]> r = byType.toRecord(event("a", "{}", "{}"));
        assertThat(KafkaMessageFactory.createReader(r.headers(), r.value()).toEvent().getSource())
                .isEqualTo(URI.create("/orders/account/MoneyDeposited"));
        assertThatThrownBy(() -> TopicRoute.defaultRoute().withCloudEvents("")).hasMessageContaining("it is empty");
        assertThatThrownBy(() -> TopicRoute.defaultRoute().withCloudEvents("https://x/a b"))
                .hasMessageContaining("is not a URI reference");
        assertThatThrownBy(() -> TopicRoute.defaultRoute().withCloudEvents("/${tenant}"))
                .hasMessageContaining("unknown placeholder");
        // a value filled in that breaks the URI: that event is invalid (parked), not the route
        OutboxEvent spaced = OutboxEvent.fromRow(ID, "bank account", "a", "T", "t", "{}", "{}", CREATED);
        assertThatThrownBy(() -> byType.toRecord(spaced)).isInstanceOf(InvalidEventException.class)
                .hasMessageContaining("its CloudEvents source '/orders/bank account/T' is not a URI reference");
    }

    @Test
    void rowHeadersMayAddExtensionsButNotReuseTheFormatsNames() {
        ProducerRecord<byte[], byte[]> r = records.toRecord(event("a", "{}", "{\"ce_traceparent\": \"00-abc\"}"));
        assertThat(KafkaMessageFactory.createReader(r.headers(), r.value()).toEvent().getExtension("traceparent"))
                .isEqualTo("00-abc");
        for (String reserved : CloudEventsHeaders.RESERVED) {
            assertThatThrownBy(() -> records.toRecord(event("a", "{}", "{\"" + reserved + "\": \"x\"}")))
                    .isInstanceOf(InvalidEventException.class).hasMessageContaining("set by the CloudEvents record format");
        }
        assertThatThrownBy(() -> records.toRecord(event("a", "{}", "{\"ce_Trace-Id\": \"x\"}")))
                .isInstanceOf(InvalidEventException.class).hasMessageContaining("not a legal attribute name");
        assertThatThrownBy(() -> records.toRecord(event("a", "{}", "{\"id\": \"x\"}")))
                .as("outboxkit's own names stay reserved: consumers read either format")
                .isInstanceOf(InvalidEventException.class).hasMessageContaining("reserved by outboxkit");
    }

    @Test
    void theFormatIsPartOfTheRoute() {
        TopicRoute plain = TopicRoute.of("t.${aggregateType}");
        TopicRoute ce = plain.withCloudEvents("/s");
        assertThat(ce).isNotEqualTo(plain).isEqualTo(TopicRoute.of("t.${aggregateType}").withCloudEvents("/s"));
        assertThat(ce.format()).isEqualTo(RecordFormat.CLOUDEVENTS);
        assertThat(ce.cloudEventsSource()).isEqualTo("/s");
        assertThat(ce.withOutboxkitHeaders()).isEqualTo(plain);
        assertThat(plain.format()).isEqualTo(RecordFormat.OUTBOXKIT);
        assertThat(plain.cloudEventsSource()).isNull();
        assertThat(RelayOptions.RECORD_FORMAT.parse("cloudevents")).isEqualTo(RecordFormat.CLOUDEVENTS);
        assertThat(RelayOptions.RECORD_FORMAT.defaultValue()).isEqualTo(RecordFormat.OUTBOXKIT);
        assertThat(RelayOptions.CLOUD_EVENTS_SOURCE.defaultValue()).isEqualTo("/outbox/${aggregateType}");
        assertThatThrownBy(() -> RelayOptions.CLOUD_EVENTS_SOURCE.parse("a b")).hasMessageContaining("not a URI reference");
    }

    private static List<String> headers(ProducerRecord<byte[], byte[]> r) {
        List<String> out = new ArrayList<>();
        for (Header h : r.headers()) {
            out.add(h.key() + "=" + new String(h.value(), StandardCharsets.UTF_8));
        }
        return out;
    }
}
