package dev.outboxkit.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.PgBouncer;
import dev.outboxkit.testkit.TestDatabase;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A relay sidecar pointed at a transaction-pooling PgBouncer exits 2 (a configuration error) with the fix in its
 * message. What each relay detects: relay-poller's and relay-debezium's {@code ThroughPgBouncerTest}.
 */
@ExtendWith(OutboxTestkitExtension.class)
class SidecarPoolerTest {

    @Test
    void bothRelaysExitTwoBehindTransactionPooling(TestDatabase db) throws Exception {
        String role = "pooled_" + db.name();
        db.server().createPasswordRole(role, "pw", "SUPERUSER");
        try (PgBouncer bouncer = PgBouncer.builder(db.server()).poolMode(PgBouncer.PoolMode.TRANSACTION).build()) {
            String url = bouncer.jdbcUrl(db) + "?prepareThreshold=0";
            for (String relay : List.of("poll", "cdc")) {
                List<String> args = new java.util.ArrayList<>(List.of("relay", relay, "--jdbc-url", url, "--user", role,
                        "--password", "pw", "--bootstrap-servers", "127.0.0.1:9", "--http-port", "-1"));
                if (relay.equals("cdc")) {
                    args.addAll(List.of("--slot-name", "p_" + db.name()));
                }
                CliRun r = CliRun.run(Map.of(), args.toArray(String[]::new));
                assertThat(r.exitCode()).as(r.all()).isEqualTo(2);
                assertThat(r.err()).as(r.all()).contains("outbox: configuration error: ", "cannot start: its connections to ",
                        "go through a connection pooler in transaction (or statement) pooling mode",
                        relay.equals("poll") ? "pool_mode=session" : "connect it to PostgreSQL directly");
            }
        } finally {
            db.exec("DROP ROLE \"" + role + "\"");
        }
    }
}
