package dev.outboxkit.relay.cdc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.outboxkit.core.OutboxEvent;
import dev.outboxkit.core.RecordFormat;
import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.relay.KafkaRecords;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The contract: whatever path an event takes through the CDC relay (the start-up drain, the WAL stream,
 * or a logical decoding message of the writer's emit-message mode), its Kafka record is byte for byte
 * {@code KafkaRecords.toRecord(OutboxEvent.fromRow(...))} of the row as SQL reads it back
 * ({@code payload::text}, {@code headers::text}, {@code payload_bytes}) — the exact mapping the polling
 * relay uses; in both record formats (outboxkit's headers and CloudEvents). Binary rows (payload_bytes with a
 * content type) take every path too: their value must be the stored bytes, unchanged, with the
 * {@code content-type} header.
 */
@ExtendWith(OutboxTestkitExtension.class)
class ContractTest {

    /** Payloads that jsonb normalises (key order, numbers, escapes, unicode) and headers of every JSON kind. */
    private static final String[][] SAMPLES = {
            {"{\"b\": 2, \"a\": [1, 2.50, {\"z\": null}], \"text\": \"h\\u00e9llo \\\"quoted\\\" \\\\ tab\\t\"}", "{}"},
            {"\"just a string\"", "{\"traceparent\": \"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01\"}"},
            {"[1, 2, 3]", "{\"n\": 5, \"obj\": {\"x\": [1, \"y\"]}, \"flag\": true, \"none\": null}"},
            {"{}", "{\"z-last\": \"1\", \"a-first\": \"2\"}"},
            {"{\"big\": 12345678901234567890123, \"exp\": 1.5e10, \"small\": 1E-7, \"neg\": -0.0}", "{}"},
            {"{\"emoji\": \"\uD83D\uDE00\", \"cjk\": \"\u6F22\u5B57\", \"nul\": \"a\\u0001b\"}", "{\"lang\": \"\u00e9t\u00e9\"}"},
            {"null", "{}"},
            {"   {  \"spaces\"  :  [ ]  }  ", "{}"},
    };

    /** Binary payloads: every byte value, none at all, one that looks like JSON; content types with parameters. */
    private static final Object[][] BINARY = {
            {allByteValues(), "application/octet-stream"},
            {new byte[0], "application/x-protobuf; messageType=\"shop.Empty\""},
            {"{\"not\": \"json to us\"}".getBytes(StandardCharsets.UTF_8), "application/vnd.example+bytes"},
            {new byte[] {0, 0, 0, 0, 42, 2, 10, (byte) 0xff}, "application/vnd.confluent.avro; version=1"},
    };

    private static byte[] allByteValues() {
        byte[] b = new byte[256];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) i;
        }
        return b;
    }

    private static final String[] CREATED = {
            "2024-05-06 07:08:09.123456+00", "2024-05-06 07:08:09.120000+02", "2024-05-06 07:08:09+00",
            "1999-12-31 23:59:59.999999-05:30", null};

    /** In both record formats: outboxkit's headers, and CloudEvents (the route given to the builder in that format). */
    @ParameterizedTest
    @EnumSource(RecordFormat.class)
    void everyPathYieldsThePollersRecordByteForByte(RecordFormat format, TestDatabase db, TestKafka kafka) throws Exception {
        String explicitTopic = TestKafka.uniqueTopic("cdc-contract");
        String routePrefix = TestKafka.uniqueTopic("cdc-route");
        TopicRoute route = TopicRoute.of(routePrefix + ".${aggregateType}");
        if (format == RecordFormat.CLOUDEVENTS) {
            route = route.withCloudEvents("https://contract.example/${aggregateType}/${eventType}");
        }
        String routedTopic = routePrefix + ".order";
        kafka.createTopic(explicitTopic, 3);
        kafka.createTopic(routedTopic, 3);
        KafkaRecords mapping = new KafkaRecords(route);
        Map<UUID, ProducerRecord<byte[], byte[]>> expected = new HashMap<>();

        // 1. rows already in the table when the relay starts: the start-up drain publishes them
        expected.putAll(writeRows(db, mapping, explicitTopic, "drain"));

        try {
            try (CdcRelay relay = CdcTestSupport.relay(db, kafka).route(route).build()) {
                relay.start();
                await().atMost(Duration.ofSeconds(90)).until(() -> relay.health().ready());
                // 2. rows committed while it streams: the WAL path
                expected.putAll(writeRows(db, mapping, explicitTopic, "wal"));
                await().atMost(Duration.ofSeconds(90))
                        .until(() -> db.count("SELECT count(*) FROM outbox_event") == 0);
            }
            try (CdcRelay relay = CdcTestSupport.relay(db, kafka).route(route).deleteAfterPublish(false).build()) {
                relay.start();
                await().atMost(Duration.ofSeconds(90)).until(() -> relay.health().ready());
                // 3. the writer's emit-message mode (the relay in WAL-only mode, as documented for it), messages
                //    built with json_build_object and with jsonb_build_object, and in the writer's own format
                expected.putAll(emitMessages(db, mapping, explicitTopic, "json_build_object"));
                expected.putAll(emitMessages(db, mapping, explicitTopic, "jsonb_build_object"));
                expected.putAll(emitMessages(db, mapping, explicitTopic, "writer"));
                List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>();
                await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(500)).until(() -> {
                    records.clear();
                    records.addAll(kafka.readAll(List.of(explicitTopic, routedTopic)));
                    return records.size() >= expected.size();
                });
                assertSameRecords(records, expected);
            }
        } finally {
            CdcTestSupport.dropSlot(db);
        }
    }

    /** Inserts one row per sample and returns the records the poller's mapping makes of them, read back in the same transaction. */
    private static Map<UUID, ProducerRecord<byte[], byte[]>> writeRows(TestDatabase db, KafkaRecords mapping, String topic,
                                                                       String tag) throws SQLException {
        List<UUID> ids = new ArrayList<>();
        try (Connection c = db.connect()) {
            c.setAutoCommit(false);
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO outbox_event (id, aggregate_type, aggregate_id, "
                    + "event_type, topic, payload, headers, created_at) VALUES (?, 'order', ?, ?, ?, ?::jsonb, ?::jsonb, "
                    + "coalesce(?::timestamptz, now()))")) {
                for (int i = 0; i < SAMPLES.length; i++) {
                    UUID id = UUID.randomUUID();
                    ids.add(id);
                    ps.setObject(1, id);
                    ps.setString(2, tag + "-agg-\u00e9-" + i);
                    ps.setString(3, "Order" + tag + i);
                    ps.setString(4, i % 2 == 0 ? topic : null);
                    ps.setString(5, SAMPLES[i][0]);
                    ps.setString(6, SAMPLES[i][1]);
                    ps.setString(7, CREATED[i % CREATED.length]);
                    ps.addBatch();
                }
                ps.executeBatch();
            }
            insertBinary(c, "outbox_event", tag, topic, ids);
            Map<UUID, ProducerRecord<byte[], byte[]>> out = readBack(c, mapping, "outbox_event", ids);
            c.commit();
            return out;
        }
    }

    /** Emits one logical decoding message per sample, as the writer's emit-message mode does. */
    private static Map<UUID, ProducerRecord<byte[], byte[]>> emitMessages(TestDatabase db, KafkaRecords mapping, String topic,
                                                                          String builder) throws SQLException {
        List<UUID> ids = new ArrayList<>();
        try (Connection c = db.connect()) {
            c.setAutoCommit(false);
            try (Statement s = c.createStatement()) {
                s.execute("CREATE TEMP TABLE msg_src ON COMMIT DROP AS SELECT id, aggregate_type, aggregate_id, event_type, "
                        + "topic, payload, headers, created_at, payload_bytes, content_type FROM outbox_event WITH NO DATA");
            }
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO msg_src VALUES (?, 'order', ?, ?, ?, ?::jsonb, "
                    + "?::jsonb, coalesce(?::timestamptz, now()), NULL, NULL)")) {
                for (int i = 0; i < SAMPLES.length; i++) {
                    UUID id = UUID.randomUUID();
                    ids.add(id);
                    ps.setObject(1, id);
                    ps.setString(2, "msg-" + builder + "-" + i);
                    ps.setString(3, "Message" + i);
                    ps.setString(4, i % 2 == 0 ? topic : null);
                    ps.setString(5, SAMPLES[i][0]);
                    ps.setString(6, SAMPLES[i][1]);
                    ps.setString(7, CREATED[(i + 2) % CREATED.length]);
                    ps.addBatch();
                }
                ps.executeBatch();
            }
            String createdAtUtc = "to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')";
            boolean writer = builder.equals("writer");
            // "writer": the writer's own format (LogicalMessages 1): payload and headers as strings of their JSON text
            String json = writer
                    ? "jsonb_build_object('v', 1, 'id', id, 'aggregate_type', aggregate_type, 'aggregate_id', aggregate_id, "
                            + "'event_type', event_type, 'topic', topic, 'payload', payload::text, 'headers', headers::text, "
                            + "'created_at', " + createdAtUtc + ")"
                    : builder + "('id', id, 'aggregate_type', aggregate_type, 'aggregate_id', aggregate_id, 'event_type', "
                            + "event_type, 'topic', topic, 'payload', payload, 'headers', headers, 'created_at', created_at)";
            try (Statement s = c.createStatement()) {
                s.execute("SELECT pg_logical_emit_message(true, 'outboxkit', " + json + "::text) FROM msg_src"
                        + " WHERE payload_bytes IS NULL ORDER BY id");
            }
            // Binary events: format version 2, the bytes in Base64 as PostgreSQL's encode() writes it (line breaks
            // every 76 characters; the writer itself sends them without).
            List<UUID> binaryIds = new ArrayList<>();
            insertBinary(c, "msg_src", "msg-" + builder, topic, binaryIds);
            ids.addAll(binaryIds);
            try (Statement s = c.createStatement()) {
                s.execute("SELECT pg_logical_emit_message(true, 'outboxkit', " + (writer ? "jsonb_build_object" : builder)
                        + "('v', 2, 'id', id, 'aggregate_type', aggregate_type, 'aggregate_id', aggregate_id, 'event_type', "
                        + "event_type, 'topic', topic, 'payload_base64', encode(payload_bytes, 'base64'), 'content_type', "
                        + "content_type, 'headers', headers::text, 'created_at', " + createdAtUtc + ")::text) FROM msg_src"
                        + " WHERE payload_bytes IS NOT NULL ORDER BY id");
            }
            Map<UUID, ProducerRecord<byte[], byte[]>> out = readBack(c, mapping, "msg_src", ids);
            c.commit();
            return out;
        }
    }

    /** One binary row per {@link #BINARY} sample into {@code table}; their ids are added to {@code ids}. */
    private static void insertBinary(Connection c, String table, String tag, String topic, List<UUID> ids) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + table + " (id, aggregate_type, aggregate_id, "
                + "event_type, topic, payload_bytes, content_type, headers, created_at) VALUES (?, 'order', ?, ?, ?, ?, ?, "
                + "?::jsonb, coalesce(?::timestamptz, now()))")) {
            for (int i = 0; i < BINARY.length; i++) {
                UUID id = UUID.randomUUID();
                ids.add(id);
                ps.setObject(1, id);
                ps.setString(2, tag + "-bin-" + i);
                ps.setString(3, "Binary" + i);
                ps.setString(4, i % 2 == 0 ? topic : null);
                ps.setBytes(5, (byte[]) BINARY[i][0]);
                ps.setString(6, (String) BINARY[i][1]);
                ps.setString(7, SAMPLES[i][1]);
                ps.setString(8, CREATED[i % CREATED.length]);
                ps.addBatch();
            }
            ps.executeBatch();
        }
    }

    private static Map<UUID, ProducerRecord<byte[], byte[]>> readBack(Connection c, KafkaRecords mapping, String table,
                                                                      List<UUID> ids) throws SQLException {
        Map<UUID, ProducerRecord<byte[], byte[]>> out = new HashMap<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT id, aggregate_type, aggregate_id, event_type, topic, "
                + "payload::text, headers::text, created_at, payload_bytes, content_type FROM " + table + " WHERE id = ANY (?)")) {
            ps.setArray(1, c.createArrayOf("uuid", ids.toArray()));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    UUID id = rs.getObject(1, UUID.class);
                    OutboxEvent event = OutboxEvent.fromRow(id, rs.getString(2), rs.getString(3), rs.getString(4),
                            rs.getString(5), rs.getString(6), rs.getBytes(9), rs.getString(10), rs.getString(7),
                            rs.getObject(8, OffsetDateTime.class).toInstant());
                    assertThat(event.isBinary()).isEqualTo(rs.getBytes(9) != null);
                    out.put(id, mapping.toRecord(event));
                }
            }
        }
        assertThat(out).hasSize(ids.size());
        return out;
    }

    private static void assertSameRecords(List<ConsumerRecord<byte[], byte[]>> records,
                                          Map<UUID, ProducerRecord<byte[], byte[]>> expected) {
        assertThat(records).hasSize(expected.size());
        for (ConsumerRecord<byte[], byte[]> actual : records) {
            String idHeader = actual.headers().lastHeader("id") != null ? "id" : "ce_id";
            UUID id = UUID.fromString(CdcTestSupport.header(actual, idHeader));
            ProducerRecord<byte[], byte[]> want = expected.get(id);
            assertThat(want).as("record %s was expected", id).isNotNull();
            assertThat(actual.topic()).as("topic of %s", id).isEqualTo(want.topic());
            assertThat(actual.key()).as("key of %s", id).isEqualTo(want.key());
            assertThat(new String(actual.value(), StandardCharsets.UTF_8)).as("value of %s", id)
                    .isEqualTo(new String(want.value(), StandardCharsets.UTF_8));
            assertThat(actual.value()).as("value bytes of %s", id).isEqualTo(want.value());
            assertThat(headers(actual.headers())).as("headers of %s", id).isEqualTo(headers(want.headers()));
        }
    }

    private static List<String> headers(Iterable<Header> headers) {
        List<String> out = new ArrayList<>();
        for (Header h : headers) {
            out.add(h.key() + "=" + new String(h.value(), StandardCharsets.UTF_8));
        }
        return out;
    }
}
