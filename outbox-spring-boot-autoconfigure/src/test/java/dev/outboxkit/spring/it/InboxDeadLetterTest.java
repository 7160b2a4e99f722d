package dev.outboxkit.spring.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.outboxkit.consumer.DeadLetterHeaders;
import dev.outboxkit.consumer.LateArrivalException;
import dev.outboxkit.core.InvalidEventException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

/**
 * consumer-dedupe's dead-letter and late-arrival behaviour in a Spring Kafka listener through the
 * auto-configured error handler: a record the inbox cannot decode goes to {@code <topic>.dlq} at
 * once, a record whose handler keeps failing after max-attempts, a late arrival to
 * {@code <topic>.review}; each with consumer-dedupe's headers, none recorded or applied, and the
 * listener carries on.
 */
class InboxDeadLetterTest extends RelayAppTest {

    static final String DLQ = Projection.TOPIC + ".dlq";
    static final String REVIEW = Projection.TOPIC + ".review";

    RecordMetadata produce(String key, Map<String, String> headers) throws Exception {
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka().kafka.bootstrapServers(),
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName(),
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName()))) {
            ProducerRecord<String, String> r = new ProducerRecord<>(Projection.TOPIC, key, "{\"poison\":true}");
            headers.forEach((k, v) -> r.headers().add(k, v.getBytes(StandardCharsets.UTF_8)));
            return producer.send(r).get();
        }
    }

    ConsumerRecord<byte[], byte[]> awaitForwarded(String topic, String key) {
        return await().atMost(Duration.ofSeconds(60)).until(() -> kafka().kafka.readAll(List.of(topic)).stream()
                .filter(r -> r.key() != null && new String(r.key(), StandardCharsets.UTF_8).equals(key))
                .findFirst().orElse(null), r -> r != null);
    }

    static String header(ConsumerRecord<byte[], byte[]> r, String name) {
        Header h = r.headers().lastHeader(name);
        return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
    }

    static void assertForwardedFrom(ConsumerRecord<byte[], byte[]> r, RecordMetadata original, String reason, String error,
                                    String attempts) {
        assertThat(new String(r.value(), StandardCharsets.UTF_8)).isEqualTo("{\"poison\":true}");
        assertThat(header(r, DeadLetterHeaders.REASON)).isEqualTo(reason);
        assertThat(header(r, DeadLetterHeaders.ERROR_CLASS)).isEqualTo(error);
        assertThat(header(r, DeadLetterHeaders.ERROR_MESSAGE)).isNotBlank();
        assertThat(header(r, DeadLetterHeaders.ATTEMPTS)).isEqualTo(attempts);
        assertThat(header(r, DeadLetterHeaders.ORIGINAL_TOPIC)).isEqualTo(Projection.TOPIC);
        assertThat(header(r, DeadLetterHeaders.ORIGINAL_PARTITION)).isEqualTo(Integer.toString(original.partition()));
        assertThat(header(r, DeadLetterHeaders.ORIGINAL_OFFSET)).isEqualTo(Long.toString(original.offset()));
        assertThat(header(r, DeadLetterHeaders.GROUP)).isEqualTo("projection");
        assertThat(header(r, DeadLetterHeaders.FORWARDED_AT)).isNotNull();
        assertThat(r.timestamp()).isEqualTo(original.timestamp());
    }

    @Test
    void aRecordWithoutAValidIdGoesToTheDeadLetterTopicAtOnceAndTheListenerCarriesOn() throws Exception {
        String key = "poison-" + UUID.randomUUID();
        RecordMetadata original = produce(key, Map.of("id", "not-a-uuid", "eventType", "TransferMade"));
        ConsumerRecord<byte[], byte[]> dead = awaitForwarded(DLQ, key);
        assertForwardedFrom(dead, original, DeadLetterHeaders.REASON_UNDECODABLE, InvalidEventException.class.getName(), "0");
        assertThat(header(dead, "id")).as("original headers kept").isEqualTo("not-a-uuid");
        assertThat(header(dead, "eventType")).isEqualTo("TransferMade");

        UUID next = transfers(1, false).get(0);   // the listener is not stuck behind the poison
        await().atMost(Duration.ofSeconds(60)).until(() ->
                count("SELECT count(*) FROM projection_log WHERE transfer_id = ?", next.toString()) == 1);
    }

    @Test
    void aRecordWhoseHandlerKeepsFailingIsDeadLetteredAfterMaxAttempts() throws Exception {
        String key = "failing-" + UUID.randomUUID();
        projection.failEveryDeliveryOf(key);
        UUID id = UUID.randomUUID();
        RecordMetadata original = produce(key, Map.of("id", id.toString()));
        ConsumerRecord<byte[], byte[]> dead = awaitForwarded(DLQ, key);
        assertForwardedFrom(dead, original, DeadLetterHeaders.REASON_HANDLER_FAILED, IllegalStateException.class.getName(), "5");
        assertThat(count("SELECT count(*) FROM processed_event WHERE event_id = ?::uuid", id.toString()))
                .as("a dead-lettered event is not recorded, so replaying it applies it").isZero();
    }

    @Test
    void aLateArrivalGoesToTheReviewTopicNeitherAppliedNorRecorded() throws Exception {
        String key = "late-" + UUID.randomUUID();
        UUID id = UUID.randomUUID();
        Instant created = Instant.now().minus(Duration.ofDays(30));   // older than the 7-day retention
        RecordMetadata original = produce(key, Map.of("id", id.toString(), "createdAt", created.toString()));
        ConsumerRecord<byte[], byte[]> late = awaitForwarded(REVIEW, key);
        assertForwardedFrom(late, original, DeadLetterHeaders.REASON_LATE_ARRIVAL, LateArrivalException.class.getName(), "0");
        assertThat(header(late, DeadLetterHeaders.ERROR_MESSAGE)).contains(id.toString()).contains("retention");
        assertThat(count("SELECT count(*) FROM processed_event WHERE event_id = ?::uuid", id.toString())).isZero();
        assertThat(count("SELECT count(*) FROM projection_log WHERE transfer_id = ?", key)).isZero();
    }
}
