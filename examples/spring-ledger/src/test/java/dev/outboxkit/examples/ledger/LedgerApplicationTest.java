package dev.outboxkit.examples.ledger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * The sample service with nothing of outboxkit but outbox-spring-boot-starter on its class path,
 * its own application.yml, an empty database and Kafka from the testkit: the starter's
 * auto-configuration migrates the schema, serves the @Idempotent endpoint, runs the relay and
 * feeds the listener through the inbox. One transfer over real HTTP, its retry replayed, the
 * effect downstream once.
 */
class LedgerApplicationTest extends LedgerTest {

    static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    @LocalServerPort
    int port;

    HttpResponse<String> send(HttpRequest.Builder b) throws Exception {
        return HTTP.send(b.timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
    }

    HttpRequest.Builder transfer(String key) {
        return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/transfers"))
                .header("Content-Type", "application/json").header("Idempotency-Key", key)
                .POST(HttpRequest.BodyPublishers.ofString("{\"from\":\"alice\",\"to\":\"bob\",\"amount\":30}"));
    }

    @Test
    void aTransferOverHttpIsAppliedDownstreamOnceAndItsRetryReplayed() throws Exception {
        String key = UUID.randomUUID().toString();
        HttpResponse<String> first = send(transfer(key));
        assertThat(first.statusCode()).as(first.body()).isEqualTo(201);
        HttpResponse<String> retry = send(transfer(key));
        assertThat(retry.statusCode()).isEqualTo(201);
        assertThat(retry.body()).isEqualTo(first.body());
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");

        HttpRequest.Builder received = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/received/bob"));
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> assertThat(send(received).body())
                .isEqualTo("{\"account\":\"bob\",\"received\":30}")); // as the five-minute path shows it
        HttpResponse<String> ready = send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/actuator/health/readiness")));
        assertThat(ready.statusCode()).as(ready.body()).isEqualTo(200);
    }
}
