package dev.outboxkit.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

@ExtendWith(OutboxTestkitExtension.class)
class CliTest {

    private static final String DEAD_URL = "jdbc:postgresql://127.0.0.1:1/nowhere?connectTimeout=2";
    /**
     * A URL only the environment names, refused before any connection as not PostgreSQL's: the message shows which
     * source won, without waiting out the pool's connection timeout that {@link #DEAD_URL} costs.
     */
    private static final String ENV_ONLY_URL = "jdbc:from-the-environment://nowhere/db";

    @Test
    void unknownOptionIsAUsageErrorThatNamesIt() {
        CliRun r = CliRun.run(Map.of(), "migrate", "--jdbc-ulr", "x");
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).contains("--jdbc-ulr");
    }

    @Test
    void hostileSchemaIsRefusedBeforeAnyConnection() {
        CliRun r = CliRun.run(Map.of(), "migrate", "--jdbc-url", DEAD_URL, "--schema", "public; drop table x");
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).contains("--schema").contains("not a legal identifier");
    }

    @Test
    void missingJdbcUrlNamesTheOptionAndItsVariable() {
        CliRun r = CliRun.run(Map.of(), "status");
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).contains("--jdbc-url").contains("OUTBOX_JDBC_URL");
    }

    @Test
    void unreachableDatabaseIsARuntimeFailureWithoutThePassword() {
        CliRun r = CliRun.run(Map.of(), "status", "--jdbc-url", DEAD_URL + "&password=hunter2");
        assertThat(r.exitCode()).isEqualTo(1);
        assertThat(r.err()).contains("status failed");
        assertThat(r.all()).doesNotContain("hunter2");
    }

    @Test
    void helpNeverShowsSecretsFromTheEnvironment() {
        CliRun r = CliRun.run(Map.of("OUTBOX_PASSWORD", "hunter2", "OUTBOX_JDBC_URL", "jdbc:postgresql://h/db?password=hunter3",
                "OUTBOX_KAFKA_SASL_JAAS_CONFIG", "x required password=\"hunter4\";"), "migrate", "--help");
        assertThat(r.exitCode()).isZero();
        assertThat(r.out()).contains("--jdbc-url").contains("--schema");
        assertThat(r.all()).doesNotContain("hunter2").doesNotContain("hunter3").doesNotContain("hunter4");
    }

    @Test
    void flagBeatsEnvironmentBeatsFile(TestDatabase db, @TempDir Path dir) throws Exception {
        Path good = dir.resolve("good.properties");
        Files.writeString(good, "jdbc-url=" + db.jdbcUrl() + "\nuser=" + db.user() + "\npassword=" + db.password() + "\nschema=fromfile\n");
        Path bad = dir.resolve("bad.properties");
        Files.writeString(bad, "jdbc-url=" + DEAD_URL + "\nuser=" + db.user() + "\npassword=" + db.password() + "\n");

        // the file alone
        CliRun fromFile = CliRun.run(Map.of(), "migrate", "--config", good.toString());
        assertThat(fromFile.exitCode()).as(fromFile.all()).isZero();
        assertThat(fromFile.out()).contains("schema fromfile: applied");

        // the environment wins over the file: its URL (refused before any connection) is the one checked
        CliRun envWins = CliRun.run(Map.of("OUTBOX_JDBC_URL", ENV_ONLY_URL), "migrate", "--config", good.toString());
        assertThat(envWins.exitCode()).as(envWins.all()).isEqualTo(2);
        assertThat(envWins.err()).contains(ENV_ONLY_URL + " is not a jdbc:postgresql: URL");
        CliRun envSchema = CliRun.run(Map.of("OUTBOX_SCHEMA", "fromenv", "OUTBOX_CONFIG", good.toString()), "migrate");
        assertThat(envSchema.exitCode()).as(envSchema.all()).isZero();
        assertThat(envSchema.out()).contains("schema fromenv: applied");

        // the flag wins over both
        CliRun flagWins = CliRun.run(Map.of("OUTBOX_JDBC_URL", DEAD_URL), "migrate", "--config", bad.toString(),
                "--jdbc-url", db.jdbcUrl(), "--schema", "fromflag");
        assertThat(flagWins.exitCode()).as(flagWins.all()).isZero();
        assertThat(flagWins.out()).contains("schema fromflag: applied");

        // and applying again is a no-op
        CliRun again = CliRun.run(Map.of(), "migrate", "--config", good.toString());
        assertThat(again.out()).contains("applied 0 migrations");
    }

    @Test
    void unreadableConfigFileIsAUsageError() {
        CliRun r = CliRun.run(Map.of(), "migrate", "--config", "/nonexistent/outbox.properties");
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).contains("--config").contains("/nonexistent/outbox.properties");
    }

    /**
     * {@code outbox status} shows each CDC relay slot as the relay recorded it and as the server holds it: here a slot
     * the relay created again after a failover (the record as the relay writes it) that this server does not have.
     */
    @Test
    void statusShowsTheCdcRelaysSlotsAndWhatAFailoverDidToThem(TestDatabase db) throws Exception {
        db.exec("INSERT INTO outbox_cdc_slot (slot_name, base_lsn, created_by, system_identifier, timeline, server_address, "
                + "recreated_at, recreated_reason) VALUES ('orders_slot', '0/1', 'relay-1', 7716290811191562322, 2, "
                + "'db2:5432', now(), 'replication slot orders_slot is missing on db2:5432 (system 7716290811191562322, "
                + "timeline 2); the relay last streamed it on db1:5432')");
        Map<String, String> env = Map.of("OUTBOX_JDBC_URL", db.jdbcUrl(), "OUTBOX_USER", db.user(), "OUTBOX_PASSWORD", db.password());

        CliRun text = CliRun.run(env, "status");
        assertThat(text.exitCode()).as(text.all()).isZero();
        assertThat(text.out()).contains("CDC relay slots               1")
                .contains("orders_slot                  missing on this server, last streamed on db2:5432 (system "
                        + "7716290811191562322, timeline 2)")
                .contains("failover: ")
                .contains("created again at ").contains("the relay last streamed it on db1:5432");

        CliRun json = CliRun.run(env, "status", "--json");
        assertThat(json.out()).contains("\"cdcRelaySlots\" : [").contains("\"slot\" : \"orders_slot\"")
                .contains("\"present\" : false").contains("\"lastServer\" : \"db2:5432 (system 7716290811191562322, "
                        + "timeline 2)\"");
        // the deprecated key, until 0.2.0: the same list under its old name
        Map<?, ?> parsed = new com.fasterxml.jackson.databind.ObjectMapper().readValue(json.out(), Map.class);
        assertThat(parsed.get("walRelaySlots")).isEqualTo(parsed.get("cdcRelaySlots"));

        // a role with the documented status grants only: the rest of status, and which grant shows the slots
        String role = "status_only_" + db.name();
        db.server().createPasswordRole(role, "pw-" + role, "");
        db.exec("GRANT USAGE ON SCHEMA public TO " + role,
                "GRANT SELECT ON outbox_event, outbox_dead_letter, outbox_relay_lease TO " + role);
        CliRun limited = CliRun.run(Map.of("OUTBOX_JDBC_URL", db.jdbcUrl(), "OUTBOX_USER", role,
                "OUTBOX_PASSWORD", "pw-" + role), "status");
        assertThat(limited.exitCode()).as(limited.all()).isZero();
        assertThat(limited.out()).contains("backlog (unpublished events)")
                .contains("CDC relay slots               not shown: GRANT SELECT ON ").contains("outbox_cdc_slot");
    }

    @Test
    void statusSaysWhenTheBacklogIsAnEstimate(TestDatabase db) throws Exception {
        Map<String, String> env = Map.of("OUTBOX_JDBC_URL", db.jdbcUrl(), "OUTBOX_USER", db.user(), "OUTBOX_PASSWORD", db.password());
        db.exec("INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload)"
                + " SELECT gen_random_uuid(), 'order', 'o-' || g, 'Placed', '{}' FROM generate_series(1, 100000) g");
        CliRun counted = CliRun.run(env, "status");
        assertThat(counted.exitCode()).as(counted.all()).isZero();
        assertThat(counted.out()).contains("backlog (unpublished events)  100000").doesNotContain("estimate");

        db.exec("INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload) VALUES"
                + " (gen_random_uuid(), 'order', 'o-last', 'Placed', '{}')", "ANALYZE outbox_event");
        CliRun estimated = CliRun.run(env, "status");
        assertThat(estimated.exitCode()).as(estimated.all()).isZero();
        assertThat(estimated.out()).containsPattern("backlog \\(unpublished events\\)  about [0-9,]+ \\(estimate: more than"
                + " 100,000, not counted\\)");
        CliRun json = CliRun.run(env, "status", "--json");
        assertThat(json.out()).contains("\"backlogExact\" : false");
    }

    @Test
    void statusAndDeadLettersOperateOnParkedRows(TestDatabase db) throws Exception {
        try (Connection c = db.connect(); Statement s = c.createStatement()) {
            s.execute("INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload) VALUES "
                    + "('018f3a5e-7b2c-7d11-8a00-000000000001', 'account', 'a1', 'Opened', '{\"secret\": \"do-not-print\"}')");
            s.execute("INSERT INTO outbox_dead_letter (id, seq, aggregate_type, aggregate_id, event_type, payload, headers, "
                    + "created_at, error_class, error_message, attempts, parked_by) VALUES "
                    + "('018f3a5e-7b2c-7d11-8a00-000000000002', 7, 'account', 'a2', 'Opened', '{\"secret\": \"do-not-print\"}', '{}', now(), "
                    + "'org.apache.kafka.common.errors.RecordTooLargeException', 'too large', 3, 'relay-1'), "
                    + "('018f3a5e-7b2c-7d11-8a00-000000000003', 8, 'account', 'a3', 'Opened', '{}', '{}', now(), "
                    + "'org.apache.kafka.common.errors.InvalidTopicException', 'bad topic', 1, 'relay-1')");
        }
        Map<String, String> env = Map.of("OUTBOX_JDBC_URL", db.jdbcUrl(), "OUTBOX_USER", db.user(), "OUTBOX_PASSWORD", db.password());

        CliRun status = CliRun.run(env, "status", "--json");
        assertThat(status.exitCode()).as(status.all()).isZero();
        assertThat(status.out()).contains("\"backlog\" : 1").contains("\"deadLetters\" : 2");

        CliRun list = CliRun.run(env, "dead-letters", "list");
        assertThat(list.out()).contains("RecordTooLargeException").contains("a2").contains("2 parked rows shown");
        assertThat(list.all()).doesNotContain("do-not-print");

        CliRun noSelection = CliRun.run(env, "dead-letters", "retry");
        assertThat(noSelection.exitCode()).isEqualTo(2);

        CliRun retry = CliRun.run(env, "dead-letters", "retry", "--id", "018f3a5e-7b2c-7d11-8a00-000000000002");
        assertThat(retry.exitCode()).as(retry.all()).isZero();
        assertThat(retry.out()).contains("retry: 1 row");

        CliRun discardUnconfirmed = CliRun.run(env, "dead-letters", "discard", "--all");
        assertThat(discardUnconfirmed.exitCode()).isEqualTo(2);
        assertThat(discardUnconfirmed.err()).contains("--yes");
        CliRun discard = CliRun.run(env, "dead-letters", "discard", "--all", "--yes");
        assertThat(discard.out()).contains("discard: 1 row");

        CliRun after = CliRun.run(env, "status", "--json");
        assertThat(after.out()).contains("\"backlog\" : 2").contains("\"deadLetters\" : 0");
    }
}
