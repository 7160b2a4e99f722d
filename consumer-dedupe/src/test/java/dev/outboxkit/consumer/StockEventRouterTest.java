package dev.outboxkit.consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.outboxkit.core.InvalidEventException;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * consumer-dedupe behind the real thing: Debezium Embedded with the stock outbox {@code EventRouter} on the outbox
 * table of a real PostgreSQL, its records converted by Kafka Connect's own converters into a real Kafka, for each
 * converter combination users pick. The engine is restarted from an older offsets file, so part of the stream is
 * published twice; records from elsewhere that the consumer cannot decode sit in the same topic. The effect is
 * exactly once per event, in each aggregate's order, with the fields the router placed read back, and the
 * undecodable records are in {@code <topic>.dlq} with their reason.
 */
@ExtendWith(OutboxTestkitExtension.class)
class StockEventRouterTest {

    private static final Duration WAIT = Duration.ofSeconds(120);
    private static final int AGGREGATES = 6;
    private static final int PER_AGGREGATE_AND_PHASE = 10;

    @ParameterizedTest
    @EnumSource(StockRouterPipeline.Converters.class)
    void effectOnceInOrderBehindTheStockRouter(StockRouterPipeline.Converters converters, TestDatabase db, TestKafka kafka,
                                                @TempDir Path dir) throws Exception {
        String prefix = TestKafka.uniqueTopic("stock-router");
        String topic = prefix + ".order";
        kafka.createTopic(topic, 3);
        kafka.createTopic(topic + ".dlq", 1);
        db.exec("CREATE TABLE applied (n bigserial PRIMARY KEY, event_id uuid NOT NULL, aggregate_id text NOT NULL, "
                + "seq int NOT NULL, key text, event_type text, created_at timestamptz)");
        String slot = "st_" + db.name();
        Path offsets = dir.resolve("offsets.dat");
        Path older = dir.resolve("offsets-older.dat");

        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        String group = "g-" + topic;
        DedupeConsumer consumer = Consumers.builder(kafka, db, topic, group)
                .handler((c, event) -> {
                    var payload = event.payloadJson(); // undecodable values throw InvalidEventException: dead letter
                    try (PreparedStatement ps = c.prepareStatement("INSERT INTO applied (event_id, aggregate_id, seq, key, "
                            + "event_type, created_at) VALUES (?, ?, ?, ?, ?, ?)")) {
                        ps.setObject(1, event.id());
                        ps.setString(2, payload.get("aggregate").asText());
                        ps.setInt(3, payload.get("seq").asInt());
                        ps.setString(4, event.aggregateId());
                        ps.setString(5, event.eventType());
                        ps.setObject(6, event.createdAt() == null ? null : event.createdAt().atOffset(java.time.ZoneOffset.UTC));
                        ps.executeUpdate();
                    }
                })
                .meterRegistry(registry)
                .build();
        consumer.start();
        try {
            try (StockRouterPipeline first = new StockRouterPipeline(db, kafka, converters, slot, prefix, offsets).start()) {
                write(db, 0);
                await().atMost(WAIT).until(() -> first.acked() >= AGGREGATES * PER_AGGREGATE_AND_PHASE);
                // wait for the offsets of phase 0 to reach the file, then keep that older copy
                await().atMost(WAIT).until(() -> Files.exists(offsets) && Files.size(offsets) > 0);
                Files.copy(offsets, older, StandardCopyOption.REPLACE_EXISTING);
                write(db, 1);
                await().atMost(WAIT).until(() -> first.acked() >= 2L * AGGREGATES * PER_AGGREGATE_AND_PHASE);
                assertThat(first.failure()).isNull();
            }
            publishUndecodable(kafka, topic);
            // restart from the older offsets: phase 1 (at least) is published a second time, then phase 2
            Files.copy(older, offsets, StandardCopyOption.REPLACE_EXISTING);
            try (StockRouterPipeline second = new StockRouterPipeline(db, kafka, converters, slot, prefix, offsets).start()) {
                write(db, 2);
                await().atMost(WAIT).until(() -> second.acked() >= 2L * AGGREGATES * PER_AGGREGATE_AND_PHASE);
                assertThat(second.failure()).isNull();
            }
            int events = 3 * AGGREGATES * PER_AGGREGATE_AND_PHASE;
            await().atMost(WAIT).until(() -> db.count("SELECT count(*) FROM applied") >= events
                    && kafka.readAll(List.of(topic + ".dlq")).size() >= 3);

            assertThat(kafka.readAll(List.of(topic)).size()).as("the topic holds redeliveries")
                    .isGreaterThanOrEqualTo(events + AGGREGATES * PER_AGGREGATE_AND_PHASE + 3);
            assertThat(Consumers.count(registry, "outbox.consumer.duplicates", group)).as("redeliveries were skipped")
                    .isGreaterThanOrEqualTo(AGGREGATES * PER_AGGREGATE_AND_PHASE);
            assertThat(db.count("SELECT count(*) FROM applied")).as("each event applied once").isEqualTo(events);
            assertThat(db.count("SELECT count(DISTINCT event_id) FROM applied")).isEqualTo(events);
            assertThat(db.count("SELECT count(*) FROM applied a JOIN outbox_event o ON o.id = a.event_id "
                    + "WHERE a.event_type = o.event_type AND a.created_at = o.created_at"))
                    .as("event type and created_at read back from the router's headers").isEqualTo(events);
            if (converters.plainKeys()) {
                assertThat(db.count("SELECT count(*) FROM applied WHERE key = aggregate_id")).as("the key is the aggregate id")
                        .isEqualTo(events);
            }
            for (String aggregate : db.strings("SELECT DISTINCT aggregate_id FROM applied")) {
                assertThat(db.strings("SELECT seq::text FROM applied WHERE aggregate_id = '" + aggregate + "' ORDER BY n"))
                        .as("order of %s", aggregate)
                        .containsExactlyElementsOf(java.util.stream.IntStream.range(0, 3 * PER_AGGREGATE_AND_PHASE)
                                .mapToObj(Integer::toString).toList());
            }
            assertDeadLetters(kafka.readAll(List.of(topic + ".dlq")));
        } finally {
            consumer.close();
            db.dropReplicationSlot(slot);
        }
    }

    /** Phase {@code phase}: per aggregate, events seq 10·phase … 10·phase+9, one transaction per round. */
    private static void write(TestDatabase db, int phase) throws SQLException {
        try (Connection c = db.connect()) {
            c.setAutoCommit(false);
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO outbox_event (id, aggregate_type, aggregate_id, "
                    + "event_type, payload) VALUES (?, 'order', ?, 'OrderPlaced', ?::jsonb)")) {
                for (int i = 0; i < PER_AGGREGATE_AND_PHASE; i++) {
                    for (int a = 0; a < AGGREGATES; a++) {
                        int seq = phase * PER_AGGREGATE_AND_PHASE + i;
                        ps.setObject(1, UUID.randomUUID());
                        ps.setString(2, "order-" + a);
                        ps.setString(3, "{\"aggregate\": \"order-" + a + "\", \"seq\": " + seq + ", \"note\": \"h\\u00e9\"}");
                        ps.addBatch();
                    }
                    ps.executeBatch();
                    c.commit();
                }
            }
        }
    }

    /** Records from another producer in the same topic: no id, an id that is no UUID, a value that is not JSON. */
    private static void publishUndecodable(TestKafka kafka, String topic) throws Exception {
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(Map.of("bootstrap.servers", kafka.bootstrapServers()),
                new ByteArraySerializer(), new ByteArraySerializer())) {
            producer.send(new ProducerRecord<>(topic, 0, bytes("x"), bytes("{}"), new RecordHeaders())).get();
            RecordHeaders notUuid = new RecordHeaders();
            notUuid.add("id", bytes("order-17"));
            producer.send(new ProducerRecord<>(topic, 0, bytes("x"), bytes("{}"), notUuid)).get();
            RecordHeaders notJson = new RecordHeaders();
            notJson.add("id", bytes(UUID.randomUUID().toString()));
            producer.send(new ProducerRecord<>(topic, 0, bytes("x"), bytes("<order/>"), notJson)).get();
        }
    }

    private static void assertDeadLetters(List<ConsumerRecord<byte[], byte[]>> dead) {
        assertThat(dead).hasSize(3);
        Map<String, String> reasonByMessage = dead.stream().collect(Collectors.toMap(
                r -> header(r, DeadLetterHeaders.ERROR_MESSAGE), r -> header(r, DeadLetterHeaders.REASON)));
        List<String> messages = new ArrayList<>(reasonByMessage.keySet());
        assertThat(messages).anySatisfy(m -> assertThat(m).contains("has no 'id' header"));
        assertThat(messages).anySatisfy(m -> assertThat(m).isEqualTo("header 'id' is not a UUID: 'order-17'"));
        assertThat(messages).anySatisfy(m -> assertThat(m).startsWith("the record value is not JSON"));
        reasonByMessage.forEach((message, reason) -> assertThat(reason).as(message).isEqualTo(
                message.startsWith("the record value") ? DeadLetterHeaders.REASON_HANDLER_FAILED : DeadLetterHeaders.REASON_UNDECODABLE));
        assertThat(dead).allSatisfy(r -> assertThat(header(r, DeadLetterHeaders.ERROR_CLASS))
                .isEqualTo(InvalidEventException.class.getName()));
    }

    private static String header(ConsumerRecord<byte[], byte[]> r, String name) {
        var h = r.headers().lastHeader(name);
        return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
