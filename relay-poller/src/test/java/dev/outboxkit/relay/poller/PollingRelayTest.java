package dev.outboxkit.relay.poller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.outboxkit.core.HeaderNames;
import dev.outboxkit.core.OutboxEvent;
import dev.outboxkit.core.Secret;
import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.relay.KafkaRecords;
import dev.outboxkit.relay.poller.internal.PollerSql;
import dev.outboxkit.testkit.History;
import dev.outboxkit.testkit.OutboxRows;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.RelayLeases;
import dev.outboxkit.testkit.Sql;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(OutboxTestkitExtension.class)
class PollingRelayTest {

    static PollingRelay.Builder relay(TestDatabase db, TestKafka kafka, String topic) {
        return PollingRelay.builder()
                .jdbcUrl(db.jdbcUrl()).user(db.user()).password(Secret.of(db.password()))
                .bootstrapServers(kafka.bootstrapServers())
                .route(TopicRoute.of(topic))
                .leaseDuration(Duration.ofSeconds(6));
    }

    @Test
    void publishesEveryCommittedRowAsTheSharedRecordInOrderAndDeletesIt(TestDatabase db, TestKafka kafka) throws Exception {
        String topic = TestKafka.uniqueTopic("poll-basic");
        kafka.createTopic(topic, 4);
        History history = new History();
        Map<UUID, OutboxEvent> written = new HashMap<>();
        try (Connection c = db.connect()) {
            c.setAutoCommit(false);
            for (int i = 0; i < 3000; i++) {
                String aggregate = "order-" + (i % 50);
                UUID id = OutboxRows.insert(c, "order", aggregate, "created",
                        "{\"n\": " + i + ", \"text\": \"h\u00e9llo\"}", i % 7 == 0 ? "{\"traceparent\": \"00-abc-01\"}" : null, null);
                history.committed(id, aggregate, i);
                if (i % 100 == 99) {
                    c.commit();
                }
            }
            c.commit();
            try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(
                    "SELECT id, aggregate_type, aggregate_id, event_type, topic, payload, headers, created_at FROM outbox_event")) {
                while (rs.next()) {
                    UUID id = rs.getObject(1, UUID.class);
                    written.put(id, OutboxEvent.fromRow(id, rs.getString(2), rs.getString(3), rs.getString(4),
                            rs.getString(5), rs.getString(6), rs.getString(7),
                            rs.getObject(8, java.time.OffsetDateTime.class).toInstant()));
                }
            }
            c.commit();
        }
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (PollingRelay relay = relay(db, kafka, topic).meterRegistry(registry).batchSize(500).build()) {
            relay.start();
            Outbox.awaitEmpty(db, Duration.ofSeconds(90));
            assertThat(relay.health().live()).isTrue();
            await().atMost(Duration.ofSeconds(30)).until(() -> relay.health().ready());
            assertThat(registry.get("outbox.relay.published").tag("relay", "poll").counter().count()).isGreaterThanOrEqualTo(3000);
            assertThat(registry.get("outbox.relay.commit_to_ack").timer().count()).isGreaterThanOrEqualTo(3000);
            assertThat(registry.get("outbox.relay.leases.held").gauge().value()).isEqualTo(64);
        }
        List<ConsumerRecord<byte[], byte[]>> records = kafka.readAll(List.of(topic));
        Topic.check(kafka, List.of(topic), history, "basic");

        // Byte for byte the record outbox-core's mapping makes of the row.
        KafkaRecords mapping = new KafkaRecords(TopicRoute.of(topic));
        for (ConsumerRecord<byte[], byte[]> r : records) {
            UUID id = UUID.fromString(Topic.header(r, HeaderNames.ID));
            ProducerRecord<byte[], byte[]> expected = mapping.toRecord(written.get(id));
            assertThat(r.topic()).isEqualTo(expected.topic());
            assertThat(r.key()).isEqualTo(expected.key());
            assertThat(new String(r.value(), StandardCharsets.UTF_8)).isEqualTo(new String(expected.value(), StandardCharsets.UTF_8));
            List<String> got = new ArrayList<>();
            for (Header h : r.headers()) {
                got.add(h.key() + "=" + new String(h.value(), StandardCharsets.UTF_8));
            }
            List<String> want = new ArrayList<>();
            for (Header h : expected.headers()) {
                want.add(h.key() + "=" + new String(h.value(), StandardCharsets.UTF_8));
            }
            assertThat(got).isEqualTo(want);
        }
    }

    @Test
    void markModeKeepsTheRowsWithPublishedAt(TestDatabase db, TestKafka kafka) throws Exception {
        String topic = TestKafka.uniqueTopic("poll-mark");
        kafka.createTopic(topic, 2);
        History history = new History();
        Instant before = Instant.now().minusSeconds(5);
        try (Connection c = db.connect(); Statement s = c.createStatement()) {
            // The fresh schema has no rows kept as published, so V9 dropped the MARK-mode index: without it the
            // relay refuses to start and says how to create it.
            try (PollingRelay relay = relay(db, kafka, topic).afterPublish(AfterPublish.MARK).build()) {
                assertThatThrownBy(relay::start).isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("afterPublish MARK")
                        .hasMessageContaining("CREATE INDEX CONCURRENTLY outbox_event_unpublished ON \"public\".\"outbox_event\" "
                                + "(seq) WHERE published_at IS NULL");
            }
            s.execute("CREATE INDEX outbox_event_unpublished ON outbox_event (seq) WHERE published_at IS NULL");
            for (int i = 0; i < 200; i++) {
                history.committed(OutboxRows.insert(c, "cart", "cart-" + (i % 10), "{\"i\": " + i + "}"), "cart-" + (i % 10), i);
            }
        }
        try (PollingRelay relay = relay(db, kafka, topic).afterPublish(AfterPublish.MARK).build()) {
            relay.start();
            await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
                try (Connection c = db.connect()) {
                    assertThat(Sql.count(c, "SELECT count(*) FROM outbox_event WHERE published_at IS NULL")).isZero();
                }
            });
        }
        try (Connection c = db.connect()) {
            assertThat(Sql.count(c, "SELECT count(*) FROM outbox_event")).isEqualTo(200);
            assertThat(Sql.count(c, "SELECT count(*) FROM outbox_event WHERE published_at < '"
                    + before + "'::timestamptz")).isZero();
        }
        Topic.check(kafka, List.of(topic), history, "mark");
    }

    @Test
    void pipelinedClaimsOnTheSliceIndexesPublishEveryRowOnceAndInOrder(TestDatabase db, TestKafka kafka) throws Exception {
        String topic = TestKafka.uniqueTopic("poll-slices");
        kafka.createTopic(topic, 4);
        History history = new History();
        try (Connection c = db.connect(); Statement s = c.createStatement()) {
            for (String ddl : PollerSql.sliceIndexDdl("public")) {
                s.execute(ddl);
            }
        }
        try (Connection late = db.connect(); Connection c = db.connect()) {
            late.setAutoCommit(false);
            // takes its seq first and commits only after everything behind it was published
            UUID lateId = OutboxRows.insert(late, "order", "order-7", "{\"late\": true}");
            c.setAutoCommit(false);
            for (int i = 0; i < 4000; i++) {
                String aggregate = "order-" + (i % 40);
                history.committed(OutboxRows.insert(c, "order", aggregate, "{\"n\": " + i + "}"), aggregate, i);
                if (i % 100 == 99) {
                    c.commit();
                }
            }
            c.setAutoCommit(true);
            try (PollingRelay relay = relay(db, kafka, topic).batchSize(300).pipelineClaims(true).build()) {
                relay.start();
                await().atMost(Duration.ofSeconds(90)).until(() -> Sql.count(c, "SELECT count(*) FROM outbox_event") == 0);
                late.commit();
                history.committed(lateId, "order-7", 4000);
                await().atMost(Duration.ofSeconds(60)).until(() -> Sql.count(c, "SELECT count(*) FROM outbox_event") == 0);
            }
            // Both slices were claimed through their own index (nothing else can use them: only claims name a slice).
            for (int slice = 0; slice < PollerSql.SLICES; slice++) {
                String scans = "SELECT coalesce(sum(idx_scan), 0) FROM pg_stat_user_indexes WHERE indexrelname = '"
                        + PollerSql.SLICE_INDEX + "_" + slice + "'";
                await().atMost(Duration.ofSeconds(30)).until(() -> Sql.count(c, scans) > 0);
            }
        }
        // every row once, per-aggregate order kept (the late row first-published after its aggregate's later rows
        // is what the history allows: it committed after them)
        assertThat(Topic.check(kafka, List.of(topic), history, "slices").intents()).isEqualTo(4001);
    }

    @Test
    void aLateCommitWithALowerSeqIsPublishedAndARolledBackWriteNeverIs(TestDatabase db, TestKafka kafka) throws Exception {
        String topic = TestKafka.uniqueTopic("poll-late");
        kafka.createTopic(topic, 2);
        History history = new History();
        try (PollingRelay relay = relay(db, kafka, topic).build();
             Connection late = db.connect(); Connection doomed = db.connect(); Connection c = db.connect()) {
            relay.start();
            late.setAutoCommit(false);
            doomed.setAutoCommit(false);
            // Both take their seq now, before the rows below, and stay uncommitted while those are published.
            UUID lateId = OutboxRows.insert(late, "account", "late", "{\"late\": true}");
            UUID doomedId = OutboxRows.insert(doomed, "account", "doomed", "{\"doomed\": true}");
            for (int i = 0; i < 50; i++) {
                history.committed(OutboxRows.insert(c, "account", "acc-" + i, "{\"i\": " + i + "}"), "acc-" + i, 0);
            }
            await().atMost(Duration.ofSeconds(60)).until(() -> Sql.count(c, "SELECT count(*) FROM outbox_event") == 0);
            late.commit();
            history.committed(lateId, "late", 0);
            doomed.rollback();
            history.rolledBack(doomedId);
            // No watermark: the late row with its lower seq is found and published.
            await().atMost(Duration.ofSeconds(60)).until(() -> Sql.count(c, "SELECT count(*) FROM outbox_event") == 0);
        }
        assertThat(Topic.check(kafka, List.of(topic), history, "late-commit").intents()).isEqualTo(51);
    }

    @Test
    void instancesShareThePartitionsAndAClosingOneHandsItsShareOverAtOnce(TestDatabase db, TestKafka kafka) throws Exception {
        String topic = TestKafka.uniqueTopic("poll-share");
        SimpleMeterRegistry twoMetrics = new SimpleMeterRegistry();
        try (PollingRelay one = relay(db, kafka, topic).instanceId("one").leaseDuration(Duration.ofSeconds(60)).build();
             PollingRelay two = relay(db, kafka, topic).instanceId("two").leaseDuration(Duration.ofSeconds(60))
                     .meterRegistry(twoMetrics).build()) {
            one.start();
            await().atMost(Duration.ofSeconds(30)).until(() -> RelayLeases.partitionsByHolder(db).equals(Map.of("one", 64)));
            two.start();
            await().atMost(Duration.ofSeconds(30)).until(() ->
                    RelayLeases.partitionsByHolder(db).equals(Map.of("one", 32, "two", 32)));
            one.close();
            // The leases were given back, not left to expire (they would last 60 s).
            await().atMost(Duration.ofSeconds(15)).until(() -> RelayLeases.partitionsByHolder(db).equals(Map.of("two", 64)));
            assertThat(twoMetrics.get("outbox.relay.rebalances").counter().count()).isGreaterThanOrEqualTo(2);
            assertThat(twoMetrics.get("outbox.relay.leases.held").gauge().value()).isEqualTo(64);
            assertThat(two.health().ready()).as(two.health().detail()).isTrue();
            assertThat(two.health().detail()).contains("64/64 partitions");
        }
    }
}
