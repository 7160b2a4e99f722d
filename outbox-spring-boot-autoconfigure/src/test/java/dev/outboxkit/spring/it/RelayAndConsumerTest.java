package dev.outboxkit.spring.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.outboxkit.testkit.OutboxTestkit;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.kafka.config.KafkaListenerEndpointRegistry;
import org.springframework.kafka.listener.MessageListenerContainer;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The whole path inside Spring Boot: writer → in-app polling relay (outboxkit.relay.mode=poll) →
 * Kafka → @KafkaListener → inbox → projection, with the effect exactly once under redeliveries,
 * duplicates and a consumer restart; the relay's readiness in Actuator, its metrics in the app's registry.
 */
@SpringBootTest(classes = TestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "spring.autoconfigure.exclude=org.springframework.boot.hibernate.autoconfigure.HibernateJpaAutoConfiguration,"
                + "org.springframework.boot.data.jpa.autoconfigure.DataJpaRepositoriesAutoConfiguration",
        "outboxkit.relay.mode=poll",
        "outboxkit.relay.options.partitions=4",
        "outboxkit.relay.options.max-poll-delay=20ms",
        "outboxkit.relay.options.instance-id=relay-in-app",
        "spring.kafka.consumer.auto-offset-reset=earliest",
        "spring.kafka.consumer.properties.max.poll.records=5",
        "management.endpoints.web.exposure.include=health",
        "management.endpoint.health.group.readiness.show-details=always"})
@ActiveProfiles("relay")
class RelayAndConsumerTest {

    static TestDatabase db;

    @DynamicPropertySource
    static void infrastructure(DynamicPropertyRegistry registry) {
        db = TestApplication.database(registry);
        TestKafka kafka = OutboxTestkit.kafka();
        kafka.createTopic(Projection.TOPIC, 3);
        registry.add("spring.kafka.bootstrap-servers", kafka::bootstrapServers);
    }

    @Autowired
    TransferController ledger;
    @Autowired
    Projection projection;
    @Autowired
    PlatformTransactionManager transactionManager;
    @Autowired
    JdbcTemplate jdbc;
    @Autowired
    KafkaListenerEndpointRegistry listeners;
    @Autowired
    MeterRegistry meterRegistry;
    @LocalServerPort
    int port;

    long count(String sql, Object... args) {
        return jdbc.queryForObject(sql, Long.class, args);
    }

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

    @Test
    void everyEventReachesTheProjectionExactlyOnceThroughRedeliveriesDuplicatesAndARestart() throws Exception {
        List<UUID> ids = new ArrayList<>(transfers(3, true));  // first deliveries fail: rolled back, redelivered
        ids.addAll(transfers(17, false));
        await().atMost(Duration.ofSeconds(60)).until(() -> count("SELECT count(*) FROM projection_log") >= 10);

        MessageListenerContainer container = listeners.getListenerContainer("projection");
        container.stop();                                     // the consumer instance goes away mid-stream
        ids.addAll(transfers(20, false));                     // ... while the relay keeps publishing
        int duplicates = redeliverCopiesOfWhatIsOnTheTopic(5); // and Kafka carries some events twice
        container.start();

        int total = ids.size();
        String[] mine = ids.stream().map(UUID::toString).toArray(String[]::new);
        await().atMost(Duration.ofSeconds(90)).untilAsserted(() -> {
            assertThat(count("SELECT count(*) FROM projection_log WHERE transfer_id = ANY(?)", (Object) mine)).isEqualTo(total);
            assertThat(projection.skipped()).isGreaterThanOrEqualTo(duplicates);
        });
        assertThat(count("SELECT count(DISTINCT event_id) FROM projection_log WHERE transfer_id = ANY(?)", (Object) mine))
                .isEqualTo(total);
        assertThat(count("SELECT count(*) FROM processed_event WHERE consumer_group = 'projection' AND event_id IN "
                + "(SELECT event_id FROM projection_log WHERE transfer_id = ANY(?))", (Object) mine)).isEqualTo(total);
        assertThat(projection.pendingFailures()).isZero();
        assertThat(projection.deliveries()).isGreaterThanOrEqualTo(total + duplicates + 3);
        assertThat(count("SELECT count(*) FROM outbox_event WHERE aggregate_id = ANY(?)", (Object) mine))
                .as("the relay deleted what it published").isZero();
    }

    private int redeliverCopiesOfWhatIsOnTheTopic(int n) {
        List<ConsumerRecord<byte[], byte[]>> onTopic = OutboxTestkit.kafka().readAll(List.of(Projection.TOPIC));
        assertThat(onTopic).hasSizeGreaterThanOrEqualTo(n);
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, OutboxTestkit.kafka().bootstrapServers(),
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName(),
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName()))) {
            for (ConsumerRecord<byte[], byte[]> r : onTopic.subList(0, n)) {
                producer.send(new ProducerRecord<>(r.topic(), r.partition(), r.key(), r.value(), r.headers()));
            }
            producer.flush();
        }
        return n;
    }

    @Test
    void theRelayIsInTheReadinessGroupAndItsMetricsInTheApplicationsRegistry() throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        HttpRequest readiness = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/actuator/health/readiness")).build();
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            HttpResponse<String> r = http.send(readiness, HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            assertThat(r.body()).contains("\"outboxRelay\"").contains("relay-in-app").contains("\"status\":\"UP\"");
        });
        transfers(1, false);
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                assertThat(meterRegistry.find("outbox.relay.published").counters()).isNotEmpty()
                        .anySatisfy(c -> assertThat(c.count()).isPositive()));
        assertThat(meterRegistry.find("outbox.writer.events").meters()).isNotEmpty();
    }
}
