package dev.outboxkit.spring.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.outboxkit.sql.Migrations;
import dev.outboxkit.testkit.OutboxTestkit;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * outboxkit.migration.enabled=true on an empty database, and outboxkit.relay.mode=cdc (the WAL
 * relay, Debezium Embedded) started inside Spring: events written in Spring transactions are
 * published, and closing the context (what SIGTERM does) stops the relay gracefully: the slot is
 * no longer read and the lease is given back. The test runs and closes the application itself.
 */
class CdcRelayAndMigrationTest {

    @Test
    void theEmptyDatabaseIsMigratedAndTheCdcRelayPublishesAndStopsWithTheContext() {
        TestDatabase db = TestApplication.withLedger(OutboxTestkit.postgres().newEmptyDatabase());
        TestKafka kafka = OutboxTestkit.kafka();
        String topic = Projection.TOPIC;   // the route's topic for aggregate type "transfer"
        kafka.createTopic(topic, 3);
        String slot = "s_" + db.name();   // slots are global to the server
        try {
            ConfigurableApplicationContext app = new SpringApplicationBuilder(TestApplication.class).profiles("cdc")
                    .properties(
                            "spring.autoconfigure.exclude=org.springframework.boot.hibernate.autoconfigure.HibernateJpaAutoConfiguration,"
                                    + "org.springframework.boot.data.jpa.autoconfigure.DataJpaRepositoriesAutoConfiguration",
                            "server.port=0",
                            "spring.datasource.url=" + db.jdbcUrl(), "spring.datasource.username=" + db.user(),
                            "spring.datasource.password=" + db.password(),
                            "spring.kafka.bootstrap-servers=" + kafka.bootstrapServers(),
                            "spring.kafka.listener.auto-startup=false",
                            "outboxkit.migration.enabled=true",
                            "outboxkit.relay.mode=cdc",
                            "outboxkit.relay.options.slot-name=" + slot,
                            "outboxkit.relay.options.lease-duration=10s",
                            "outboxkit.relay.options.heartbeat-interval=1s",
                            "outboxkit.relay.options.offset-flush-interval=200ms")
                    .run();
            JdbcTemplate jdbc = new JdbcTemplate(db.dataSource());
            try (app) {
                assertThat(Migrations.currentVersion(app.getBean(DataSource.class), "public")).as("migrated at start-up")
                        .isNotNull();
                HealthIndicator health = app.getBean("outboxRelayHealthIndicator", HealthIndicator.class);
                await().atMost(Duration.ofSeconds(60)).untilAsserted(() ->
                        assertThat(health.health().getStatus()).as(health.health().toString()).isEqualTo(Status.UP));

                TransferController ledger = app.getBean(TransferController.class);
                TransactionTemplate tx = new TransactionTemplate(app.getBean(PlatformTransactionManager.class));
                Set<String> ids = IntStream.range(0, 3).mapToObj(i -> tx.execute(s -> ledger.transfer("A", "B", 1)).toString())
                        .collect(Collectors.toSet());
                await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> assertThat(kafka.readAll(List.of(topic)).stream()
                        .map(r -> new String(r.key(), StandardCharsets.UTF_8)).collect(Collectors.toSet())).containsAll(ids));
                assertThat(jdbc.queryForObject("SELECT count(*) FROM outbox_relay_lease WHERE lease_key = ?", Long.class,
                        "cdc/" + slot)).isEqualTo(1);
            }   // context closed

            assertThat(jdbc.queryForObject("SELECT count(*) FROM pg_replication_slots WHERE slot_name = ? AND active",
                    Long.class, slot)).as("the slot is no longer read").isZero();
            assertThat(jdbc.queryForObject("SELECT count(*) FROM outbox_relay_lease WHERE lease_key = ?", Long.class,
                    "cdc/" + slot)).as("the lease was given back").isZero();
        } finally {
            db.dropReplicationSlot(slot);
        }
    }
}
