package dev.outboxkit.relay.poller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.outboxkit.core.MissingGrantsException;
import dev.outboxkit.core.Secret;
import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.runtime.RelayReports;
import dev.outboxkit.testkit.DocumentedGrants;
import dev.outboxkit.testkit.Grant;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.LoggerFactory;

/**
 * Grants checked at start (issue 26, item 5): with each documented grant of relay-poller/README.md revoked in turn,
 * {@code start()} refuses with exactly the statement that gives it back, except the report's (best effort: without
 * them the relay starts, and its report names the statement once); with all of them it starts and publishes
 * ({@code PipelineTest.theDocumentedLeastPrivilegeGrantsAreEnough} runs a relay on them).
 */
@ExtendWith(OutboxTestkitExtension.class)
class GrantsAtStartTest {

    @Test
    void eachMissingGrantStopsTheStartWithTheStatementToRun(TestDatabase db) throws Exception {
        List<Grant> grants = DocumentedGrants.pollingRelay();
        List<Grant> report = DocumentedGrants.relayReportWriter();
        db.exec("REVOKE USAGE ON SCHEMA public FROM PUBLIC"); // PUBLIC holds it by default: then it is never missing
        List<String> named = new ArrayList<>();
        for (Grant missing : grants) {
            if (report.contains(missing) && !missing.kind().equals("SCHEMA")) {
                continue; // the report is best effort: below
            }
            String role = "poll_" + db.name() + "_" + named.size();
            Grant.roleWith(db, "public", role, "pw", grants, missing);
            try (PollingRelay relay = relay(db, role).build()) {
                MissingGrantsException e = catchThrowableOfType(MissingGrantsException.class, relay::start);
                assertThat(e).as("start without " + missing).isNotNull();
                assertThat(e.grants()).as("without " + missing).containsExactly(missing.statement("public", role));
                assertThat(e.role()).isEqualTo(role);
                assertThat(e.getMessage()).contains("poll relay grants-test", missing.statement("public", role));
                named.add(e.grants().get(0));
            } finally {
                Grant.dropRole(db, role);
            }
        }
        assertThat(named).hasSize(grants.size() - report.size() + 1); // USAGE on the schema is in both

        // Without the report's grants the relay starts (and publishes); its report names the one statement, once.
        String role = "poll_" + db.name() + "_noreport";
        Grant.roleWith(db, "public", role, "pw", grants.stream().filter(g -> !report.contains(g) || g.kind().equals("SCHEMA"))
                .toList(), null);
        Logger logger = (Logger) LoggerFactory.getLogger(RelayReports.class);
        ListAppender<ILoggingEvent> lines = new ListAppender<>();
        lines.start();
        logger.addAppender(lines);
        try (PollingRelay relay = relay(db, role).build()) {
            relay.start();
            String grant = "GRANT SELECT, INSERT, UPDATE, DELETE ON \"public\".\"outbox_relay_report\" TO \"" + role + "\"";
            await().atMost(Duration.ofSeconds(30)).until(() -> warnings(lines, grant).size() == 1);
            assertThat(warnings(lines, grant).get(0)).contains("publishing is not affected");
        } finally {
            logger.detachAppender(lines);
            Grant.dropRole(db, role);
        }
        assertThat(db.count("SELECT count(*) FROM outbox_relay_report")).isZero();
    }

    /** The WARN lines {@code lines} caught that contain {@code text} (the report thread appends while this reads). */
    static List<String> warnings(ListAppender<ILoggingEvent> lines, String text) {
        synchronized (lines) {
            return lines.list.stream().filter(e -> e.getLevel() == Level.WARN).map(ILoggingEvent::getFormattedMessage)
                    .filter(m -> m.contains(text)).toList();
        }
    }

    private static PollingRelay.Builder relay(TestDatabase db, String role) {
        return PollingRelay.builder().jdbcUrl(db.jdbcUrl()).user(role).password(Secret.of("pw"))
                .bootstrapServers("127.0.0.1:9").route(TopicRoute.of("grants")).instanceId("grants-test")
                .producerFactory(config -> new MockProducer<>(true, null, new ByteArraySerializer(), new ByteArraySerializer()));
    }
}
