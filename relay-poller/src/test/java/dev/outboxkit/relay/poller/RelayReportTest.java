package dev.outboxkit.relay.poller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.outboxkit.core.Secret;
import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.runtime.RelayReports;
import dev.outboxkit.sql.Migrations;
import dev.outboxkit.testkit.OutboxRows;
import dev.outboxkit.testkit.OutboxTestkit;
import dev.outboxkit.testkit.TestDatabase;
import java.sql.Connection;
import java.time.Duration;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * The instance's report is best effort: on a schema of version 12 (no {@code outbox_relay_report}) the relay starts,
 * publishes and is ready as before, and says once what to run. (Its row on a current schema, with the documented
 * grants, and without them: {@code PipelineTest.theDocumentedLeastPrivilegeGrantsAreEnough},
 * {@code GrantsAtStartTest}.)
 */
class RelayReportTest {

    @Test
    void onASchemaWithoutTheTableTheRelayPublishesAndNamesTheMigrationOnce() throws Exception {
        TestDatabase db = OutboxTestkit.postgres().newEmptyDatabase();
        Logger logger = (Logger) LoggerFactory.getLogger(RelayReports.class);
        ListAppender<ILoggingEvent> lines = new ListAppender<>();
        lines.start();
        logger.addAppender(lines);
        MockProducer<byte[], byte[]> kafka = new MockProducer<>(true, null, new ByteArraySerializer(), new ByteArraySerializer());
        try {
            Migrations.migrate(db.dataSource(), "public", "12");
            try (PollingRelay relay = PollingRelay.builder().jdbcUrl(db.jdbcUrl()).user(db.user())
                    .password(Secret.of(db.password())).bootstrapServers("127.0.0.1:9").route(TopicRoute.of("v12"))
                    .claimLoops(1).producerFactory(config -> kafka).build()) {
                relay.start();
                try (Connection c = db.connect()) {
                    OutboxRows.insert(c, "account", "a-1", "{\"n\": 1}");
                }
                await().atMost(Duration.ofSeconds(30)).until(() -> db.count("SELECT count(*) FROM outbox_event") == 0);
                assertThat(kafka.history()).hasSize(1);
                String migrate = "outbox migrate --schema public";
                await().atMost(Duration.ofSeconds(30)).until(() -> GrantsAtStartTest.warnings(lines, migrate).size() == 1);
                assertThat(GrantsAtStartTest.warnings(lines, migrate).get(0))
                        .contains("outbox_relay_report", "schema version 13", "publishing is not affected");
                assertThat(relay.health().live()).isTrue();
            }
            assertThat(GrantsAtStartTest.warnings(lines, "outbox_relay_report")).as("said once, nothing else").hasSize(1);
        } finally {
            logger.detachAppender(lines);
            db.server().drop(db);
        }
    }
}
