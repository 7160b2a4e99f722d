package dev.outboxkit.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxkit.testkit.DocumentedGrants;
import dev.outboxkit.testkit.Grant;
import dev.outboxkit.testkit.OutboxTestkit;
import dev.outboxkit.testkit.SecureGround;
import dev.outboxkit.testkit.SecureKafka;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.resource.ResourceType;
import org.junit.jupiter.api.Test;

/**
 * {@code outbox status | dead-letters | replay | reconcile | purge} over the ground managed services
 * give, PostgreSQL with {@code sslmode=verify-full} (SCRAM passwords only) and, for {@code purge --group}, Kafka over
 * SASL_SSL with a PEM truststore and ACLs enforced. Each command runs as a role holding exactly the grants its README
 * lists ({@link DocumentedGrants}; PUBLIC's defaults revoked so nothing else helps), and {@code purge --group} as a
 * principal holding exactly the ACLs docs/managed-services.md lists: DESCRIBE on the group and on its topics. The
 * ground is the module's shared one.
 */
class OpsSecureGroundTest {

    private static final String PW = "ops-role-pw";
    private static final String PENDING = "018f3a5e-7b2c-7d11-8a00-000000000001";
    private static final String ARCHIVED = "018f3a5e-7b2c-7d11-8a00-000000000002";
    private static final String RETRIED = "018f3a5e-7b2c-7d11-8a00-000000000003";
    private static final String DISCARDED = "018f3a5e-7b2c-7d11-8a00-000000000004";

    /** Shared with the module's other secure-ground class: its start costs more than the tests on it. */
    private final SecureGround ground = OutboxTestkit.secureGround();

    @Test
    void statusDeadLettersAndReplayWithExactlyTheirGrants() throws Exception {
        TestDatabase db = database();
        db.exec("INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload, created_at, published_at) VALUES "
                        + "('" + PENDING + "', 'order', 'o1', 'Placed', '{}', now(), NULL), "
                        + "('" + ARCHIVED + "', 'order', 'o2', 'Placed', '{}', now(), now())",
                "INSERT INTO outbox_dead_letter (id, seq, aggregate_type, aggregate_id, event_type, payload, headers, created_at,"
                        + " error_class, error_message, attempts, parked_by) VALUES "
                        + "('" + RETRIED + "', 900, 'order', 'o3', 'Placed', '{}', '{}', now(), 'X', 'fixed since', 5, 'relay-1'), "
                        + "('" + DISCARDED + "', 901, 'order', 'o4', 'Placed', '{}', '{}', now(), 'X', 'gone for good', 5, 'relay-1')");

        CliRun status = run(db, role(db, "ops_status", DocumentedGrants.status()), "status");
        assertThat(status.exitCode()).as(status.all()).isZero();
        assertThat(status.out()).contains("backlog").contains("dead letters");

        CliRun list = run(db, role(db, "ops_dl_list", DocumentedGrants.deadLettersList()), "dead-letters", "list");
        assertThat(list.exitCode()).as(list.all()).isZero();
        assertThat(list.out()).contains(RETRIED).contains(DISCARDED);

        CliRun retry = run(db, role(db, "ops_dl_retry", DocumentedGrants.deadLettersRetry()), "dead-letters", "retry", "--id", RETRIED);
        assertThat(retry.exitCode()).as(retry.all()).isZero();
        CliRun discard = run(db, role(db, "ops_dl_discard", DocumentedGrants.deadLettersDiscard()),
                "dead-letters", "discard", "--id", DISCARDED, "--yes");
        assertThat(discard.exitCode()).as(discard.all()).isZero();
        assertThat(db.count("SELECT count(*) FROM outbox_dead_letter")).isZero();
        assertThat(db.count("SELECT count(*) FROM outbox_event WHERE id = '" + RETRIED + "' AND seq = 900")).isOne();
        // each action's journal entry, written with the action's own grants, names the CLI and the OS user
        assertThat(db.count("SELECT count(*) FROM outbox_ops_journal WHERE kind IN ('dead-letter-retry', 'dead-letter-discard')"
                + " AND outcome = 'success' AND actor = 'outbox-cli " + System.getProperty("user.name") + "@' || split_part(actor, '@', 2)"))
                .isEqualTo(2);

        CliRun replay = run(db, role(db, "ops_replay", DocumentedGrants.replay()), "replay", "--id", ARCHIVED);
        assertThat(replay.exitCode()).as(replay.all()).isZero();
        assertThat(replay.out()).contains("replayed 1 event");
        assertThat(db.count("SELECT count(*) FROM outbox_event WHERE published_at IS NULL")).isEqualTo(3);
    }

    @Test
    void reconcileWithExactlyItsGrantsOnBothDatabases() throws Exception {
        TestDatabase producer = database();
        TestDatabase consumer = database();
        assertThat(CliRun.run(admin(producer), "intents", "enable").exitCode()).isZero();
        producer.exec("INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload, created_at)"
                + " SELECT gen_random_uuid(), 'order', 'o-' || g, 'Placed', '{}', now() - interval '1 hour' FROM generate_series(1, 5) g");
        List<String> ids = producer.strings("SELECT id::text FROM outbox_event");
        producer.exec("DELETE FROM outbox_event"); // published
        consumer.exec("INSERT INTO processed_event (consumer_group, event_id, processed_at) SELECT 'billing', id::uuid,"
                + " now() - interval '59 minutes' FROM unnest(ARRAY['" + String.join("','", ids) + "']) AS u(id)");
        String role = role(producer, "ops_reconcile", DocumentedGrants.reconcileOutboxDatabase());
        grant(consumer, role, DocumentedGrants.reconcileConsumer(consumer.name()));
        String[] reconcile = {"reconcile", "--consumer", "billing-svc=" + consumer.jdbcUrl(), "--group", "billing", "--grace", "PT1M"};

        CliRun clean = run(producer, role, reconcile);
        assertThat(clean.exitCode()).as(clean.all()).isZero();
        assertThat(clean.out()).contains("5 intents").contains("clean");
        consumer.exec("DELETE FROM processed_event WHERE event_id = '" + ids.get(0) + "'");
        CliRun lost = run(producer, role, reconcile);
        assertThat(lost.exitCode()).as(lost.all()).isEqualTo(3);
        assertThat(lost.out()).contains("LOST").contains("billing-svc/billing");
    }

    /**
     * {@code purge --group} reads the group's committed offsets ({@code Admin.listConsumerGroupOffsets}, an OffsetFetch
     * of every partition). The broker asks DESCRIBE on the GROUP, then leaves out, without an error, every partition of a
     * topic the principal may not DESCRIBE: with the group's ACL alone the purge deletes nothing and counts the ids
     * "not yet committed past". READ on the topic or group and DELETE on the group are not needed.
     */
    @Test
    void purgeWithGroupNeedsDescribeOnTheGroupAndOnItsTopics() throws Exception {
        TestDatabase producer = database();
        TestDatabase consumer = database();
        SecureKafka kafka = ground.kafka();
        String topic = TestKafka.uniqueTopic("ops-purge");
        kafka.createTopic(topic, 1);
        try (Admin admin = kafka.admin()) { // the consumer group has committed up to offset 5 (next to read)
            admin.alterConsumerGroupOffsets("billing", Map.of(new TopicPartition(topic, 0), new OffsetAndMetadata(5)))
                    .all().get(30, TimeUnit.SECONDS);
        }
        consumer.exec("INSERT INTO processed_event (consumer_group, event_id, processed_at, topic, kafka_partition, kafka_offset)"
                + " SELECT 'billing', gen_random_uuid(), now() - interval '10 days', '" + topic + "', 0, g FROM generate_series(0, 9) g");
        // The intent ledger belongs to a role of its own, as it would to the schema's owner.
        String owner = "ops_intent_owner";
        producer.exec("CREATE ROLE " + owner + " NOLOGIN", "DO $$ DECLARE t text; BEGIN FOR t IN SELECT relname FROM pg_class"
                + " WHERE relname LIKE 'outbox_intent%' AND relkind IN ('r', 'p') LOOP"
                + " EXECUTE format('ALTER TABLE %I OWNER TO " + owner + "', t); END LOOP; END $$");
        String role = role(producer, "ops_purge", DocumentedGrants.purge(owner));
        grant(consumer, role, DocumentedGrants.purgeInbox());
        Map<String, Object> security = kafka.createScramUser("outbox-purge", "purge-kafka-pw");
        List<String> purge = new ArrayList<>(List.of("purge", "--dead-letter-retention", "P30D", "--group", "billing",
                "--consumer-jdbc-url", consumer.jdbcUrl(), "--bootstrap-servers", kafka.bootstrapServers()));
        security.forEach((k, v) -> purge.addAll(List.of("--kafka", k + "=" + v)));
        String[] args = purge.toArray(String[]::new);

        CliRun noAcl = run(producer, role, args);
        assertThat(noAcl.exitCode()).as(noAcl.all()).isEqualTo(1);
        assertThat(noAcl.all()).contains("consumer group billing").contains("GroupAuthorizationException")
                .contains("nothing was purged").doesNotContain("purge-kafka-pw");

        kafka.grant("outbox-purge", AclOperation.DESCRIBE, ResourceType.GROUP, "billing");
        CliRun groupOnly = run(producer, role, args);
        assertThat(groupOnly.exitCode()).as(groupOnly.all()).isZero();
        assertThat(groupOnly.out()).as("offsets of a topic it may not DESCRIBE are not shown to it")
                .contains("processed_event billing: purged 0, kept 10 not yet committed past");

        kafka.grant("outbox-purge", AclOperation.DESCRIBE, ResourceType.TOPIC, topic);
        CliRun documented = run(producer, role, args);
        assertThat(documented.exitCode()).as(documented.all()).isZero();
        assertThat(documented.out()).contains("processed_event billing: purged 5, kept 5 not yet committed past");
        assertThat(consumer.strings("SELECT string_agg(kafka_offset::text, ',' ORDER BY kafka_offset) FROM processed_event"))
                .containsExactly("5,6,7,8,9");
        assertThat(kafka.acls("outbox-purge")).containsExactly("DESCRIBE GROUP billing (LITERAL)",
                "DESCRIBE TOPIC " + topic + " (LITERAL)");
    }

    // ------------------------------------------------------------------ roles and runs

    /** A database whose schema and temporary tables PUBLIC may no longer use: only the documented grants count. */
    private TestDatabase database() throws Exception {
        TestDatabase db = ground.postgres().newDatabase();
        db.exec("REVOKE USAGE ON SCHEMA public FROM PUBLIC", "REVOKE TEMPORARY ON DATABASE \"" + db.name() + "\" FROM PUBLIC");
        return db;
    }

    /** Login role {@code role} (roles are per server) with exactly {@code grants} in {@code db}. */
    private static String role(TestDatabase db, String role, List<Grant> grants) throws Exception {
        Grant.roleWith(db, "public", role, PW, grants, null);
        return role;
    }

    private static void grant(TestDatabase db, String role, List<Grant> grants) throws Exception {
        db.exec(grants.stream().map(g -> g.statement("public", role)).toArray(String[]::new));
    }

    /** The command as {@code role}, over {@code sslmode=verify-full} (the URL of the secure ground's databases). */
    private static CliRun run(TestDatabase db, String role, String... args) {
        assertThat(db.jdbcUrl()).contains("sslmode=verify-full");
        return CliRun.run(Map.of("OUTBOX_JDBC_URL", db.jdbcUrl(), "OUTBOX_USER", role, "OUTBOX_PASSWORD", PW), args);
    }

    private static Map<String, String> admin(TestDatabase db) {
        return Map.of("OUTBOX_JDBC_URL", db.jdbcUrl(), "OUTBOX_USER", db.user(), "OUTBOX_PASSWORD", db.password());
    }
}
