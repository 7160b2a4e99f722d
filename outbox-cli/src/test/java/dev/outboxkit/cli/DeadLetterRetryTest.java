package dev.outboxkit.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.outboxkit.core.EventIds;
import dev.outboxkit.core.HeaderNames;
import dev.outboxkit.core.Secret;
import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.relay.poller.ParkPolicy;
import dev.outboxkit.relay.poller.PollingRelay;
import dev.outboxkit.testkit.History;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@code outbox dead-letters retry} puts a parked event back at its original {@code seq}, so under
 * {@link ParkPolicy#HOLD_AGGREGATE} it is published before the events of its aggregate that waited behind it.
 * The retry runs as a role with exactly the grants of outbox-cli/README.md ("Dead letters").
 */
@ExtendWith(OutboxTestkitExtension.class)
class DeadLetterRetryTest {

    private static final String ROLE_PASSWORD = "dead-letters-pw";

    @Test
    void aRetriedEventIsPublishedBeforeTheEventsHeldBehindIt(TestDatabase db, TestKafka kafka) throws Exception {
        String topic = TestKafka.uniqueTopic("dlq-retry");
        // Kafka refuses records over 1 KiB on this topic: the cause the operator fixes later.
        kafka.createTopic(topic, 1, (short) -1, Map.of("max.message.bytes", "1024"));
        History history = new History();
        String big = "{\"blob\": \"" + randomText(20_000) + "\"}";

        try (PollingRelay relay = PollingRelay.builder()
                .jdbcUrl(db.jdbcUrl()).user(db.user()).password(Secret.of(db.password()))
                .bootstrapServers(kafka.bootstrapServers())
                .route(TopicRoute.of(topic))
                .parkPolicy(ParkPolicy.HOLD_AGGREGATE)
                .leaseDuration(Duration.ofSeconds(30))
                .build()) {
            relay.start();

            UUID a1 = insert(db, "A", big);
            history.committed(a1, "A", 1);
            await().atMost(Duration.ofSeconds(90)).until(() -> db.count("SELECT count(*) FROM outbox_dead_letter WHERE id = '"
                    + a1 + "' AND error_class LIKE '%RecordTooLargeException'") == 1);
            long parkedSeq = db.count("SELECT seq FROM outbox_dead_letter WHERE id = '" + a1 + "'");

            UUID a2 = insert(db, "A", "{\"n\": 2}");
            history.committed(a2, "A", 2);
            UUID a3 = insert(db, "A", "{\"n\": 3}");
            history.committed(a3, "A", 3);
            UUID b1 = insert(db, "B", "{\"n\": 1}");
            history.committed(b1, "B", 1);
            // The relay moves on (B1 is published) while A2 and A3 wait behind the parked A1.
            await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofSeconds(1)).until(() -> idsOf(kafka.readAll(List.of(topic))).contains(b1));
            assertThat(db.count("SELECT count(*) FROM outbox_event WHERE id IN ('" + a2 + "', '" + a3 + "')")).isEqualTo(2);
            assertThat(db.count("SELECT max(seq) FROM outbox_event")).isGreaterThan(parkedSeq);

            kafka.alterTopicConfig(topic, Map.of("max.message.bytes", "1048576"));
            String role = leastPrivilegedRole(db);
            CliRun retry = CliRun.run(Map.of("OUTBOX_JDBC_URL", db.jdbcUrl(), "OUTBOX_USER", role, "OUTBOX_PASSWORD", ROLE_PASSWORD),
                    "dead-letters", "retry", "--id", a1.toString());
            assertThat(retry.exitCode()).as(retry.all()).isZero();
            assertThat(retry.out()).contains("retry " + a1 + " (account/A) seq " + parkedSeq).contains("retry: 1 row");

            await().atMost(Duration.ofSeconds(90)).until(() -> db.count("SELECT count(*) FROM outbox_event") == 0);
            assertThat(db.count("SELECT count(*) FROM outbox_dead_letter")).isZero();

            List<ConsumerRecord<byte[], byte[]>> records = kafka.readAll(List.of(topic));
            List<UUID> aggregateA = new ArrayList<>();
            for (ConsumerRecord<byte[], byte[]> r : records) {
                UUID id = idOf(r);
                String aggregate = new String(r.key(), StandardCharsets.UTF_8);
                history.delivered(id);
                history.applied(id, aggregate);
                if (aggregate.equals("A") && !aggregateA.contains(id)) {
                    aggregateA.add(id);
                }
            }
            assertThat(aggregateA).as("aggregate A as a consumer sees it").containsExactly(a1, a2, a3);
            History.Report report = history.check();
            assertThat(report.ok()).as(report.summary()).isTrue();
            assertThat(report.orderViolations()).isZero();
        }
    }

    @Test
    void retryKeepsTheSeqRenumbersParkedMessagesAndMovesNothingWhenTheSeqIsTaken(TestDatabase db) throws Exception {
        UUID kept = UUID.fromString("018f3a5e-7b2c-7d11-8a00-000000000101");
        UUID message = UUID.fromString("018f3a5e-7b2c-7d11-8a00-000000000102");
        UUID clash = UUID.fromString("018f3a5e-7b2c-7d11-8a00-000000000103");
        UUID copy = UUID.fromString("018f3a5e-7b2c-7d11-8a00-000000000104");
        UUID binary = UUID.fromString("018f3a5e-7b2c-7d11-8a00-000000000105");
        long before;
        try (Connection c = db.connect(); Statement s = c.createStatement()) {
            for (int i = 0; i < 3; i++) {
                insert(db, "X", "{}");
            }
            s.execute("DELETE FROM outbox_event");
            before = db.count("SELECT last_value FROM " + identitySequence(c));
            // seq 2: a row the poller parked; seq 0: a logical decoding message the CDC relay parked (no row).
            s.execute("INSERT INTO outbox_dead_letter (id, seq, aggregate_type, aggregate_id, event_type, payload, headers, "
                    + "created_at, error_class, error_message, attempts, parked_by) VALUES "
                    + "('" + kept + "', 2, 'account', 'k', 'Opened', '{}', '{}', now(), 'E', 'm', 1, 'relay-1'), "
                    + "('" + message + "', 0, 'account', 'm', 'Opened', '{}', '{}', now(), 'E', 'm', 1, 'relay-1')");
            // a binary event (schema version 10): it goes back with its bytes and content type
            s.execute("INSERT INTO outbox_dead_letter (id, seq, aggregate_type, aggregate_id, event_type, payload_bytes, "
                    + "content_type, headers, created_at, error_class, error_message, attempts, parked_by) VALUES "
                    + "('" + binary + "', 0, 'account', 'b', 'Opened', '\\x00ff0a'::bytea, 'application/x-protobuf', '{}', "
                    + "now(), 'E', 'm', 1, 'relay-1')");
        }
        String role = leastPrivilegedRole(db);
        Map<String, String> env = Map.of("OUTBOX_JDBC_URL", db.jdbcUrl(), "OUTBOX_USER", role, "OUTBOX_PASSWORD", ROLE_PASSWORD);

        CliRun list = CliRun.run(env, "dead-letters", "list");
        assertThat(list.exitCode()).as(list.all()).isZero();
        assertThat(list.out()).contains(binary + " account/b Opened seq=0 attempts=1").contains("payload=3 bytes");

        CliRun retry = CliRun.run(env, "dead-letters", "retry", "--all");
        assertThat(retry.exitCode()).as(retry.all()).isZero();
        assertThat(retry.out()).contains("retry " + kept + " (account/k) seq 2").contains("retry: 3 rows");
        assertThat(db.count("SELECT count(*) FROM outbox_event WHERE id = '" + binary + "' AND payload IS NULL"
                + " AND payload_bytes = '\\x00ff0a'::bytea AND content_type = 'application/x-protobuf'")).isEqualTo(1);
        assertThat(db.count("SELECT seq FROM outbox_event WHERE id = '" + kept + "'")).isEqualTo(2);
        assertThat(db.count("SELECT seq FROM outbox_event WHERE id = '" + message + "'")).isGreaterThan(before);

        // A parked event whose seq is taken in outbox_event (only possible by hand): refused, nothing moved.
        try (Connection c = db.connect(); Statement s = c.createStatement()) {
            s.execute("INSERT INTO outbox_event (seq, id, aggregate_type, aggregate_id, event_type, payload) OVERRIDING SYSTEM VALUE "
                    + "VALUES (3, '" + copy + "', 'account', 'c', 'Opened', '{}')");
            s.execute("INSERT INTO outbox_dead_letter (id, seq, aggregate_type, aggregate_id, event_type, payload, headers, "
                    + "created_at, error_class, error_message, attempts, parked_by) VALUES "
                    + "('" + clash + "', 3, 'account', 'c', 'Opened', '{}', '{}', now(), 'E', 'm', 1, 'relay-1')");
        }
        CliRun refused = CliRun.run(env, "dead-letters", "retry", "--id", clash.toString());
        assertThat(refused.exitCode()).as(refused.all()).isEqualTo(1);
        assertThat(refused.err()).contains("nothing was moved").contains("(seq)=(3)");
        assertThat(db.count("SELECT count(*) FROM outbox_dead_letter WHERE id = '" + clash + "'")).isEqualTo(1);
        assertThat(db.count("SELECT count(*) FROM outbox_event WHERE id = '" + clash + "'")).isZero();

        CliRun discard = CliRun.run(env, "dead-letters", "discard", "--id", clash.toString(), "--yes");
        assertThat(discard.exitCode()).as(discard.all()).isZero();
        assertThat(discard.out()).contains("discard " + clash + " (account/c) seq 3");
    }

    /** A login role with exactly the dead-letters grants of outbox-cli/README.md. */
    private static String leastPrivilegedRole(TestDatabase db) throws Exception {
        String role = "dead_letters_" + Long.toHexString(System.nanoTime());
        try (Connection c = db.connect(); Statement s = c.createStatement()) {
            s.execute("CREATE ROLE " + role + " LOGIN PASSWORD '" + ROLE_PASSWORD + "'");
            s.execute("GRANT USAGE ON SCHEMA public TO " + role);
            s.execute("GRANT SELECT, DELETE ON outbox_dead_letter TO " + role);
            s.execute("GRANT INSERT, SELECT (seq, id, aggregate_type, aggregate_id) ON outbox_event TO " + role);
            s.execute("GRANT INSERT ON outbox_ops_journal TO " + role); // the journal entry of each retry
        }
        return role;
    }

    private static String identitySequence(Connection c) throws Exception {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT pg_get_serial_sequence('outbox_event', 'seq')")) {
            rs.next();
            return rs.getString(1);
        }
    }

    private static UUID insert(TestDatabase db, String aggregate, String payload) throws Exception {
        UUID id = EventIds.next();
        try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement(
                "INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload) VALUES (?, 'account', ?, 'Changed', ?::jsonb)")) {
            ps.setObject(1, id);
            ps.setString(2, aggregate);
            ps.setString(3, payload);
            ps.executeUpdate();
        }
        return id;
    }

    private static UUID idOf(ConsumerRecord<byte[], byte[]> r) {
        return UUID.fromString(new String(r.headers().lastHeader(HeaderNames.ID).value(), StandardCharsets.UTF_8));
    }

    private static List<UUID> idsOf(List<ConsumerRecord<byte[], byte[]>> records) {
        return records.stream().map(DeadLetterRetryTest::idOf).toList();
    }

    /** Text that compresses poorly, so the record stays over the topic's limit after lz4. */
    private static String randomText(int length) {
        Random random = new Random(42);
        StringBuilder sb = new StringBuilder(length);
        String alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
        for (int i = 0; i < length; i++) {
            sb.append(alphabet.charAt(random.nextInt(alphabet.length())));
        }
        return sb.toString();
    }
}
