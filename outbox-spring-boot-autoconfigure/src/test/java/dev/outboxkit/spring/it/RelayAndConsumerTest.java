package dev.outboxkit.spring.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

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
import org.springframework.kafka.config.KafkaListenerEndpointRegistry;
import org.springframework.kafka.listener.MessageListenerContainer;

/**
 * The whole path inside Spring Boot: writer → in-app polling relay (outboxkit.relay.mode=poll) →
 * Kafka → @KafkaListener → inbox → projection, with the effect exactly once under redeliveries,
 * duplicates and a consumer restart; the relay's readiness in Actuator, its metrics in the app's registry.
 */
class RelayAndConsumerTest extends RelayAppTest {

    @Autowired
    KafkaListenerEndpointRegistry listeners;
    @Autowired
    MeterRegistry meterRegistry;

    @Test
    void everyEventReachesTheProjectionExactlyOnceThroughRedeliveriesDuplicatesAndARestart() throws Exception {
        List<UUID> ids = new ArrayList<>(transfers(3, true));  // first deliveries fail: rolled back, redelivered
        ids.addAll(transfers(17, false));
        String[] first = ids.stream().map(UUID::toString).toArray(String[]::new);
        await().atMost(Duration.ofSeconds(60)).until(() ->
                count("SELECT count(*) FROM projection_log WHERE transfer_id = ANY(?)", (Object) first) >= 10);

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
        List<ConsumerRecord<byte[], byte[]>> onTopic = kafka().kafka.readAll(List.of(Projection.TOPIC));
        assertThat(onTopic).hasSizeGreaterThanOrEqualTo(n);
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka().kafka.bootstrapServers(),
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
