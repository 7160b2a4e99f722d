package dev.outboxkit.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxkit.testkit.Grant;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A sidecar or a command whose role lacks a documented grant exits 2 before it does anything, naming the statement to
 * run (issue 26, item 5). Which grant each command checks: outbox-ops' and outbox-writer's {@code GrantsAtStartTest}.
 */
@ExtendWith(OutboxTestkitExtension.class)
class SidecarGrantsTest {

    @Test
    void bothRelaysExitTwoWithTheGrantToRun(TestDatabase db) throws Exception {
        check(db, "poll", List.of(Grant.usageOnSchema("public")), Grant.onTable("outbox_event", "SELECT", "INSERT", "UPDATE"),
                "GRANT DELETE ON \"public\".\"outbox_event\" TO ");
        check(db, "cdc", List.of(Grant.usageOnSchema("public")), Grant.onTable("outbox_event", "SELECT"),
                "GRANT DELETE ON \"public\".\"outbox_event\" TO ");
    }

    @Test
    void theCommandsExitTwoWithTheGrantToRun(TestDatabase db) throws Exception {
        String role = "ops_" + db.name();
        db.exec("REVOKE USAGE ON SCHEMA public FROM PUBLIC");
        Grant.roleWith(db, "public", role, "pw", List.of(Grant.usageOnSchema("public")), null);
        try {
            String to = " TO \"" + role + "\"";
            expectExitTwo(List.of("status"), db, role, "GRANT SELECT ON \"public\".\"outbox_event\"" + to);
            expectExitTwo(List.of("dead-letters", "list"), db, role, "GRANT SELECT ON \"public\".\"outbox_dead_letter\"" + to);
            expectExitTwo(List.of("migrate", "--schema", "ops_schema"), db, role, "GRANT CREATE ON DATABASE \"" + db.name() + "\"" + to);
        } finally {
            Grant.dropRole(db, role);
        }
    }

    private static void expectExitTwo(List<String> command, TestDatabase db, String role, String expected) {
        List<String> args = new java.util.ArrayList<>(command);
        args.addAll(List.of("--jdbc-url", db.jdbcUrl(), "--user", role, "--password", "pw"));
        CliRun r = CliRun.run(Map.of(), args.toArray(String[]::new));
        assertThat(r.exitCode()).as(r.all()).isEqualTo(2);
        assertThat(r.err()).as(r.all()).contains("cannot start: database role \"" + role + "\" lacks").contains(expected);
    }

    private static void check(TestDatabase db, String relay, List<Grant> base, List<Grant> more, String expected)
            throws Exception {
        String role = relay + "_" + db.name();
        List<Grant> grants = new java.util.ArrayList<>(base);
        grants.addAll(more);
        Grant.roleWith(db, "public", role, "pw", grants, null);
        try {
            List<String> args = new java.util.ArrayList<>(List.of("relay", relay, "--jdbc-url", db.jdbcUrl(), "--user", role,
                    "--password", "pw", "--bootstrap-servers", "127.0.0.1:9", "--http-port", "-1"));
            if (relay.equals("cdc")) {
                args.addAll(List.of("--slot-name", "g_" + db.name()));
            }
            CliRun r = CliRun.run(Map.of(), args.toArray(String[]::new));
            assertThat(r.exitCode()).as(r.all()).isEqualTo(2);
            assertThat(r.err()).as(r.all()).contains("cannot start: database role \"" + role + "\" lacks")
                    .contains(expected + "\"" + role + "\"");
        } finally {
            Grant.dropRole(db, role);
        }
    }
}
