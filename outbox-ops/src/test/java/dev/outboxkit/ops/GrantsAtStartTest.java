package dev.outboxkit.ops;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxkit.core.MissingGrantsException;
import dev.outboxkit.ops.admin.DeadLetterFilter;
import dev.outboxkit.ops.admin.OutboxAdmin;
import dev.outboxkit.ops.admin.ReplaySelection;
import dev.outboxkit.ops.reconcile.ConsumerSource;
import dev.outboxkit.ops.reconcile.IntentLedger;
import dev.outboxkit.ops.reconcile.Reconciler;
import dev.outboxkit.ops.retention.Retention;
import dev.outboxkit.testkit.DocumentedGrants;
import dev.outboxkit.testkit.GrantsAtStart;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import javax.sql.DataSource;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Grants checked before each operation (issue 26, item 5): {@code outbox status | dead-letters | replay | reconcile |
 * purge}, i.e. {@link OutboxAdmin}, {@link Reconciler} and {@link Retention}. With each grant the READMEs document
 * revoked in turn, the operation refuses before doing anything, naming exactly that grant; with all of them it runs.
 */
@ExtendWith(OutboxTestkitExtension.class)
class GrantsAtStartTest {

    private TestDatabase db;

    @BeforeEach
    void withoutPublicDefaults(TestDatabase db) throws Exception {
        this.db = db;
        // PUBLIC holds these by default: then they are never missing.
        db.exec("REVOKE USAGE ON SCHEMA public FROM PUBLIC", "REVOKE TEMPORARY ON DATABASE \"" + db.name() + "\" FROM PUBLIC");
    }

    private String prefix(String what) {
        return what + "_" + db.name();
    }

    private static OutboxAdmin admin(DataSource role) {
        return OutboxAdmin.builder().outboxDatabase(role, "public").build();
    }

    @Test
    void statusDeadLettersAndReplay() throws Exception {
        GrantsAtStart.eachMissingGrantIsNamed(db, prefix("st"), DocumentedGrants.status(), "outbox status",
                role -> admin(role).status());
        GrantsAtStart.eachMissingGrantIsNamed(db, prefix("dl"), DocumentedGrants.deadLettersList(), "outbox dead-letters list",
                role -> admin(role).deadLetters(DeadLetterFilter.all(), 10, null));
        GrantsAtStart.eachMissingGrantIsNamed(db, prefix("dd"), DocumentedGrants.deadLettersDiscard(), "outbox dead-letters discard",
                role -> admin(role).discardDeadLetters(DeadLetterFilter.all(), "test", "grants-test"));
        assertThat(GrantsAtStart.eachMissingGrantIsNamed(db, prefix("dr"), DocumentedGrants.deadLettersRetry(),
                "outbox dead-letters retry", role -> admin(role).retryDeadLetters(DeadLetterFilter.all(), "grants-test")))
                .as("schema USAGE, SELECT and DELETE on the dead letters, INSERT on the journal, INSERT and four columns on"
                        + " outbox_event").hasSize(6);
        // With every grant the retry wrote its journal entry in its transaction: the identity column of
        // outbox_ops_journal needs no grant on its sequence.
        assertThat(db.count("SELECT count(*) FROM outbox_ops_journal WHERE kind = 'dead-letter-retry' AND outcome = 'success'"))
                .isEqualTo(1);
        GrantsAtStart.eachMissingGrantIsNamed(db, prefix("rp"), DocumentedGrants.replay(), "outbox replay",
                role -> admin(role).replay(ReplaySelection.ids(List.of(UUID.randomUUID())), false, "grants-test"));
    }

    @Test
    void theJournalIsReadWithItsOwnGrant() throws Exception {
        GrantsAtStart.eachMissingGrantIsNamed(db, prefix("jr"), DocumentedGrants.journal(), "OutboxAdmin.journal",
                role -> admin(role).journal(5));
    }

    @Test
    void theConsoleQuestions() throws Exception {
        assertThat(GrantsAtStart.eachMissingGrantIsNamed(db, prefix("tr"), DocumentedGrants.traceEvent(),
                "OutboxAdmin.traceEvent", role -> admin(role).traceEvent(UUID.randomUUID())))
                .as("schema USAGE, SELECT on seven tables").hasSize(8);
        GrantsAtStart.eachMissingGrantIsNamed(db, prefix("dr"), DocumentedGrants.deadLettersList(), "outbox dead-letters list",
                role -> admin(role).deadLetterReasons(10));
        GrantsAtStart.eachMissingGrantIsNamed(db, prefix("ik"), DocumentedGrants.idempotencyKeyState(),
                "OutboxAdmin.idempotencyKey", role -> admin(role).idempotencyKey("scope", "key"));
        GrantsAtStart.eachMissingGrantIsNamed(db, prefix("rm"), DocumentedGrants.relayMembers(),
                "OutboxAdmin.relayMembers", role -> admin(role).relayMembers());
        GrantsAtStart.eachMissingGrantIsNamed(db, prefix("rr"), DocumentedGrants.relayReports(),
                "OutboxAdmin.relayReports", role -> admin(role).relayReports());
        GrantsAtStart.eachMissingGrantIsNamed(db, prefix("ep"), DocumentedGrants.eventPayload(),
                "OutboxAdmin.eventPayload", role -> admin(role).eventPayload(UUID.randomUUID(), 100, "grants-test"));
    }

    @Test
    void reconcileOnBothSides() throws Exception {
        new IntentLedger(db.dataSource(), "public").enable();
        GrantsAtStart.eachMissingGrantIsNamed(db, prefix("rcp"), DocumentedGrants.reconcileOutboxDatabase(),
                "outbox reconcile (outbox database, schema public)", role -> reconcile(role, db.dataSource()));
        assertThat(db.count("SELECT count(*) FROM outbox_ops_journal WHERE kind = 'reconcile' AND outcome = 'success'"))
                .as("the run with every grant wrote its entry").isEqualTo(1);
        GrantsAtStart.eachMissingGrantIsNamed(db, prefix("rcc"), DocumentedGrants.reconcileConsumer(db.name()),
                "outbox reconcile (consumer svc, schema public)", role -> reconcile(db.dataSource(), role));
    }

    private static void reconcile(DataSource producer, DataSource consumer) throws Exception {
        Reconciler.builder().outboxDatabase(producer, "public")
                .consumer(new ConsumerSource("svc", consumer, "public", List.of("billing"))).build().run();
    }

    @Test
    void purgeOnTheProducerAndTheConsumerDatabase() throws Exception {
        // The ledger and its partitions belong to a role of their own, as they would to the schema's owner.
        String owner = prefix("intent_owner");
        db.exec("CREATE ROLE " + owner + " NOLOGIN", "DO $$ DECLARE t text; BEGIN FOR t IN SELECT relname FROM pg_class"
                + " WHERE relname LIKE 'outbox_intent%' AND relkind IN ('r', 'p') LOOP"
                + " EXECUTE format('ALTER TABLE %I OWNER TO " + owner + "', t); END LOOP; END $$");
        try {
            GrantsAtStart.eachMissingGrantIsNamed(db, prefix("pu"), DocumentedGrants.purge(owner), "outbox purge (schema public)",
                    role -> Retention.builder().outboxDatabase(role, "public").deadLetterRetention(Duration.ofDays(30)).build().purge(false));
            assertThat(db.count("SELECT count(*) FROM outbox_ops_journal WHERE kind = 'retention' AND outcome = 'success'"))
                    .as("the round with every grant wrote its entry and purged the journal").isEqualTo(1);
        } finally {
            db.exec("REASSIGN OWNED BY " + owner + " TO CURRENT_USER", "DROP ROLE " + owner);
        }
        // processed_event: the check comes before Kafka is asked for the group's offsets, so no broker is needed; with
        // every grant the purge goes on to ask an address where nothing listens, and that failure is not a grants one.
        try (Admin kafka = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:9",
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 1000, AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 1000))) {
            GrantsAtStart.eachMissingGrantIsNamed(db, prefix("pi"), DocumentedGrants.purgeInbox(),
                    "outbox purge (processed_event of group billing, schema public)", role -> {
                        Retention retention = Retention.builder().outboxDatabase(db.dataSource(), "public")
                                .inbox(role, "public", "billing", Duration.ofDays(7)).kafkaAdmin(kafka).build();
                        try {
                            retention.purge(false);
                        } catch (MissingGrantsException e) {
                            throw e;
                        } catch (IllegalStateException e) {
                            assertThat(e).hasMessageContaining("consumer group billing");
                        }
                    });
        }
    }
}
