package dev.outboxkit.ops.retention;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxkit.consumer.InboxRetention;
import dev.outboxkit.ops.Anomalies;
import dev.outboxkit.ops.admin.JournalEntry;
import dev.outboxkit.ops.admin.OutboxAdmin;
import dev.outboxkit.ops.reconcile.IntentLedger;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.Sql;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import dev.outboxkit.writer.IdempotencyKeys;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(OutboxTestkitExtension.class)
class RetentionTest {

    private static LocalDate today() {
        return LocalDate.now(ZoneOffset.UTC);
    }

    @Test
    void expiredDayPartitionsAreDroppedWholeAndRecentOnesKept(TestDatabase db) throws Exception {
        DataSource ds = db.dataSource();
        IntentLedger ledger = new IntentLedger(ds, "public");
        ledger.enable();
        assertThat(ledger.createPartitions(today().minusDays(20), 5)).isEqualTo(5);
        assertThat(ledger.createPartitions(today().minusDays(20), 5)).isZero(); // idempotent
        Anomalies.publish(ds, 30, today().minusDays(19).atStartOfDay(ZoneOffset.UTC).toInstant().plusSeconds(3600));
        Anomalies.publish(ds, 4, Instant.now().minus(40, ChronoUnit.DAYS)); // no partition: default
        Anomalies.publish(ds, 6, Instant.now().minusSeconds(60));
        assertThat(Sql.count(ds, "SELECT count(*) FROM outbox_intent_p" + today().minusDays(19).toString().replace("-", ""))).isEqualTo(30);

        Retention retention = Retention.builder().outboxDatabase(ds, "public").intentRetention(Duration.ofDays(8)).build();
        Retention.Result dry = retention.purge(true);
        assertThat(dry.intents().dropped()).hasSize(5);
        assertThat(dry.intents().defaultRowsDeleted()).isEqualTo(4);
        assertThat(Sql.count(ds, "SELECT count(*) FROM outbox_intent")).isEqualTo(40); // a dry run changes nothing

        Retention.Result done = retention.purge(false);
        assertThat(done.intents().dropped()).hasSize(5);
        assertThat(done.intents().defaultRowsDeleted()).isEqualTo(4);
        assertThat(ledger.partitions()).allMatch(d -> !d.isBefore(today().minusDays(1)));
        assertThat(ledger.partitions()).contains(today().plusDays(Retention.DEFAULT_PARTITIONS_AHEAD - 1));
        assertThat(Sql.count(ds, "SELECT count(*) FROM outbox_intent")).isEqualTo(6);
    }

    @Test
    void partitionsOutliveAnUnpublishedBacklog(TestDatabase db) throws Exception {
        DataSource ds = db.dataSource();
        IntentLedger ledger = new IntentLedger(ds, "public");
        ledger.enable();
        ledger.createPartitions(today().minusDays(20), 5);
        Sql.exec(ds, "INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload, created_at)"
                + " VALUES (gen_random_uuid(), 'order', 'o-1', 'OrderPlaced', '{}', '" + today().minusDays(18) + "T12:00:00Z')");
        IntentLedger.Purge purge = ledger.purge(Instant.now().minus(8, ChronoUnit.DAYS), false);
        assertThat(purge.dropped()).containsExactly(name(20), name(19));
        assertThat(purge.keptForBacklog()).containsExactly(name(18), name(17), name(16));
        assertThat(Sql.count(ds, "SELECT count(*) FROM outbox_intent")).isEqualTo(1);
    }

    private static String name(int daysAgo) {
        return "outbox_intent_p" + today().minusDays(daysAgo).toString().replace("-", "");
    }

    @Test
    void triggerCanBeSwitchedOff(TestDatabase db) throws Exception {
        DataSource ds = db.dataSource();
        IntentLedger ledger = new IntentLedger(ds, "public");
        assertThat(ledger.enabled()).isFalse(); // off until an operator opts in
        ledger.enable();
        assertThat(ledger.enabled()).isTrue();
        ledger.disable();
        assertThat(ledger.enabled()).isFalse();
        Anomalies.publish(ds, 3, Instant.now());
        assertThat(Sql.count(ds, "SELECT count(*) FROM outbox_intent")).isZero();
        ledger.enable();
        Anomalies.publish(ds, 2, Instant.now());
        assertThat(Sql.count(ds, "SELECT count(*) FROM outbox_intent")).isEqualTo(2);
        assertThat(Sql.count(ds, "SELECT count(*) FROM outbox_intent i JOIN outbox_intent_p"
                + today().toString().replace("-", "") + " p USING (event_id)"
                + " WHERE i.payload_hash = sha256(convert_to(jsonb_build_object('n', 1)::text, 'UTF8'))")).isEqualTo(1);
        // a binary event (schema version 10): the hash is of the bytes the relays publish
        try (java.sql.Connection c = ds.getConnection(); java.sql.Statement s = c.createStatement()) {
            s.execute("INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload_bytes, content_type)"
                    + " VALUES (gen_random_uuid(), 'order', 'o-1', 'Placed', '\\x0a0208ff'::bytea, 'application/x-protobuf')");
        }
        assertThat(Sql.count(ds, "SELECT count(*) FROM outbox_intent WHERE payload_hash = sha256('\\x0a0208ff'::bytea)"))
                .isEqualTo(1);
    }

    @Test
    void processedEventsStillReachableByRedeliveryAreNotPurged(TestDatabase db, TestKafka kafka) throws Exception {
        DataSource ds = db.dataSource();
        String topic = TestKafka.uniqueTopic("retention");
        kafka.createTopic(topic, 1);
        try (Admin admin = kafka.admin()) {
            admin.alterConsumerGroupOffsets("billing", Map.of(new TopicPartition(topic, 0), new OffsetAndMetadata(5)))
                    .all().get();
            // ten ids applied long ago from offsets 0..9; the group committed only up to 5
            Sql.exec(ds, "INSERT INTO processed_event (consumer_group, event_id, processed_at, topic, kafka_partition, kafka_offset)"
                    + " SELECT 'billing', gen_random_uuid(), now() - interval '10 days', '" + topic + "', 0, o FROM generate_series(0, 9) o");
            Sql.exec(ds, "INSERT INTO processed_event (consumer_group, event_id, processed_at)"
                    + " VALUES ('billing', gen_random_uuid(), now() - interval '10 days')"); // no coordinates
            Sql.exec(ds, "INSERT INTO processed_event (consumer_group, event_id, processed_at, topic, kafka_partition, kafka_offset)"
                    + " VALUES ('billing', gen_random_uuid(), now(), '" + topic + "', 0, 1)"); // inside the window
            Retention retention = Retention.builder().outboxDatabase(ds, "public")
                    .inbox(ds, "public", "billing", Duration.ofDays(7)).kafkaAdmin(admin).build();

            InboxRetention.Result dry = retention.purge(true).processedEvents().get("billing");
            assertThat(dry).isEqualTo(new InboxRetention.Result(5, 5, 1));
            assertThat(Sql.count(ds, "SELECT count(*) FROM processed_event")).isEqualTo(12);

            InboxRetention.Result done = retention.purge(false).processedEvents().get("billing");
            assertThat(done).isEqualTo(new InboxRetention.Result(5, 5, 1));
            assertThat(Sql.count(ds, "SELECT count(*) FROM processed_event WHERE kafka_offset < 5 AND processed_at < now() - interval '1 day'"))
                    .isZero();
            assertThat(Sql.count(ds, "SELECT count(*) FROM processed_event")).isEqualTo(7);
        }
    }

    @Test
    void deadLettersAreKeptUnlessAWindowIsSetAndKeysAreDelegated(TestDatabase db) throws Exception {
        DataSource ds = db.dataSource();
        Sql.exec(ds, "INSERT INTO outbox_dead_letter (id, seq, aggregate_type, aggregate_id, event_type, payload, headers,"
                + " created_at, error_class, error_message, attempts, parked_at, parked_by)"
                + " SELECT gen_random_uuid(), g, 'order', 'o', 'T', '{}', '{}', now(), 'E', 'm', 1, now() - g * interval '1 day', 'r'"
                + " FROM generate_series(1, 10) g");
        Sql.exec(ds, "INSERT INTO idempotency_key (scope, idem_key, request_hash, state, response_status, created_at, completed_at)"
                + " VALUES ('p', 'old', '\\x00', 'completed', 200, now() - interval '3 days', now() - interval '3 days'),"
                + "        ('p', 'new', '\\x00', 'completed', 200, now(), now())");
        assertThat(Retention.builder().outboxDatabase(ds, "public").build().purge(false).deadLetters()).isZero();
        assertThat(Sql.count(ds, "SELECT count(*) FROM outbox_dead_letter")).isEqualTo(10);

        // An entry older than the journal's retention (90 days) and one younger.
        Sql.exec(ds, "INSERT INTO outbox_ops_journal (kind, started_at, finished_at, actor, outcome, summary) VALUES"
                + " ('reconcile', now() - interval '100 days', now() - interval '100 days', 'old', 'success', 'clean'),"
                + " ('reconcile', now() - interval '80 days', now() - interval '80 days', 'young', 'success', 'clean')");
        Retention.Result dry = Retention.builder().outboxDatabase(ds, "public").deadLetterRetention(Duration.ofDays(7).plusHours(12))
                .build().purge(true);
        assertThat(dry.deadLetters()).isEqualTo(3);
        assertThat(Sql.count(ds, "SELECT count(*) FROM outbox_ops_journal WHERE kind = 'retention'")).as("a round before and"
                + " no entry for a dry run").isEqualTo(1);
        Retention.Result r = Retention.builder().outboxDatabase(ds, "public").deadLetterRetention(Duration.ofDays(7).plusHours(12))
                .idempotencyKeys(IdempotencyKeys.builder().retention(Duration.ofDays(1)).build()).actor("retention-test").build()
                .purge(false);
        assertThat(r.deadLetters()).isEqualTo(3);
        assertThat(r.idempotencyKeys()).isEqualTo(1);
        assertThat(Sql.count(ds, "SELECT count(*) FROM outbox_dead_letter")).isEqualTo(7);
        assertThat(Sql.count(ds, "SELECT count(*) FROM idempotency_key_tombstone WHERE idem_key = 'old'")).isEqualTo(1);

        List<JournalEntry> rounds = OutboxAdmin.builder().outboxDatabase(ds, "public").build().journal(10, JournalEntry.Kind.RETENTION);
        assertThat(rounds).hasSize(2);
        JournalEntry last = rounds.get(0);
        assertThat(last.actor()).isEqualTo("retention-test");
        assertThat(last.outcome()).isEqualTo(JournalEntry.Outcome.SUCCESS);
        assertThat((Map<String, Object>) last.detail().get("purged")).containsEntry("dead_letters", 3).containsEntry("idempotency_keys", 1)
                .containsEntry("journal_entries", 1);
        assertThat(last.summary()).contains("dead_letters 3").contains("idempotency_keys 1");
        assertThat(last.nextRoundDue()).as("outbox purge: no schedule, no next round").isEmpty();
        assertThat((Map<String, Object>) rounds.get(1).detail().get("purged")).as("the first round, before the old entry was there,"
                + " with dead letters kept for ever").containsEntry("journal_entries", 0).doesNotContainKey("dead_letters");
        assertThat(Sql.count(ds, "SELECT count(*) FROM outbox_ops_journal WHERE actor IN ('old', 'young')")).isEqualTo(1);
    }

    @Test
    void aRoundWithoutAJournalPurgesAllTheSame(TestDatabase db) throws Exception {
        DataSource ds = db.dataSource();
        Sql.exec(ds, "DROP TABLE outbox_ops_journal");
        Sql.exec(ds, "INSERT INTO outbox_dead_letter (id, seq, aggregate_type, aggregate_id, event_type, payload, headers,"
                + " created_at, error_class, error_message, attempts, parked_at, parked_by)"
                + " VALUES (gen_random_uuid(), 1, 'order', 'o', 'T', '{}', '{}', now(), 'E', 'm', 1, now() - interval '9 days', 'r')");
        assertThat(Retention.builder().outboxDatabase(ds, "public").deadLetterRetention(Duration.ofDays(7)).build().purge(false)
                .deadLetters()).isEqualTo(1);
    }

    @Test
    void builderRefusesUnsafeSettings(TestDatabase db) {
        assertThatThrownBy(() -> Retention.builder().outboxDatabase(db.dataSource(), "public")
                .inbox(db.dataSource(), "public", "g", Duration.ofDays(1)).build())
                .hasMessageContaining("kafkaAdmin");
        assertThatThrownBy(() -> Retention.builder().outboxDatabase(db.dataSource(), "public").intentRetention(Duration.ofHours(3)).build())
                .hasMessageContaining("intentRetention");
    }
}
