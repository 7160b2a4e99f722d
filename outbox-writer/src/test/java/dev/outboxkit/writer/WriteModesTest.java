package dev.outboxkit.writer;

import static dev.outboxkit.writer.TestSupport.events;
import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxkit.core.LogicalMessages;
import dev.outboxkit.core.OutboxEvent;
import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.relay.KafkaRecords;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * What each mode leaves in the table and in the WAL, read back through a logical decoding slot
 * (test_decoding), and that every event is a WAL record of its own (a distinct LSN).
 */
@ExtendWith(OutboxTestkitExtension.class)
class WriteModesTest {

    /** One decoded change: its LSN and test_decoding's text. */
    record Change(String lsn, String data) {
    }

    @Test
    void keepLeavesTheRowsForARelay(TestDatabase db) throws Exception {
        List<Change> changes = decode(db, () -> write(db, WriteMode.KEEP, 5, true));
        assertThat(db.count("SELECT count(*) FROM outbox_event")).isEqualTo(5);
        List<Change> inserts = changes.stream().filter(c -> c.data().contains("outbox_event: INSERT")).toList();
        assertThat(inserts).hasSize(5);
        assertThat(distinctLsns(inserts)).as("one LSN per event").isEqualTo(5);
    }

    @Test
    void insertAndDeleteLeavesAnEmptyTableAndTheInsertsInTheWal(TestDatabase db) throws Exception {
        List<UUID> ids = new ArrayList<>();
        List<Change> changes = decode(db, () -> {
            ids.addAll(write(db, WriteMode.INSERT_AND_DELETE, 5, true));
            write(db, WriteMode.INSERT_AND_DELETE, 3, false); // rolled back: never in the WAL stream
        });
        assertThat(db.count("SELECT count(*) FROM outbox_event")).isZero();
        List<Change> inserts = changes.stream().filter(c -> c.data().contains("outbox_event: INSERT")).toList();
        assertThat(inserts).hasSize(5);
        for (int i = 0; i < ids.size(); i++) {
            assertThat(inserts.get(i).data()).contains("id[uuid]:'" + ids.get(i) + "'");
        }
        assertThat(distinctLsns(inserts)).as("one LSN per event").isEqualTo(5);
        assertThat(changes.stream().filter(c -> c.data().contains("outbox_event: DELETE"))).hasSize(5);
    }

    @Test
    void logicalMessagesCarryTheSameRecordThePollerWouldPublish(TestDatabase db) throws Exception {
        UUID id = UUID.randomUUID();
        String payload = "{ \"b\": [1, 2.50, {\"z\": null}], \"a\": \"é\\u00e9\\n\", \"n\": 1e3 }";
        OutboxMessage message = OutboxMessage.builder("account", "acc-7", "MoneyMoved").id(id).payloadJson(payload)
                .header("tenant", "acme").traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01").build();
        List<Change> changes = decode(db, () -> {
            try (Connection c = db.connect()) {
                c.setAutoCommit(false);
                OutboxWriter.builder().mode(WriteMode.LOGICAL_MESSAGE).build().write(c, message);
                c.commit();
                OutboxWriter.builder().mode(WriteMode.KEEP).build().write(c, message);
                c.commit();
                OutboxWriter.builder().mode(WriteMode.LOGICAL_MESSAGE).build().write(c, events("x", 2));
                c.rollback();
            }
        });
        List<Change> messages = changes.stream().filter(c -> c.data().startsWith("message:")).toList();
        assertThat(messages).as("the rolled-back messages are not decoded").hasSize(1);
        assertThat(messages.get(0).data()).contains("transactional: 1 prefix: " + LogicalMessages.PREFIX + ",");
        OutboxEvent fromMessage = LogicalMessages.decode(messages.get(0).data().substring(
                messages.get(0).data().indexOf("content:") + "content:".length()));

        OutboxEvent fromRow = onlyRow(db);
        assertThat(fromMessage.payload()).isEqualTo(fromRow.payload());
        assertThat(fromMessage.createdAt()).isBefore(Instant.now().plusSeconds(1));
        KafkaRecords records = new KafkaRecords(TopicRoute.defaultRoute());
        ProducerRecord<byte[], byte[]> a = records.toRecord(fromMessage);
        ProducerRecord<byte[], byte[]> b = records.toRecord(fromRow);
        assertThat(a.topic()).isEqualTo(b.topic()).isEqualTo("outbox.event.account");
        assertThat(a.key()).isEqualTo(b.key());
        assertThat(a.value()).isEqualTo(b.value());
        assertThat(headersWithoutCreatedAt(a)).isEqualTo(headersWithoutCreatedAt(b))
                .contains("id=" + id, "tenant=acme", "traceparent=00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
    }

    @Test
    void aBinaryEventIsTheSameRecordAsAMessageAndAsARow(TestDatabase db) throws Exception {
        byte[] bytes = new byte[300];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = (byte) (i * 7);
        }
        OutboxMessage message = OutboxMessage.builder("order", "o-1", "OrderPlaced").payloadBytes(bytes,
                "application/x-protobuf; messageType=shop.OrderPlaced").header("tenant", "acme").build();
        List<Change> changes = decode(db, () -> {
            try (Connection c = db.connect()) {
                c.setAutoCommit(false);
                OutboxWriter.builder().mode(WriteMode.LOGICAL_MESSAGE).build().write(c, message);
                OutboxWriter.builder().mode(WriteMode.KEEP).build().write(c, message);
                c.commit();
            }
        });
        Change msg = changes.stream().filter(c -> c.data().startsWith("message:")).findFirst().orElseThrow();
        OutboxEvent fromMessage = LogicalMessages.decode(msg.data().substring(msg.data().indexOf("content:") + "content:".length()));
        OutboxEvent fromRow = onlyRow(db);
        KafkaRecords records = new KafkaRecords(TopicRoute.defaultRoute());
        ProducerRecord<byte[], byte[]> a = records.toRecord(fromMessage);
        ProducerRecord<byte[], byte[]> b = records.toRecord(fromRow);
        assertThat(a.value()).isEqualTo(b.value()).isEqualTo(bytes);
        assertThat(a.key()).isEqualTo(b.key());
        assertThat(headersWithoutCreatedAt(a)).isEqualTo(headersWithoutCreatedAt(b))
                .contains("content-type=application/x-protobuf; messageType=shop.OrderPlaced", "tenant=acme");
    }

    /** The one row in outbox_event, read as the polling relay reads it (JSON or binary). */
    private static OutboxEvent onlyRow(TestDatabase db) throws Exception {
        try (Connection c = db.connect(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(
                "SELECT id, aggregate_type, aggregate_id, event_type, topic, payload::text, payload_bytes, content_type,"
                        + " headers::text, created_at FROM outbox_event")) {
            assertThat(rs.next()).as("a row in outbox_event").isTrue();
            OutboxEvent row = OutboxEvent.fromRow(rs.getObject(1, UUID.class), rs.getString(2), rs.getString(3),
                    rs.getString(4), rs.getString(5), rs.getString(6), rs.getBytes(7), rs.getString(8), rs.getString(9),
                    rs.getObject(10, OffsetDateTime.class).toInstant());
            assertThat(rs.next()).as("only one row in outbox_event").isFalse();
            return row;
        }
    }

    @Test
    void logicalMessagesOfOneTransactionHaveOneLsnEach(TestDatabase db) throws Exception {
        List<Change> changes = decode(db, () -> write(db, WriteMode.LOGICAL_MESSAGE, 5, true));
        List<Change> messages = changes.stream().filter(c -> c.data().startsWith("message:")).toList();
        assertThat(messages).hasSize(5);
        assertThat(distinctLsns(messages)).isEqualTo(5);
        assertThat(db.count("SELECT count(*) FROM outbox_event")).isZero();
    }

    private static List<String> headersWithoutCreatedAt(ProducerRecord<byte[], byte[]> r) {
        List<String> out = new ArrayList<>();
        for (Header h : r.headers()) {
            if (!h.key().equals("createdAt")) {
                out.add(h.key() + "=" + new String(h.value(), java.nio.charset.StandardCharsets.UTF_8));
            }
        }
        return out;
    }

    private static List<UUID> write(TestDatabase db, WriteMode mode, int n, boolean commit) throws SQLException {
        try (Connection c = db.connect()) {
            c.setAutoCommit(false);
            try (OutboxTransaction tx = OutboxWriter.builder().mode(mode).build().begin(c)) {
                List<UUID> ids = new ArrayList<>();
                for (OutboxMessage m : events("agg", n)) {
                    ids.add(tx.add(m));
                }
                if (commit) {
                    tx.commit();
                } else {
                    tx.rollback();
                }
                return ids;
            }
        }
    }

    private static long distinctLsns(List<Change> changes) {
        Set<String> lsns = new HashSet<>();
        changes.forEach(c -> lsns.add(c.lsn()));
        return lsns.size();
    }

    interface Work {
        void run() throws Exception;
    }

    /** Runs {@code work} with a test_decoding slot open and returns every change it decoded. */
    private static List<Change> decode(TestDatabase db, Work work) throws Exception {
        String slot = db.name() + "_slot";
        try (Connection c = db.connect(); Statement s = c.createStatement()) {
            s.execute("SELECT pg_create_logical_replication_slot('" + slot + "', 'test_decoding')");
            try {
                work.run();
                // The test server commits asynchronously and a slot decodes only flushed WAL: commit
                // one transaction that writes WAL synchronously, which flushes everything before it.
                s.execute("SET synchronous_commit = on");
                s.execute("CREATE TEMP TABLE wal_flush (x int)");
                List<Change> changes = new ArrayList<>();
                try (ResultSet rs = s.executeQuery("SELECT lsn::text, data FROM pg_logical_slot_get_changes('" + slot
                        + "', NULL, NULL)")) {
                    while (rs.next()) {
                        changes.add(new Change(rs.getString(1), rs.getString(2)));
                    }
                }
                return changes;
            } finally {
                s.execute("SELECT pg_drop_replication_slot('" + slot + "')");
            }
        }
    }
}
