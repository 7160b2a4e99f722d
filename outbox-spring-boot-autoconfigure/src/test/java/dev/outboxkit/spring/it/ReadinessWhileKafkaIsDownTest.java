package dev.outboxkit.spring.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Must-show of issue 16: {@code /actuator/health/readiness}, over real HTTP, goes DOWN (503) while
 * Kafka is unreachable and the in-app relay's batches fail, and UP again once Kafka is back, with
 * the event written during the outage published.
 */
class ReadinessWhileKafkaIsDownTest extends RelayAppTest {

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @AfterEach
    void heal() {
        kafka().proxy.heal();
    }

    HttpResponse<String> readiness() throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/actuator/health/readiness"))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void readinessIsDownWhileKafkaIsUnreachableAndUpAgainAfter() throws Exception {
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(readiness().statusCode()).isEqualTo(200));

        kafka().proxy.resetAndRefuse();                       // every Kafka connection reset, new ones refused
        UUID duringOutage = transfers(1, false).get(0);       // the relay has a batch to publish and cannot
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            HttpResponse<String> r = readiness();
            assertThat(r.statusCode()).as(r.body()).isEqualTo(503);
            assertThat(r.body()).contains("\"status\":\"DOWN\"").contains("\"outboxRelay\"").contains("Kafka failing");
        });
        assertThat(count("SELECT count(*) FROM outbox_event WHERE aggregate_id = ?", duringOutage.toString()))
                .as("not published while Kafka is unreachable").isEqualTo(1);

        kafka().proxy.heal();
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
            HttpResponse<String> r = readiness();
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            assertThat(r.body()).contains("\"status\":\"UP\"");
        });
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(kafka().kafka.readAll(List.of(Projection.TOPIC)))
                .anySatisfy(rec -> assertThat(new String(rec.key(), StandardCharsets.UTF_8)).isEqualTo(duringOutage.toString())));
    }
}
