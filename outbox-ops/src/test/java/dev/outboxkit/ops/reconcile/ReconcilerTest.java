package dev.outboxkit.ops.reconcile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxkit.consumer.ExternalEffects;
import dev.outboxkit.ops.Anomalies;
import dev.outboxkit.ops.admin.JournalEntry;
import dev.outboxkit.ops.admin.OutboxAdmin;
import dev.outboxkit.ops.internal.Journal;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.Sql;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestPostgres;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Each test injects one anomaly into an otherwise clean producer/consumer pair (two databases) and expects exactly it. */
@ExtendWith(OutboxTestkitExtension.class)
class ReconcilerTest {

    private static final String GROUP = "billing";

    private TestDatabase producerDb;
    private TestDatabase consumerDb;
    private DataSource producer;
    private DataSource consumer;
    private List<UUID> ids;
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    @BeforeEach
    void cleanPair(TestDatabase db, TestPostgres postgres) throws Exception {
        producerDb = db;
        consumerDb = postgres.newDatabase();
        producer = db.dataSource();
        consumer = consumerDb.dataSource();
        new IntentLedger(producer, "public").enable();
        Instant hourAgo = Instant.now().minus(1, ChronoUnit.HOURS);
        ids = Anomalies.publish(producer, 50, hourAgo);
        Anomalies.apply(consumer, GROUP, ids, hourAgo.plusSeconds(1));
    }

    @AfterEach
    void dropConsumer(TestPostgres postgres) {
        postgres.drop(consumerDb);
    }

    /**
     * Through PgBouncer in transaction pooling mode, one server session for the pool: the cursor on the producer and the
     * temporary table on the consumer each live in one transaction, so two runs in a row both find the anomaly (a
     * temporary table left on the shared session would make the second fail with "already exists").
     */
    @Test
    void runsThroughTransactionPooling(TestPostgres postgres) throws Exception {
        UUID victim = ids.get(11);
        Sql.exec(consumer, "DELETE FROM processed_event WHERE event_id = '" + victim + "'");
        String role = "reconcile_bouncer_" + producerDb.name();
        postgres.createPasswordRole(role, "pw", "SUPERUSER");
        try (dev.outboxkit.testkit.PgBouncer bouncer = dev.outboxkit.testkit.PgBouncer.builder(postgres)
                     .poolMode(dev.outboxkit.testkit.PgBouncer.PoolMode.TRANSACTION).poolSize(1).build();
             com.zaxxer.hikari.HikariDataSource pooledProducer = pooled(bouncer.jdbcUrl(producerDb), role);
             com.zaxxer.hikari.HikariDataSource pooledConsumer = pooled(bouncer.jdbcUrl(consumerDb), role)) {
            producer = pooledProducer;
            consumer = pooledConsumer;
            assertOnly(reconcile(), Finding.Kind.LOST, victim.toString());
            assertOnly(reconcile(), Finding.Kind.LOST, victim.toString());
        } finally {
            producerDb.exec("DROP ROLE \"" + role + "\"");
        }
    }

    private static com.zaxxer.hikari.HikariDataSource pooled(String url, String role) {
        com.zaxxer.hikari.HikariConfig config = new com.zaxxer.hikari.HikariConfig();
        config.setJdbcUrl(url + "?prepareThreshold=0");
        config.setUsername(role);
        config.setPassword("pw");
        config.setMaximumPoolSize(2);
        config.setMinimumIdle(0);
        config.setConnectionTimeout(30_000);
        return new com.zaxxer.hikari.HikariDataSource(config);
    }

    private Report reconcile() throws Exception {
        return Reconciler.builder()
                .outboxDatabase(producer, "public")
                .consumer(new ConsumerSource("svc", consumer, "public", List.of(GROUP)))
                .grace(Duration.ofMinutes(5))
                .dedupeWindow(Duration.ofDays(7))
                .batchSize(7) // several batches even for 50 intents
                .meterRegistry(registry)
                .actor("reconciler-test")
                .build()
                .run();
    }

    private static void assertOnly(Report r, Finding.Kind kind, String subject) {
        assertThat(r.findings()).singleElement().satisfies(f -> {
            assertThat(f.kind()).isEqualTo(kind);
            assertThat(f.subject()).isEqualTo(subject);
        });
        assertThat(r.counts()).containsEntry(kind, 1L);
        assertThat(r.total()).isEqualTo(1);
        assertThat(r.clean()).isFalse();
    }

    @Test
    void cleanRunReportsNothing() throws Exception {
        Report r = reconcile();
        assertThat(r.intents()).isEqualTo(50);
        assertThat(r.findings()).isEmpty();
        assertThat(r.clean()).isTrue();
        assertThat(registry.get("outbox.reconcile.findings").tag("kind", "lost").counter().count()).isZero();
        JournalEntry entry = lastRun();
        assertThat(entry.outcome()).isEqualTo(JournalEntry.Outcome.SUCCESS);
        assertThat(entry.summary()).isEqualTo("reconciled 50 intent(s) against 1 consumer source(s): clean");
        assertThat(entry.actor()).isEqualTo("reconciler-test");
        assertThat(entry.detail().get("counts")).isEqualTo(java.util.Map.of("lost", 0, "phantom", 0, "duplicate_effect", 0,
                "late_arrival", 0, "unknown_outcome", 0));
        assertThat(entry.detail().get("findings")).isEqualTo(List.of());
        assertThat(entry.finishedAt()).isAfterOrEqualTo(entry.startedAt());
    }

    /** The run's entry in the operations journal, read as the console reads it. */
    private JournalEntry lastRun() throws Exception {
        List<JournalEntry> entries = OutboxAdmin.builder().outboxDatabase(producer, "public").build()
                .journal(10, JournalEntry.Kind.RECONCILE);
        assertThat(entries).as("one entry per run").hasSize(1);
        return entries.get(0);
    }

    @Test
    void deletedEffectIsLost() throws Exception {
        UUID victim = ids.get(17);
        Sql.exec(consumer, "DELETE FROM processed_event WHERE event_id = '" + victim + "'");
        Report r = reconcile();
        assertOnly(r, Finding.Kind.LOST, victim.toString());
        assertThat(r.findings().get(0).where()).isEqualTo("svc/" + GROUP);
        assertThat(registry.get("outbox.reconcile.findings").tag("kind", "lost").counter().count()).isEqualTo(1.0);
    }

    @Test
    void intentYoungerThanGraceIsNotLostYet() throws Exception {
        Anomalies.publish(producer, 3, Instant.now().minusSeconds(10));
        assertThat(reconcile().findings()).isEmpty();
    }

    @Test
    void unpublishedIntentIsReportedAsStuck() throws Exception {
        UUID id = UUID.randomUUID();
        Sql.exec(producer, "INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload, created_at)"
                + " VALUES ('" + id + "', 'order', 'o-x', 'OrderPlaced', '{}', now() - interval '2 hours')");
        Report r = reconcile();
        assertOnly(r, Finding.Kind.LOST, id.toString());
        assertThat(r.findings().get(0).detail()).contains("stuck: still unpublished");
    }

    @Test
    void effectWithoutIntentIsPhantom() throws Exception {
        UUID phantom = UUID.randomUUID();
        Anomalies.apply(consumer, GROUP, List.of(phantom), Instant.now().minusSeconds(60));
        assertOnly(reconcile(), Finding.Kind.PHANTOM, phantom.toString());
        JournalEntry entry = lastRun();
        assertThat(entry.summary()).endsWith(": 1 phantom");
        assertThat((java.util.Map<String, Object>) entry.detail().get("counts")).containsEntry("phantom", 1);
        assertThat((List<?>) entry.detail().get("findings")).singleElement().satisfies(f -> assertThat((java.util.Map<String, Object>) f)
                .containsEntry("kind", "phantom").containsEntry("where", "svc/" + GROUP)
                .containsEntry("subject", phantom.toString()).containsEntry("eventId", phantom.toString())
                .hasEntrySatisfying("detail", d -> assertThat((String) d).contains("no intent with this id")));
    }

    @Test
    void aRunWithoutAJournalStillReturnsItsReportAndWarnsOnce() throws Exception {
        Sql.exec(producer, "DROP TABLE outbox_ops_journal");
        ch.qos.logback.classic.Logger logger = (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(Journal.class);
        ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> lines = new ch.qos.logback.core.read.ListAppender<>();
        lines.start();
        logger.addAppender(lines);
        try {
            UUID victim = ids.get(5);
            Sql.exec(consumer, "DELETE FROM processed_event WHERE event_id = '" + victim + "'");
            Reconciler reconciler = Reconciler.builder().outboxDatabase(producer, "public")
                    .consumer(new ConsumerSource("svc", consumer, "public", List.of(GROUP))).grace(Duration.ofMinutes(5)).build();
            assertOnly(reconciler.run(), Finding.Kind.LOST, victim.toString());
            assertOnly(reconciler.run(), Finding.Kind.LOST, victim.toString());
        } finally {
            logger.detachAppender(lines);
        }
        assertThat(lines.list).as("one WARN naming the fix").singleElement().satisfies(e -> {
            assertThat(e.getLevel()).isEqualTo(ch.qos.logback.classic.Level.WARN);
            assertThat(e.getFormattedMessage()).contains("outbox_ops_journal").contains("outbox migrate");
        });
    }

    @Test
    void externalEffectPerformedTwiceIsADuplicate() throws Exception {
        ExternalEffects effects = ExternalEffects.create(consumer, "public");
        UUID id = ids.get(3);
        ExternalEffects.Claim first = effects.claim("send-invoice", id, Duration.ofMinutes(5));
        effects.markUnknown(first, "timeout");
        ExternalEffects.Claim second = effects.reclaim("send-invoice", id, Duration.ofMinutes(5));
        effects.complete(second, "invoice-42");
        // a clean external effect next to it
        ExternalEffects.Claim other = effects.claim("send-invoice", ids.get(4), Duration.ofMinutes(5));
        effects.complete(other, "invoice-43");
        Report r = reconcile();
        assertOnly(r, Finding.Kind.DUPLICATE_EFFECT, "send-invoice/" + id);
        assertThat(r.findings().get(0).where()).isEqualTo("svc");
    }

    @Test
    void externalEffectWithUnknownOutcomeIsReported() throws Exception {
        ExternalEffects effects = ExternalEffects.create(consumer, "public");
        UUID id = ids.get(5);
        effects.markUnknown(effects.claim("charge-card", id, Duration.ofMinutes(5)), "socket timeout");
        assertOnly(reconcile(), Finding.Kind.UNKNOWN_OUTCOME, "charge-card/" + id);
    }

    @Test
    void replayAfterTheWindowIsALateArrival() throws Exception {
        // the event was created ten days ago and its dedupe record purged since; a partner replays it now
        List<UUID> old = Anomalies.publish(producer, 1, Instant.now().minus(10, ChronoUnit.DAYS));
        Anomalies.apply(consumer, GROUP, old, Instant.now().minusSeconds(30));
        assertOnly(reconcile(), Finding.Kind.LATE_ARRIVAL, old.get(0).toString());
    }

    @Test
    void effectLaterThanTheWindowWithinTheLookbackIsALateArrival() throws Exception {
        List<UUID> slow = Anomalies.publish(producer, 1, Instant.now().minus(3, ChronoUnit.HOURS));
        Anomalies.apply(consumer, GROUP, slow, Instant.now().minusSeconds(30));
        Report r = Reconciler.builder().outboxDatabase(producer, "public")
                .consumer(new ConsumerSource("svc", consumer, "public", List.of(GROUP)))
                .dedupeWindow(Duration.ofHours(2)).build().run();
        assertOnly(r, Finding.Kind.LATE_ARRIVAL, slow.get(0).toString());
    }

    @Test
    void idempotencyKeyInProgressPastItsLeaseIsAnUnknownOutcome() throws Exception {
        Sql.exec(producer, "INSERT INTO idempotency_key (scope, idem_key, request_hash, state, locked_until)"
                + " VALUES ('payments', 'k-1', '\\x00', 'in_progress', now() - interval '1 minute'),"
                + "        ('payments', 'k-2', '\\x00', 'in_progress', now() + interval '1 hour')");
        Report r = reconcile();
        assertOnly(r, Finding.Kind.UNKNOWN_OUTCOME, "payments/k-1");
        assertThat(r.findings().get(0).where()).isEqualTo("producer");
    }

    @Test
    void groupsOnlyExpectTheirAggregateTypes() throws Exception {
        Sql.exec(producer, "INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload, created_at)"
                + " VALUES (gen_random_uuid(), 'customer', 'c-1', 'CustomerCreated', '{}', now() - interval '1 hour')");
        Sql.exec(producer, "DELETE FROM outbox_event");
        Report all = reconcile();
        assertThat(all.counts()).containsEntry(Finding.Kind.LOST, 1L);
        Report orders = Reconciler.builder().outboxDatabase(producer, "public")
                .consumer(new ConsumerSource("svc", consumer, "public", List.of(GROUP), java.util.Set.of("order")))
                .build().run();
        assertThat(orders.findings()).isEmpty();
    }

    @Test
    void refusesToRunWithoutTheLedger() throws Exception {
        new IntentLedger(producer, "public").disable();
        assertThatThrownBy(this::reconcile).isInstanceOf(IllegalStateException.class).hasMessageContaining("outbox intents enable");
        JournalEntry entry = lastRun();
        assertThat(entry.outcome()).isEqualTo(JournalEntry.Outcome.FAILURE);
        assertThat(entry.summary()).startsWith("reconciliation failed: IllegalStateException: the intent ledger is disabled");
        assertThat(entry.detail()).containsEntry("error", "java.lang.IllegalStateException");
    }

    @Test
    void builderNamesTheSetting() {
        assertThatThrownBy(() -> Reconciler.builder().outboxDatabase(producer, "public")
                .consumer(new ConsumerSource("svc", consumer, "public", List.of(GROUP))).batchSize(0).build())
                .hasMessageContaining("batchSize");
        assertThatThrownBy(() -> Reconciler.builder().outboxDatabase(producer, "public")
                .consumer(new ConsumerSource("svc", consumer, "public", List.of(GROUP)))
                .grace(Duration.ofDays(2)).build())
                .hasMessageContaining("grace");
        assertThatThrownBy(() -> new ConsumerSource("svc", consumer, "public; drop", List.of(GROUP)))
                .hasMessageContaining("schema");
    }
}
