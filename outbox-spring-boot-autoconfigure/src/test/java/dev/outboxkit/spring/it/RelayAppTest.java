package dev.outboxkit.spring.it;

import dev.outboxkit.testkit.TestDatabase;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * One application context for the relay and consumer tests: the in-app polling relay
 * (outboxkit.relay.mode=poll), the projection's @KafkaListener, Kafka behind a fault proxy
 * ({@link ProxiedKafka}), its own database, a real Tomcat port. Subclasses share it.
 */
@SpringBootTest(classes = TestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "spring.autoconfigure.exclude=org.springframework.boot.hibernate.autoconfigure.HibernateJpaAutoConfiguration,"
                + "org.springframework.boot.data.jpa.autoconfigure.DataJpaRepositoriesAutoConfiguration",
        "outboxkit.relay.mode=poll",
        "outboxkit.relay.options.partitions=4",
        "outboxkit.relay.options.max-poll-delay=20ms",
        "outboxkit.relay.options.instance-id=relay-in-app",
        // a third of it is how long a batch waits for Kafka: an outage shows within seconds
        "outboxkit.relay.options.lease-duration=6s",
        "spring.kafka.consumer.auto-offset-reset=earliest",
        "spring.kafka.consumer.properties.max.poll.records=5",
        "management.endpoints.web.exposure.include=health",
        "management.endpoint.health.group.readiness.show-details=always"})
@ActiveProfiles("relay")
abstract class RelayAppTest {

    static TestDatabase db;

    @DynamicPropertySource
    static void infrastructure(DynamicPropertyRegistry registry) {
        db = relayInfrastructure(registry);
    }

    /** A new database, the projection's topics and the proxied Kafka, wired into a relay test's context. */
    static TestDatabase relayInfrastructure(DynamicPropertyRegistry registry) {
        TestDatabase database = TestApplication.database(registry);
        ProxiedKafka kafka = ProxiedKafka.get();
        for (String topic : List.of(Projection.TOPIC, Projection.TOPIC + ".dlq", Projection.TOPIC + ".review",
                Projection.BATCH_TOPIC, Projection.BATCH_TOPIC + ".dlq")) {
            kafka.kafka.createTopic(topic, 3);
        }
        registry.add("spring.kafka.bootstrap-servers", kafka.kafka::bootstrapServers);
        return database;
    }

    @Autowired
    TransferController ledger;
    @Autowired
    Projection projection;
    @Autowired
    PlatformTransactionManager transactionManager;
    @Autowired
    JdbcTemplate jdbc;
    @LocalServerPort
    int port;

    static ProxiedKafka kafka() {
        return ProxiedKafka.get();
    }

    long count(String sql, Object... args) {
        return jdbc.queryForObject(sql, Long.class, args);
    }

    /** {@code n} transfers, each in its own transaction with its event. */
    List<UUID> transfers(int n, boolean failFirstDelivery) {
        List<UUID> ids = new ArrayList<>();
        TransactionTemplate tx = new TransactionTemplate(transactionManager);
        for (int i = 0; i < n; i++) {
            ids.add(tx.execute(status -> {
                UUID id = ledger.transfer("A", "B", 1);
                if (failFirstDelivery) {
                    projection.failFirstDeliveryOf(id.toString());
                }
                return id;
            }));
        }
        return ids;
    }
}
