package dev.outboxkit.ops.reconcile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.outboxkit.core.Secret;
import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.relay.poller.AfterPublish;
import dev.outboxkit.relay.poller.PollingRelay;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.Sql;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Schema version 7: outbox_intent.published_at follows what the relays do, without relay code. */
@ExtendWith(OutboxTestkitExtension.class)
class IntentPublishedTest {

    @ParameterizedTest
    @EnumSource(AfterPublish.class)
    void thePollerSetsPublishedAtAndParkedEventsStayUnpublished(AfterPublish mode, TestDatabase db, TestKafka kafka)
            throws Exception {
        DataSource ds = db.dataSource();
        new IntentLedger(ds, "public").enable();
        if (mode == AfterPublish.MARK) { // the relay's MARK mode needs the index a fresh schema leaves out (V9)
            Sql.exec(ds, "CREATE INDEX outbox_event_unpublished ON outbox_event (seq) WHERE published_at IS NULL");
        }
        String prefix = TestKafka.uniqueTopic("published");
        kafka.createTopic(prefix + ".order", 2);
        Sql.exec(ds, "INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload)"
                + " SELECT gen_random_uuid(), 'order', 'o-' || (g % 7), 'OrderPlaced', jsonb_build_object('n', g)"
                + " FROM generate_series(1, 200) g");
        // "<prefix>.bad type" is not a legal topic: Kafka refuses it for good and the relay parks it.
        Sql.exec(ds, "INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload)"
                + " VALUES (gen_random_uuid(), 'bad type', 'x-1', 'Created', '{}')");
        assertThat(Sql.count(ds, "SELECT count(*) FROM outbox_intent WHERE published_at IS NULL")).isEqualTo(201);

        try (PollingRelay relay = PollingRelay.builder()
                .jdbcUrl(db.jdbcUrl()).user(db.user()).password(Secret.of(db.password()))
                .bootstrapServers(kafka.bootstrapServers())
                .route(TopicRoute.of(prefix + ".${aggregateType}"))
                .afterPublish(mode)
                .build()) {
            relay.start();
            await().atMost(Duration.ofSeconds(120)).until(() -> Sql.count(ds, "SELECT count(*) FROM outbox_dead_letter") == 1
                    && Sql.count(ds, "SELECT count(*) FROM outbox_event WHERE published_at IS NULL") == 0);
        }
        assertThat(kafka.readAll(java.util.List.of(prefix + ".order"))).hasSizeGreaterThanOrEqualTo(200);
        assertThat(Sql.count(ds, "SELECT count(*) FROM outbox_intent WHERE aggregate_type = 'order'"
                + " AND published_at BETWEEN created_at AND now()")).isEqualTo(200);
        assertThat(Sql.count(ds, "SELECT count(*) FROM outbox_intent i JOIN outbox_dead_letter d ON d.id = i.event_id"
                + " WHERE i.published_at IS NULL")).as("the parked event was claimed, never published").isEqualTo(1);
        if (mode == AfterPublish.MARK) {
            assertThat(Sql.count(ds, "SELECT count(*) FROM outbox_intent i JOIN outbox_event e ON e.id = i.event_id"
                    + " AND e.created_at = i.created_at WHERE i.published_at = e.published_at")).isEqualTo(200);
            // outbox replay clears published_at: the ledger follows until the next publication
            Sql.exec(ds, "UPDATE outbox_event SET published_at = NULL, attempts = 0 WHERE aggregate_id = 'o-3'");
            assertThat(Sql.count(ds, "SELECT count(*) FROM outbox_intent WHERE published_at IS NULL AND aggregate_id = 'o-3'"))
                    .isEqualTo(Sql.count(ds, "SELECT count(*) FROM outbox_event WHERE aggregate_id = 'o-3'")).isPositive();
        }
    }

    @Test
    void rowsWrittenAndDeletedInOneTransactionPutBackOrRetriedAreNotPublished(TestDatabase db) throws Exception {
        DataSource ds = db.dataSource();
        IntentLedger ledger = new IntentLedger(ds, "public");
        ledger.enable();
        assertThat(ledger.triggers()).containsOnlyKeys("outbox_intent_record", "outbox_intent_forgotten",
                "outbox_intent_marked", "outbox_intent_parked").doesNotContainValue(false);
        String insert = "INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload, created_at)"
                + " VALUES ('%s', 'order', 'o-1', 'OrderPlaced', '{}', '2026-01-01T00:00:00Z')";
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            // INSERT_AND_DELETE writer: the delete in the producer's own transaction is not a publication
            c.setAutoCommit(false);
            s.execute(insert.formatted("018f3a5e-7b2c-7d11-8a00-000000000001"));
            s.execute("DELETE FROM outbox_event WHERE id = '018f3a5e-7b2c-7d11-8a00-000000000001'");
            c.commit();

            // the poller in DELETE mode, Kafka refusing: the claim deletes, the put-back inserts the same row again
            s.execute(insert.formatted("018f3a5e-7b2c-7d11-8a00-000000000002"));
            c.commit();
            s.execute("DELETE FROM outbox_event WHERE id = '018f3a5e-7b2c-7d11-8a00-000000000002'");
            s.execute(insert.formatted("018f3a5e-7b2c-7d11-8a00-000000000002"));
            c.commit();
            assertThat(Sql.count(ds, "SELECT count(*) FROM outbox_intent WHERE published_at IS NULL")).isEqualTo(2);

            // parked (CDC order: dead letter first, then the delete), then retried, then published
            s.execute("INSERT INTO outbox_dead_letter (id, seq, aggregate_type, aggregate_id, event_type, payload, headers,"
                    + " created_at, error_class, error_message, attempts, parked_by) SELECT id, seq, aggregate_type, aggregate_id,"
                    + " event_type, payload, headers, created_at, 'E', 'm', 1, 'r' FROM outbox_event");
            s.execute("DELETE FROM outbox_event");
            c.commit();
            assertThat(Sql.count(ds, "SELECT count(*) FROM outbox_intent WHERE published_at IS NULL")).isEqualTo(2);
            s.execute("WITH moved AS (DELETE FROM outbox_dead_letter RETURNING *) INSERT INTO outbox_event"
                    + " (id, aggregate_type, aggregate_id, event_type, payload, headers, topic, created_at)"
                    + " SELECT id, aggregate_type, aggregate_id, event_type, payload, headers, topic, created_at FROM moved");
            c.commit();
            s.execute("DELETE FROM outbox_event");
            c.commit();
        }
        assertThat(Sql.count(ds, "SELECT count(*) FROM outbox_intent")).isEqualTo(2);
        assertThat(Sql.count(ds, "SELECT count(*) FROM outbox_intent WHERE published_at IS NOT NULL"
                + " AND event_id = '018f3a5e-7b2c-7d11-8a00-000000000002'")).isEqualTo(1);
        assertThat(Sql.count(ds, "SELECT count(*) FROM outbox_intent WHERE published_at IS NULL"
                + " AND event_id = '018f3a5e-7b2c-7d11-8a00-000000000001'")).isEqualTo(1);

        // room on each page for the published_at update (HOT): every day partition, old and new
        ledger.createPartitions(java.time.LocalDate.now(java.time.ZoneOffset.UTC).plusDays(20), 1);
        assertThat(Sql.count(ds, "SELECT count(*) FROM pg_class c JOIN pg_inherits h ON h.inhrelid = c.oid"
                + " WHERE h.inhparent = 'outbox_intent'::regclass AND NOT c.reloptions @> '{fillfactor=50}'")).isZero();

        ledger.disable();
        assertThat(ledger.triggers()).doesNotContainValue(true);
        Sql.exec(ds, insert.formatted("018f3a5e-7b2c-7d11-8a00-000000000003"));
        Sql.exec(ds, "DELETE FROM outbox_event");
        assertThat(Sql.count(ds, "SELECT count(*) FROM outbox_intent")).isEqualTo(2);
    }

    @Test
    void reconcileTellsPublishedButNeverAppliedFromNeverPublished(TestDatabase db) throws Exception {
        DataSource ds = db.dataSource();
        new IntentLedger(ds, "public").enable();
        Sql.exec(ds, "INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload, created_at) VALUES"
                + " ('018f3a5e-7b2c-7d11-8a00-00000000000a', 'order', 'o-1', 'OrderPlaced', '{}', now() - interval '1 hour'),"
                + " ('018f3a5e-7b2c-7d11-8a00-00000000000b', 'order', 'o-2', 'OrderPlaced', '{}', now() - interval '1 hour')");
        Sql.exec(ds, "DELETE FROM outbox_event WHERE id = '018f3a5e-7b2c-7d11-8a00-00000000000a'"); // a relay forgot it
        Sql.exec(ds, "ALTER TABLE outbox_event DISABLE TRIGGER outbox_intent_forgotten");
        Sql.exec(ds, "DELETE FROM outbox_event"); // gone without a recorded publication
        Report r = Reconciler.builder().outboxDatabase(ds, "public")
                .consumer(new ConsumerSource("svc", ds, "public", java.util.List.of("billing")))
                .grace(Duration.ofMinutes(1)).build().run();
        Map<String, String> details = new java.util.HashMap<>();
        r.findings().forEach(f -> details.put(f.subject(), f.detail()));
        assertThat(details.get("018f3a5e-7b2c-7d11-8a00-00000000000a")).contains("published 20").contains("never applied");
        assertThat(details.get("018f3a5e-7b2c-7d11-8a00-00000000000b")).contains("no publication recorded");
    }
}
