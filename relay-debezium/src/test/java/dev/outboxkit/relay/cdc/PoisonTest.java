package dev.outboxkit.relay.cdc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.testkit.History;
import dev.outboxkit.testkit.OutboxRows;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Events Kafka can never take are parked in outbox_dead_letter with the reason; the rest keeps flowing. */
@ExtendWith(OutboxTestkitExtension.class)
class PoisonTest {

    @Test
    void poisonIsParkedNotDroppedAndNotBlocking(TestDatabase db, TestKafka kafka) throws Exception {
        String topic = TestKafka.uniqueTopic("cdc-poison");
        kafka.createTopic(topic, 2);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (CdcRelay relay = CdcTestSupport.relay(db, kafka).route(TopicRoute.of(topic)).meterRegistry(registry).build()) {
            relay.start();
            await().atMost(Duration.ofSeconds(90)).until(() -> relay.health().ready());
            try (Connection c = db.connect(); Statement s = c.createStatement()) {
                c.setAutoCommit(false);
                s.execute("INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload) VALUES "
                        + "('00000000-0000-7000-8000-000000000001', 'order', 'a', 'Fine', '{\"n\": 1}')");
                // a header that reuses a reserved name: the mapping refuses it
                s.execute("INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload, headers) VALUES "
                        + "('00000000-0000-7000-8000-000000000002', 'order', 'a', 'Reserved', '{}', '{\"id\": \"spoof\"}')");
                // a topic the table's check allows but Kafka does not
                s.execute("INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload, topic) VALUES "
                        + "('00000000-0000-7000-8000-000000000003', 'order', 'a', 'BadTopic', '{}', '..')");
                // larger than the producer's max.request.size (1 MiB)
                s.execute("INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload) VALUES "
                        + "('00000000-0000-7000-8000-000000000004', 'order', 'a', 'Huge', "
                        + "jsonb_build_object('blob', repeat('x', 1200000)))");
                // a logical decoding message that is not an event at all
                s.execute("SELECT pg_logical_emit_message(true, 'outboxkit', 'not json')");
                // binary rows: one with a content type that is no media type (the table checks only that one is
                // there), parked with its bytes; one fine
                s.execute("INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload_bytes, content_type)"
                        + " VALUES ('00000000-0000-7000-8000-000000000006', 'order', 'a', 'BadType', '\\x0102'::bytea, 'protobuf')");
                s.execute("INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload_bytes, content_type)"
                        + " VALUES ('00000000-0000-7000-8000-000000000007', 'order', 'a', 'FineBinary', '\\x0a00'::bytea,"
                        + " 'application/x-protobuf')");
                s.execute("INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload) VALUES "
                        + "('00000000-0000-7000-8000-000000000005', 'order', 'a', 'FineToo', '{\"n\": 2}')");
                c.commit();
            }
            await().atMost(Duration.ofSeconds(90)).until(() -> db.count("SELECT count(*) FROM outbox_dead_letter") == 5
                    && db.count("SELECT count(*) FROM outbox_event") == 0);
            var records = CdcTestSupport.await(kafka, topic, 3, Duration.ofSeconds(60));
            assertThat(records).extracting(r -> CdcTestSupport.header(r, "eventType"))
                    .containsExactly("Fine", "FineBinary", "FineToo");
            assertThat(records.get(1).value()).containsExactly(0x0a, 0x00);
            assertThat(CdcTestSupport.header(records.get(1), "content-type")).isEqualTo("application/x-protobuf");
            // counted just after the parking commit the wait above saw
            await("5 parked events counted").atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                    assertThat(registry.get("outbox.relay.dead_lettered").counter().count()).isEqualTo(5));
            assertThat(registry.get("outbox.relay.published").counter().count()).isEqualTo(3);
            assertThat(db.count("SELECT count(*) FROM outbox_dead_letter WHERE event_type = 'BadType' AND payload IS NULL"
                    + " AND payload_bytes = '\\x0102'::bytea AND content_type = 'protobuf'")).isEqualTo(1);
        } finally {
            CdcTestSupport.dropSlot(db);
        }
        Map<String, String> reasons = new HashMap<>();
        try (Connection c = db.connect(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(
                "SELECT event_type, error_class, error_message, parked_by, seq FROM outbox_dead_letter")) {
            while (rs.next()) {
                reasons.put(rs.getString(1), rs.getString(2) + ": " + rs.getString(3));
                assertThat(rs.getString(4)).isNotBlank();
            }
        }
        assertThat(reasons).containsOnlyKeys("Reserved", "BadTopic", "Huge", "unknown", "BadType");
        assertThat(reasons.get("BadType")).startsWith("dev.outboxkit.core.InvalidEventException").contains("no '/'");
        assertThat(reasons.get("Reserved")).startsWith("dev.outboxkit.core.InvalidEventException").contains("reserved");
        assertThat(reasons.get("BadTopic")).startsWith("dev.outboxkit.core.InvalidEventException").contains("'..'");
        assertThat(reasons.get("Huge")).startsWith("org.apache.kafka.common.errors.RecordTooLargeException");
        assertThat(reasons.get("unknown")).startsWith("dev.outboxkit.core.InvalidEventException");
        assertThat(List.copyOf(reasons.keySet())).hasSize(5);
    }

    /**
     * The broker (not the producer) refuses batches: the topic takes 10 kB per batch, the producer sends up to
     * 256 KiB, so Kafka splits batches again and again. Every event arrives in its aggregate's order, and the one
     * record that is too large on its own is parked with Kafka's reason.
     */
    @Test
    void batchesTheBrokerRefusesAreSplitInOrderAndARecordTooLargeAloneIsParked(TestDatabase db, TestKafka kafka) throws Exception {
        String topic = TestKafka.uniqueTopic("cdc-split");
        kafka.createTopic(topic, 2, (short) -1, Map.of("max.message.bytes", "10000"));
        SecureRandom random = new SecureRandom();
        byte[] noise = new byte[20_000];
        random.nextBytes(noise);
        String oversized = "{\"blob\": \"" + HexFormat.of().formatHex(noise) + "\"}"; // random hex: lz4 cannot shrink it
        History history = new History();
        List<OutboxRows.Row> rows = new ArrayList<>();
        for (int i = 0; i < 1500; i++) {
            String aggregate = "o-" + (i % 40);
            byte[] filler = new byte[200];
            random.nextBytes(filler);
            // 400 incompressible characters: batches outgrow the topic's limit and Kafka splits them again and again
            OutboxRows.Row row = new OutboxRows.Row(dev.outboxkit.core.EventIds.next(), "order", aggregate, "OrderPlaced",
                    topic, "{\"n\": " + i + ", \"filler\": \"" + HexFormat.of().formatHex(filler) + "\"}", "{}");
            if (i == 20) {
                row = new OutboxRows.Row(row.id(), row.aggregateType(), aggregate, "Huge", topic, oversized, "{}");
            } else {
                history.committed(row.id(), aggregate, i);
            }
            rows.add(row);
        }
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (CdcRelay relay = CdcTestSupport.relay(db, kafka).route(TopicRoute.of(topic)).meterRegistry(registry)
                .build()) {
            relay.start();
            await().atMost(Duration.ofSeconds(90)).until(() -> relay.health().ready());
            OutboxRows.insertCommitted(db, rows);
            await().atMost(Duration.ofSeconds(120)).until(() -> db.count("SELECT count(*) FROM outbox_event") == 0);
            // counted just after the parking commit the wait above saw
            await("1 parked events counted").atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                    assertThat(registry.get("outbox.relay.dead_lettered").counter().count()).isEqualTo(1));
        } finally {
            CdcTestSupport.dropSlot(db);
        }
        assertThat(db.count("SELECT count(*) FROM outbox_dead_letter WHERE event_type = 'Huge' AND error_class = "
                + "'org.apache.kafka.common.errors.RecordTooLargeException'")).isEqualTo(1);
        CdcTestSupport.consume(kafka, topic, history);
        History.Report report = history.check();
        assertThat(report.ok()).as(report.summary()).isTrue();
    }

    /**
     * A topic that does not exist yet: the broker creates it on the relay's first record and lists its leader a
     * moment before it serves the partition. With several requests in flight the relay's first batch could meet that
     * moment, be refused while the next batch is appended, and land after it (KAFKA-14359): an aggregate's events out
     * of order, and a two-minute stall. The relay keeps one request in flight, so the first batch is retried before
     * anything behind it is sent.
     */
    @Test
    void aTopicTheBrokerCreatesOnTheFirstRecordGetsEveryAggregateInOrder(TestDatabase db, TestKafka kafka) throws Exception {
        String topic = TestKafka.uniqueTopic("cdc-autocreated"); // never created here: auto.create.topics.enable
        History history = new History();
        List<OutboxRows.Row> rows = new ArrayList<>();
        for (int i = 0; i < 5000; i++) {
            OutboxRows.Row row = OutboxRows.Row.of(topic, "o-" + (i % 50), i);
            history.committed(row.id(), row.aggregateId(), i);
            rows.add(row);
        }
        try (CdcRelay relay = CdcTestSupport.relay(db, kafka).route(TopicRoute.of(topic)).build()) {
            relay.start();
            await().atMost(Duration.ofSeconds(90)).until(() -> relay.health().ready());
            OutboxRows.insertCommitted(db, rows);
            // with five requests in flight this stalled for the producer's delivery timeout (120 s) in 1 of 4 runs here
            await().atMost(Duration.ofSeconds(60)).until(() -> db.count("SELECT count(*) FROM outbox_event") == 0);
        } finally {
            CdcTestSupport.dropSlot(db);
        }
        CdcTestSupport.consume(kafka, topic, history);
        History.Report report = history.check();
        assertThat(report.ok()).as(report.summary()).isTrue();
    }
}
