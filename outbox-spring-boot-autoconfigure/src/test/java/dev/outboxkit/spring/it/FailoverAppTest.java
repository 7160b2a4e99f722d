package dev.outboxkit.spring.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.outboxkit.testkit.ReplicatedPostgres;
import dev.outboxkit.testkit.TestDatabase;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
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
 * A Spring Boot service whose {@code spring.datasource.url} names a primary and its standby
 * ({@code targetServerType=primary}, {@link ReplicatedPostgres}): the writer in the application's transactions, the
 * in-app polling relay (built from the same URL) and the @KafkaListener's inbox all carry on after the primary crashed
 * and the standby was promoted, each event applied once, and readiness comes back.
 */
@SpringBootTest(classes = TestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "spring.autoconfigure.exclude=org.springframework.boot.hibernate.autoconfigure.HibernateJpaAutoConfiguration,"
                + "org.springframework.boot.data.jpa.autoconfigure.DataJpaRepositoriesAutoConfiguration",
        "outboxkit.relay.mode=poll",
        "outboxkit.relay.options.partitions=4",
        "outboxkit.relay.options.max-poll-delay=20ms",
        "outboxkit.relay.options.instance-id=relay-failover",
        "outboxkit.relay.options.lease-duration=6s",
        "spring.kafka.consumer.auto-offset-reset=earliest",
        "management.endpoints.web.exposure.include=health",
        "management.endpoint.health.group.readiness.show-details=always"})
@ActiveProfiles("relay")
class FailoverAppTest {

    static ReplicatedPostgres pg;
    static TestDatabase db;

    @DynamicPropertySource
    static void infrastructure(DynamicPropertyRegistry registry) {
        pg = ReplicatedPostgres.builder().build();
        db = TestApplication.wire(registry, TestApplication.withLedger(pg.newDatabase()));
        ProxiedKafka kafka = ProxiedKafka.get();
        for (String topic : List.of(Projection.TOPIC, Projection.TOPIC + ".dlq", Projection.TOPIC + ".review",
                Projection.BATCH_TOPIC, Projection.BATCH_TOPIC + ".dlq")) {
            kafka.kafka.createTopic(topic, 3);
        }
        registry.add("spring.kafka.bootstrap-servers", kafka.kafka::bootstrapServers);
    }

    @AfterAll
    static void closeServers() {
        pg.close();
    }

    @Autowired
    TransferController ledger;
    @Autowired
    PlatformTransactionManager transactionManager;
    @Autowired
    JdbcTemplate jdbc;
    @LocalServerPort
    int port;

    @Test
    void theWriterTheInAppRelayAndTheInboxCarryOnOnThePromotedStandby() throws Exception {
        assertThat(db.jdbcUrl()).contains(",").endsWith("?targetServerType=primary");
        List<UUID> ids = new ArrayList<>(transfers(10));
        awaitApplied(ids);

        pg.failover(); // the primary crashes, the standby is promoted
        ids.addAll(transfers(10)); // each one retried until the new primary takes it
        awaitApplied(ids);
        assertThat(jdbc.queryForObject("SELECT count(DISTINCT event_id) = count(*) FROM projection_log", Boolean.class))
                .as("each event applied once").isTrue();

        HttpRequest readiness = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/actuator/health/readiness")).build();
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
            HttpResponse<String> r = HttpClient.newHttpClient().send(readiness, HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            assertThat(r.body()).contains("\"outboxRelay\"").contains("relay-failover");
        });
    }

    private void awaitApplied(List<UUID> ids) {
        String[] wanted = ids.stream().map(UUID::toString).toArray(String[]::new);
        await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(200)).ignoreExceptions().until(() ->
                jdbc.queryForObject("SELECT count(*) FROM projection_log WHERE transfer_id = ANY(?)", Long.class,
                        (Object) wanted) == ids.size());
    }

    /** {@code n} transfers, each in its own transaction with its event, each tried again until it commits. */
    private List<UUID> transfers(int n) {
        List<UUID> out = new ArrayList<>();
        TransactionTemplate tx = new TransactionTemplate(transactionManager);
        for (int i = 0; i < n; i++) {
            UUID id = null;
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (id == null) {
                try {
                    id = tx.execute(status -> ledger.transfer("A", "B", 1));
                } catch (RuntimeException e) {
                    // the old primary is gone: the pool reconnects to the promoted standby. A commit whose answer was
                    // lost may have happened (in doubt); the projection's check above counts what was applied.
                    assertThat(System.nanoTime()).as("a transfer committed within 60 s of the failover: " + e)
                            .isLessThan(deadline);
                    sleep();
                }
            }
            out.add(id);
        }
        return out;
    }

    private static void sleep() {
        try {
            Thread.sleep(100);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
