package dev.outboxkit.relay.poller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.outboxkit.core.Secret;
import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.relay.ConnectionPoolerException;
import dev.outboxkit.testkit.DocumentedGrants;
import dev.outboxkit.testkit.Grant;
import dev.outboxkit.testkit.History;
import dev.outboxkit.testkit.OutboxRows;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.PgBouncer;
import dev.outboxkit.testkit.PgBouncer.PoolMode;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The polling relay behind a real PgBouncer: refused at start behind transaction and statement pooling, before it
 * took a lease, with a message that names what was found, where, why and the fix; through session pooling it runs
 * and publishes every row once. Its role is the README's least-privilege one.
 */
@ExtendWith(OutboxTestkitExtension.class)
class ThroughPgBouncerTest {

    private static final String PASSWORD = "relay-secret";
    private TestDatabase db;
    private String role;

    @BeforeEach
    void role(TestDatabase db) throws Exception {
        this.db = db;
        this.role = "poll_bouncer_" + db.name();
        Grant.roleWith(db, "public", role, PASSWORD, DocumentedGrants.pollingRelay(), null);
    }

    @AfterEach
    void dropRole() throws Exception {
        Grant.dropRole(db, role);
    }

    @Test
    void transactionAndStatementPoolingAreRefusedAtStartNamingTheFix() throws Exception {
        for (PoolMode mode : List.of(PoolMode.TRANSACTION, PoolMode.STATEMENT)) {
            try (PgBouncer bouncer = PgBouncer.builder(db.server()).poolMode(mode).build();
                 PollingRelay relay = relay(bouncer.jdbcUrl(db) + "?prepareThreshold=0", "127.0.0.1:9")
                         .producerFactory(config -> new org.apache.kafka.clients.producer.MockProducer<>(true, null,
                                 new org.apache.kafka.common.serialization.ByteArraySerializer(),
                                 new org.apache.kafka.common.serialization.ByteArraySerializer()))
                         .build()) {
                ConnectionPoolerException e = catchThrowableOfType(ConnectionPoolerException.class, relay::start);
                assertThat(e).as(mode + ": start() is refused").isNotNull();
                assertThat(e.getMessage()).as(mode.name())
                        .startsWith("poll relay bouncer-test cannot start: its connections to 127.0.0.1:" + bouncer.port()
                                + "/" + db.name() + " (jdbc:postgresql://127.0.0.1:" + bouncer.port() + "/" + db.name()
                                + "?prepareThreshold=0) go through a connection pooler in transaction (or statement) "
                                + "pooling mode")
                        .contains("the login was answered by a pooler", "session-level advisory lock", "LISTEN",
                                "events published twice", "connect the relay to PostgreSQL directly", "pool_mode=session");
            }
            assertThat(db.count("SELECT count(*) FROM outbox_relay_lease")).as("no lease taken").isZero();
            assertThat(db.count("SELECT count(*) FROM outbox_relay_member")).as("no group joined").isZero();
        }
    }

    @Test
    void sessionPoolingRunsTheRelay(TestKafka kafka) throws Exception {
        String topic = TestKafka.uniqueTopic("poll-bouncer");
        kafka.createTopic(topic, 2);
        History history = new History();
        try (Connection c = db.connect()) {
            c.setAutoCommit(false);
            for (int i = 0; i < 300; i++) {
                String aggregate = "a-" + (i % 10);
                history.committed(OutboxRows.insert(c, "order", aggregate, "{\"i\": " + i + "}"), aggregate, i);
            }
            c.commit();
        }
        try (PgBouncer bouncer = PgBouncer.builder(db.server()).poolMode(PoolMode.SESSION).build();
             PollingRelay relay = relay(bouncer.jdbcUrl(db), kafka.bootstrapServers()).route(TopicRoute.of(topic))
                     .listenNotify(true).build()) {
            relay.start();
            Outbox.awaitEmpty(db, Duration.ofSeconds(90));
        }
        Topic.check(kafka, List.of(topic), history, "through session pooling");
    }

    private PollingRelay.Builder relay(String url, String bootstrap) {
        return PollingRelay.builder().jdbcUrl(url).user(role).password(Secret.of(PASSWORD))
                .bootstrapServers(bootstrap).route(TopicRoute.of("bouncer")).instanceId("bouncer-test")
                .leaseDuration(Duration.ofSeconds(6));
    }
}
