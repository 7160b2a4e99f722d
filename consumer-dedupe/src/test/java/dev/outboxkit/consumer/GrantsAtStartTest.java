package dev.outboxkit.consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.outboxkit.core.MissingGrantsException;
import dev.outboxkit.testkit.DocumentedGrants;
import dev.outboxkit.testkit.Grant;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Grants checked at start (issue 26, item 5): each privilege consumer-dedupe/README.md lists on processed_event,
 * revoked in turn, stops {@code start()} with the statement that gives it back; DELETE only when this consumer runs
 * the retention job.
 */
@ExtendWith(OutboxTestkitExtension.class)
class GrantsAtStartTest {

    @Test
    void eachMissingGrantStopsTheStartWithTheStatementToRun(TestDatabase db) throws Exception {
        db.exec("REVOKE USAGE ON SCHEMA public FROM PUBLIC"); // PUBLIC holds it by default: then it is never missing
        List<Grant> grants = DocumentedGrants.consumer();
        int n = 0;
        for (Grant missing : grants) {
            String role = "inbox_" + db.name() + "_" + n++;
            Grant.roleWith(db, "public", role, "pw", grants, missing);
            try (DedupeConsumer consumer = consumer(db, role, Duration.ofHours(1))) {
                MissingGrantsException e = catchThrowableOfType(MissingGrantsException.class, consumer::start);
                assertThat(e).as("start without " + missing).isNotNull();
                assertThat(e.grants()).as("without " + missing).containsExactly(missing.statement("public", role));
                assertThat(e.getMessage()).contains("of group grants-test");
            } finally {
                Grant.dropRole(db, role);
            }
        }
        // without the retention job DELETE is not needed
        String role = "inbox_" + db.name() + "_noretention";
        Grant.roleWith(db, "public", role, "pw", grants, new Grant("DELETE", "TABLE", "processed_event"));
        try (DedupeConsumer consumer = consumer(db, role, Duration.ZERO)) {
            consumer.start();
        } finally {
            Grant.dropRole(db, role);
        }
    }

    private static DedupeConsumer consumer(TestDatabase db, String role, Duration retentionCheckInterval) {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setURL(db.jdbcUrl());
        ds.setUser(role);
        ds.setPassword("pw");
        return DedupeConsumer.builder().bootstrapServers("127.0.0.1:9").group("grants-test").topics(List.of("grants"))
                .dataSource(ds).retentionCheckInterval(retentionCheckInterval)
                .handler((connection, event) -> { }).closeTimeout(Duration.ofSeconds(1)).build();
    }
}
