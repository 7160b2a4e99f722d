package dev.outboxkit.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestPostgres;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** reconcile, purge and intents through the CLI: exit 0 when clean, 3 when something is found, 2 on usage errors. */
@ExtendWith(OutboxTestkitExtension.class)
class ReconcileCommandTest {

    private static void sql(TestDatabase db, String sql) throws Exception {
        try (Connection c = db.connect(); Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    @Test
    void reconcileExitsThreeWhenAnEffectIsMissing(TestDatabase db, TestPostgres postgres) throws Exception {
        TestDatabase consumer = postgres.newDatabase();
        try {
            Map<String, String> env = Map.of("OUTBOX_JDBC_URL", db.jdbcUrl(), "OUTBOX_USER", db.user(), "OUTBOX_PASSWORD", db.password());
            String[] reconcile = {"reconcile", "--consumer", "billing-svc=" + consumer.jdbcUrl(), "--group", "billing", "--grace", "PT1M"};

            CliRun off = CliRun.run(env, reconcile);
            assertThat(off.exitCode()).as(off.all()).isEqualTo(2);
            assertThat(off.err()).contains("outbox intents enable");

            CliRun enable = CliRun.run(env, "intents", "enable");
            assertThat(enable.exitCode()).as(enable.all()).isZero();
            assertThat(CliRun.run(env, "intents", "status").out()).contains("enabled");

            sql(db, "INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload, created_at)"
                    + " SELECT gen_random_uuid(), 'order', 'o-' || g, 'OrderPlaced', '{}', now() - interval '1 hour'"
                    + " FROM generate_series(1, 20) g");
            String ids;
            try (Connection c = db.connect(); Statement s = c.createStatement();
                 ResultSet rs = s.executeQuery("SELECT string_agg(quote_literal(id::text), ',') FROM outbox_event")) {
                rs.next();
                ids = rs.getString(1);
            }
            sql(db, "DELETE FROM outbox_event");
            sql(consumer, "INSERT INTO processed_event (consumer_group, event_id, processed_at)"
                    + " SELECT 'billing', id::uuid, now() - interval '59 minutes' FROM unnest(ARRAY[" + ids + "]) AS u(id)");

            CliRun clean = CliRun.run(env, reconcile);
            assertThat(clean.exitCode()).as(clean.all()).isZero();
            assertThat(clean.out()).contains("20 intents").contains("clean");

            sql(consumer, "DELETE FROM processed_event WHERE event_id = (SELECT event_id FROM processed_event LIMIT 1)");
            CliRun found = CliRun.run(env, append(reconcile, "--json"));
            assertThat(found.exitCode()).as(found.all()).isEqualTo(3);
            JsonNode json = new ObjectMapper().readTree(found.out());
            assertThat(json.path("counts").path("LOST").asLong()).isEqualTo(1);
            assertThat(json.path("findings")).hasSize(1);
            assertThat(json.path("findings").get(0).path("where").asText()).isEqualTo("billing-svc/billing");
            assertThat(found.all()).doesNotContain(db.password());

            CliRun table = CliRun.run(env, reconcile);
            assertThat(table.exitCode()).isEqualTo(3);
            assertThat(table.out()).contains("LOST").contains("billing-svc/billing");
        } finally {
            postgres.drop(consumer);
        }
    }

    @Test
    void reconcileWithoutGroupIsAUsageError() {
        CliRun r = CliRun.run(Map.of(), "reconcile", "--jdbc-url", "jdbc:postgresql://127.0.0.1:1/x");
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).contains("--group");
    }

    @Test
    void purgeDryRunChangesNothingAndGroupsNeedKafka(TestDatabase db) throws Exception {
        Map<String, String> env = withExpiredDeadLetter(db);
        CliRun dry = CliRun.run(env, "purge", "--dry-run", "--dead-letter-retention", "P30D");
        assertThat(dry.exitCode()).as(dry.all()).isZero();
        assertThat(dry.out()).contains("dead letters: 1 would be purged");
        CliRun keep = CliRun.run(env, "purge");
        assertThat(keep.exitCode()).as(keep.all()).isZero();
        assertThat(keep.out()).contains("dead letters: kept");
        CliRun noKafka = CliRun.run(env, "purge", "--group", "billing");
        assertThat(noKafka.exitCode()).isEqualTo(2);
        assertThat(noKafka.err()).contains("--bootstrap-servers");
    }

    @Test
    void purgeWaitsForTheSchemasRetentionLockAndFailsWithoutChangingAnythingWhenItStaysHeld(TestDatabase db) throws Exception {
        Map<String, String> env = withExpiredDeadLetter(db);
        try (Connection sidecar = db.connect(); Statement s = sidecar.createStatement()) {
            // the key outbox-ops/README.md documents for the sidecars' schedule
            s.execute("SELECT pg_advisory_lock(hashtext('outboxkit.retention'), hashtext('public'))");
            CliRun held = CliRun.run(env, "purge", "--dead-letter-retention", "P30D", "--lock-wait", "PT0.5S");
            assertThat(held.exitCode()).as(held.all()).isEqualTo(1);
            assertThat(held.err()).contains("another instance is running retention on schema public");
            CliRun dry = CliRun.run(env, "purge", "--dead-letter-retention", "P30D", "--dry-run");
            assertThat(dry.exitCode()).as("a dry run takes no lock: " + dry.all()).isZero();
            assertThat(dry.out()).contains("dead letters: 1 would be purged");
            s.execute("SELECT pg_advisory_unlock(hashtext('outboxkit.retention'), hashtext('public'))");
        }
        CliRun free = CliRun.run(env, "purge", "--dead-letter-retention", "P30D");
        assertThat(free.exitCode()).as(free.all()).isZero();
        assertThat(free.out()).contains("dead letters: 1 purged");
    }

    /** One dead letter parked 40 days ago; returns the CLI environment for {@code db}. */
    private static Map<String, String> withExpiredDeadLetter(TestDatabase db) throws Exception {
        sql(db, "INSERT INTO outbox_dead_letter (id, seq, aggregate_type, aggregate_id, event_type, payload, headers,"
                + " created_at, error_class, error_message, attempts, parked_at, parked_by)"
                + " VALUES (gen_random_uuid(), 1, 'order', 'o', 'T', '{}', '{}', now(), 'E', 'm', 1, now() - interval '40 days', 'r')");
        return Map.of("OUTBOX_JDBC_URL", db.jdbcUrl(), "OUTBOX_USER", db.user(), "OUTBOX_PASSWORD", db.password());
    }

    private static String[] append(String[] args, String extra) {
        String[] all = java.util.Arrays.copyOf(args, args.length + 1);
        all[args.length] = extra;
        return all;
    }
}
