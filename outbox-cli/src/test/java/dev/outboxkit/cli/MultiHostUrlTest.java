package dev.outboxkit.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxkit.testkit.ReplicatedPostgres;
import dev.outboxkit.testkit.TestDatabase;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The operations commands take a JDBC URL that names a primary and its standby ({@code targetServerType=primary}) and
 * reach whichever is primary, before and after a failover; several hosts without {@code targetServerType} are a usage
 * error that names the fix.
 */
class MultiHostUrlTest {

    @Test
    void theCommandsFollowThePrimaryOfAMultiHostUrl() throws Exception {
        try (ReplicatedPostgres pg = ReplicatedPostgres.builder().build()) {
            TestDatabase db = pg.newEmptyDatabase();
            Map<String, String> env = Map.of("OUTBOX_JDBC_URL", db.jdbcUrl(), "OUTBOX_USER", db.user(),
                    "OUTBOX_PASSWORD", db.password());
            assertThat(db.jdbcUrl()).contains(",").endsWith("?targetServerType=primary");

            CliRun migrate = CliRun.run(env, "migrate");
            assertThat(migrate.exitCode()).as(migrate.all()).isZero();
            db.exec("INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload) "
                    + "VALUES (gen_random_uuid(), 'account', 'a1', 'Opened', '{}')");

            pg.failover();
            CliRun status = CliRun.run(env, "status", "--json");
            assertThat(status.exitCode()).as(status.all()).isZero();
            assertThat(status.out()).as("the row committed before the failover, read on the promoted standby")
                    .contains("\"backlog\" : 1");

            String bare = db.jdbcUrl().substring(0, db.jdbcUrl().indexOf('?'));
            CliRun refused = CliRun.run(Map.of("OUTBOX_JDBC_URL", bare, "OUTBOX_USER", db.user()), "status");
            assertThat(refused.exitCode()).isEqualTo(2);
            assertThat(refused.err()).contains("--jdbc-url").contains("names 2 hosts with no targetServerType")
                    .contains("Add targetServerType=primary");
        }
    }
}
