package dev.outboxkit.consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.outboxkit.core.Secret;
import dev.outboxkit.relay.poller.PollingRelay;
import dev.outboxkit.testkit.DocumentedGrants;
import dev.outboxkit.testkit.Grant;
import dev.outboxkit.testkit.OutboxRows;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.PgBouncer;
import dev.outboxkit.testkit.PgBouncer.PoolMode;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Two {@link DedupeConsumer}s of one group reach PostgreSQL through a real PgBouncer in transaction pooling mode
 * ({@code prepareThreshold=0}), sharing two server sessions; the polling relay publishes the outbox rows from the
 * database directly, and a third of the events is delivered twice. Every event is applied exactly once, in each
 * account's order.
 */
@ExtendWith(OutboxTestkitExtension.class)
class ThroughPgBouncerTest {

    private static final String PASSWORD = "consumer-secret";

    @Test
    void eachEventIsAppliedOnceThroughTransactionPooling(TestDatabase db, TestKafka kafka) throws Exception {
        Projection.create(db);
        String role = "consumer_bouncer_" + db.name();
        Grant.roleWith(db, "public", role, PASSWORD, DocumentedGrants.consumer(), null);
        db.exec("GRANT SELECT, INSERT, UPDATE ON account, effect_log TO \"" + role + "\"",
                "GRANT USAGE ON SEQUENCE effect_log_seq_seq TO \"" + role + "\"");
        String topic = TestKafka.uniqueTopic("bouncer");
        kafka.createTopic(topic, 3);
        List<Projection.Sent> events = Projection.events(topic, 900, 12);
        List<OutboxRows.Row> rows = new ArrayList<>();
        for (Projection.Sent s : events) {
            rows.add(new OutboxRows.Row(s.event().id(), s.event().aggregateType(), s.event().aggregateId(),
                    s.event().eventType(), topic, s.event().payload(), "{}"));
        }
        OutboxRows.insertCommitted(db, rows);

        String group = "g-" + topic;
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (PgBouncer bouncer = PgBouncer.builder(db.server()).poolMode(PoolMode.TRANSACTION).poolSize(2).build();
             HikariDataSource pool = pool(bouncer, db, role);
             PollingRelay relay = PollingRelay.builder().jdbcUrl(db.jdbcUrl()).user(db.user())
                     .password(Secret.of(db.password())).bootstrapServers(kafka.bootstrapServers()).build()) {
            relay.start();
            // a relay that crashed after publishing, before forgetting, publishes a third of them again
            Projection.send(kafka, events.subList(0, 300));
            try (DedupeConsumer first = Consumers.builder(kafka, db, topic, group).dataSource(pool)
                         .batchHandler(Projection.batchHandler()).meterRegistry(registry).build();
                 DedupeConsumer second = Consumers.builder(kafka, db, topic, group).dataSource(pool)
                         .batchHandler(Projection.batchHandler()).meterRegistry(registry).build()) {
                first.start();
                second.start();
                await().atMost(Duration.ofSeconds(120)).until(() -> db.count("SELECT count(*) FROM outbox_event") == 0
                        && Consumers.count(registry, "outbox.consumer.applied", group) >= 900);
                await().atMost(Duration.ofSeconds(120)).until(() -> Consumers.committed(kafka, group)
                        .equals(Consumers.endOffsets(kafka, topic, 3)));
            }
        } finally {
            Grant.dropRole(db, role);
        }
        Projection.assertExactlyOnce(events, kafka.readAll(List.of(topic)), db);
        assertThat(Consumers.count(registry, "outbox.consumer.applied", group)).isEqualTo(900);
        assertThat(db.count("SELECT count(*) FROM processed_event WHERE consumer_group = ?", group)).isEqualTo(900);
    }

    private static HikariDataSource pool(PgBouncer bouncer, TestDatabase db, String role) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(bouncer.jdbcUrl(db) + "?prepareThreshold=0");
        config.setUsername(role);
        config.setPassword(PASSWORD);
        config.setMaximumPoolSize(6);
        config.setMinimumIdle(0);
        config.setConnectionTimeout(30_000);
        return new HikariDataSource(config);
    }
}
