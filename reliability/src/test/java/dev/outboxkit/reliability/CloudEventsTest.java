package dev.outboxkit.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.outboxkit.consumer.DedupeConsumer;
import dev.outboxkit.core.RecordFormat;
import dev.outboxkit.core.Secret;
import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.relay.cdc.CdcRelay;
import dev.outboxkit.relay.poller.PollingRelay;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import io.cloudevents.CloudEvent;
import io.cloudevents.kafka.KafkaMessageFactory;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.IntStream;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * CloudEvents records end to end, on real PostgreSQL and Kafka: the same rows (same ids, same created_at) in two
 * databases, one published by the polling relay (format set through the builder), the other by the CDC relay
 * (format set as text options, as the CLI and Spring Boot set it). Both relays' records are byte for byte the same,
 * every one reads back through the CloudEvents SDK's Kafka reader, the row whose source cannot be a URI is parked
 * by both with the same reason, and a DedupeConsumer reading both topics applies each event once, in order.
 */
@ExtendWith(OutboxTestkitExtension.class)
class CloudEventsTest {

    private static final Duration WAIT = Duration.ofSeconds(120);
    private static final int AGGREGATES = 4;
    private static final int PER_AGGREGATE = 15;
    private static final String SOURCE = "https://shop.example.com/${aggregateType}";

    @Test
    void bothRelaysPublishTheSameCloudEventsAndTheConsumerAppliesThemOnce(TestDatabase pollDb, TestDatabase cdcDb,
                                                                           TestDatabase consumerDb, TestKafka kafka)
            throws Exception {
        String pollPrefix = TestKafka.uniqueTopic("ce-poll");
        String cdcPrefix = TestKafka.uniqueTopic("ce-cdc");
        kafka.createTopic(pollPrefix + ".order", 3);
        kafka.createTopic(cdcPrefix + ".order", 3);
        List<Object[]> rows = rows();
        insert(pollDb, rows);
        insert(cdcDb, rows);
        int events = AGGREGATES * PER_AGGREGATE;

        String slot = "s_" + cdcDb.name();
        try (PollingRelay poll = PollingRelay.builder()
                .jdbcUrl(pollDb.jdbcUrl()).user(pollDb.user()).password(Secret.of(pollDb.password()))
                .bootstrapServers(kafka.bootstrapServers()).partitions(4)
                .route(TopicRoute.of(pollPrefix + ".${aggregateType}"))
                .recordFormat(RecordFormat.CLOUDEVENTS).cloudEventsSource(SOURCE)
                .build();
             CdcRelay cdc = CdcRelay.builder()
                     .jdbcUrl(cdcDb.jdbcUrl()).user(cdcDb.user()).password(Secret.of(cdcDb.password()))
                     .bootstrapServers(kafka.bootstrapServers()).slotName(slot)
                     .leaseDuration(Duration.ofSeconds(10)).heartbeatInterval(Duration.ofSeconds(1))
                     .offsetFlushInterval(Duration.ofMillis(200))
                     .options(Map.of("route", cdcPrefix + ".${aggregateType}", "record-format", "cloudevents",
                             "cloud-events-source", SOURCE))
                     .build()) {
            poll.start();
            cdc.start();
            await().atMost(WAIT).pollInterval(Duration.ofMillis(500)).until(() ->
                    pollDb.count("SELECT count(*) FROM outbox_dead_letter") == 1
                            && cdcDb.count("SELECT count(*) FROM outbox_dead_letter") == 1
                            && kafka.readAll(List.of(pollPrefix + ".order")).size() >= events
                            && kafka.readAll(List.of(cdcPrefix + ".order")).size() >= events);
        } finally {
            cdcDb.dropReplicationSlot(slot);
        }

        List<ConsumerRecord<byte[], byte[]>> polled = kafka.readAll(List.of(pollPrefix + ".order"));
        List<ConsumerRecord<byte[], byte[]>> streamed = kafka.readAll(List.of(cdcPrefix + ".order"));
        assertThat(polled).hasSize(events);
        assertThat(streamed).hasSize(events);
        Map<String, ConsumerRecord<byte[], byte[]>> byId = new HashMap<>();
        polled.forEach(r -> byId.put(header(r, "ce_id"), r));
        for (ConsumerRecord<byte[], byte[]> r : streamed) {
            ConsumerRecord<byte[], byte[]> twin = byId.get(header(r, "ce_id"));
            assertThat(twin).as("the polling relay published %s too", header(r, "ce_id")).isNotNull();
            assertThat(r.key()).isEqualTo(twin.key());
            assertThat(r.value()).isEqualTo(twin.value());
            assertThat(headers(r)).isEqualTo(headers(twin));
        }
        Map<String, Object[]> rowById = new HashMap<>();
        rows.forEach(row -> rowById.put(row[0].toString(), row));
        for (ConsumerRecord<byte[], byte[]> r : polled) {
            CloudEvent e = KafkaMessageFactory.createReader(r).toEvent();
            Object[] row = rowById.get(e.getId());
            assertThat(row).as("event %s is one of the rows", e.getId()).isNotNull();
            assertThat(e.getSource()).isEqualTo(URI.create("https://shop.example.com/order"));
            assertThat(e.getType()).isEqualTo("OrderPlaced");
            assertThat(e.getSubject()).isEqualTo(row[1]).isEqualTo(new String(r.key(), StandardCharsets.UTF_8));
            assertThat(e.getTime().toInstant()).isEqualTo(row[3]);
            assertThat(e.getDataContentType()).isEqualTo("application/json");
            assertThat(e.getExtension("aggregatetype")).isEqualTo("order");
            assertThat(e.getExtension("traceparent")).isEqualTo("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
            assertThat(e.getData().toBytes()).isEqualTo(r.value());
        }
        String parked = "SELECT error_message FROM outbox_dead_letter";
        assertThat(pollDb.strings(parked)).singleElement().asString()
                .contains("its CloudEvents source 'https://shop.example.com/bad order' is not a URI reference")
                .isEqualTo(cdcDb.strings(parked).get(0));

        consumeBoth(consumerDb, kafka, List.of(pollPrefix + ".order", cdcPrefix + ".order"), events);
    }

    /** One consumer group over both topics: every event arrives twice and is applied once, in its aggregate's order. */
    private static void consumeBoth(TestDatabase db, TestKafka kafka, List<String> topics, int events) throws Exception {
        db.exec("CREATE TABLE applied (n bigserial PRIMARY KEY, event_id uuid NOT NULL, aggregate_id text NOT NULL, "
                + "seq int NOT NULL, event_type text NOT NULL, created_at timestamptz NOT NULL)");
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (DedupeConsumer consumer = DedupeConsumer.builder()
                .bootstrapServers(kafka.bootstrapServers()).group("ce-" + topics.get(0)).topics(topics)
                .dataSource(db.dataSource()).meterRegistry(registry).pollTimeout(Duration.ofMillis(100))
                .handler((c, event) -> {
                    try (PreparedStatement ps = c.prepareStatement("INSERT INTO applied (event_id, aggregate_id, seq, "
                            + "event_type, created_at) VALUES (?, ?, ?, ?, ?)")) {
                        ps.setObject(1, event.id());
                        ps.setString(2, event.aggregateId());
                        ps.setInt(3, event.payloadJson().get("seq").asInt());
                        ps.setString(4, event.eventType());
                        ps.setObject(5, event.createdAt().atOffset(java.time.ZoneOffset.UTC));
                        ps.executeUpdate();
                    }
                })
                .build()) {
            consumer.start();
            await().atMost(WAIT).until(() -> registry.get("outbox.consumer.applied").counter().count()
                    + registry.get("outbox.consumer.duplicates").counter().count() >= 2.0 * events);
        }
        assertThat(db.count("SELECT count(*) FROM applied")).isEqualTo(events);
        assertThat(db.count("SELECT count(DISTINCT event_id) FROM applied")).isEqualTo(events);
        assertThat(db.count("SELECT count(*) FROM applied WHERE event_type = 'OrderPlaced'")).isEqualTo(events);
        for (int a = 0; a < AGGREGATES; a++) {
            assertThat(db.strings("SELECT seq::text FROM applied WHERE aggregate_id = 'order-" + a + "' ORDER BY n"))
                    .containsExactlyElementsOf(IntStream.range(0, PER_AGGREGATE).mapToObj(Integer::toString).toList());
        }
    }

    /** id, aggregate id, seq, created_at (microseconds) of each event, aggregates interleaved; plus the bad one. */
    private static List<Object[]> rows() {
        List<Object[]> rows = new ArrayList<>();
        // recent: older events would be late arrivals (ce_time is what the consumer judges them by)
        Instant base = Instant.now().truncatedTo(java.time.temporal.ChronoUnit.MILLIS).plusNanos(1_000);
        for (int i = 0; i < PER_AGGREGATE; i++) {
            for (int a = 0; a < AGGREGATES; a++) {
                rows.add(new Object[] {UUID.randomUUID(), "order-" + a, i, base.plusNanos((i * AGGREGATES + a) * 1_001_000L)});
            }
        }
        return rows;
    }

    private static void insert(TestDatabase db, List<Object[]> rows) throws SQLException {
        try (Connection c = db.connect()) {
            c.setAutoCommit(false);
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO outbox_event (id, aggregate_type, aggregate_id, "
                    + "event_type, payload, headers, created_at) VALUES (?, 'order', ?, 'OrderPlaced', ?::jsonb, ?::jsonb, ?)")) {
                for (Object[] row : rows) {
                    ps.setObject(1, row[0]);
                    ps.setString(2, (String) row[1]);
                    ps.setString(3, "{\"seq\": " + row[2] + ", \"note\": \"h\\u00e9 \\\"q\\\"\"}");
                    ps.setString(4, "{\"traceparent\": \"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01\", "
                            + "\"ce_traceparent\": \"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01\"}");
                    ps.setObject(5, ((Instant) row[3]).atOffset(java.time.ZoneOffset.UTC));
                    ps.addBatch();
                }
                ps.executeBatch();
            }
            // an aggregate type that makes the source no URI: parked by both relays, with the same reason
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO outbox_event (id, aggregate_type, aggregate_id, "
                    + "event_type, payload, topic) VALUES (?, 'bad order', 'b-1', 'OrderPlaced', '{}', 'ce-parked')")) {
                ps.setObject(1, UUID.fromString("01890000-0000-7000-8000-000000000001"));
                ps.executeUpdate();
            }
            c.commit();
        }
    }

    private static String header(ConsumerRecord<byte[], byte[]> r, String name) {
        Header h = r.headers().lastHeader(name);
        return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
    }

    private static List<String> headers(ConsumerRecord<byte[], byte[]> r) {
        List<String> out = new ArrayList<>();
        for (Header h : r.headers()) {
            out.add(h.key() + "=" + new String(h.value(), StandardCharsets.UTF_8));
        }
        return out;
    }
}
