package dev.outboxkit.examples.transfer;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.writer.IdempotencyKeys;
import dev.outboxkit.writer.IdempotentResult;
import dev.outboxkit.writer.StoredResponse;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Real HTTP calls against the example service. */
@ExtendWith(OutboxTestkitExtension.class)
class TransferHttpServerTest {

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(30)).build();

    private HttpResponse<String> post(TransferHttpServer server, String key, String body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + "/transfers"))
                .timeout(Duration.ofSeconds(60)).header("Content-Type", "application/json")
                .header("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (key != null) {
            b.header("Idempotency-Key", key);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static long value(TestDatabase db, String sql) throws Exception {
        try (Connection c = db.connect(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    @Test
    void idempotencyKeyHeaderMapsOntoTheDraftsStatusCodes(TestDatabase db) throws Exception {
        TransferHttpServer.openAccount(db.dataSource(), "alice", 100);
        TransferHttpServer.openAccount(db.dataSource(), "bob", 0);
        IdempotencyKeys keys = IdempotencyKeys.builder().build();
        String body = "{\"from\": \"alice\", \"to\": \"bob\", \"amount\": 30}";
        try (TransferHttpServer server = TransferHttpServer.start(db.dataSource(), keys, 0)) {
            HttpResponse<String> missing = post(server, null, body);
            assertThat(missing.statusCode()).isEqualTo(400);
            assertThat(missing.body()).contains("Idempotency-Key header is missing");

            HttpResponse<String> created = post(server, "key-1", body);
            assertThat(created.statusCode()).isEqualTo(201);
            assertThat(created.headers().firstValue("Location")).hasValueSatisfying(l -> assertThat(l).startsWith("/transfers/"));
            assertThat(created.headers().firstValue("Idempotent-Replayed")).isEmpty();

            // a retry, the JSON spelled differently: the same response, replayed, no second transfer
            HttpResponse<String> retry = post(server, "key-1", "{\"amount\":30,\"to\":\"bob\",\"from\":\"alice\"}");
            assertThat(retry.statusCode()).isEqualTo(201);
            assertThat(retry.body()).isEqualTo(created.body());
            assertThat(retry.headers().firstValue("Location")).isEqualTo(created.headers().firstValue("Location"));
            assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");

            HttpResponse<String> reused = post(server, "key-1", "{\"from\": \"alice\", \"to\": \"bob\", \"amount\": 31}");
            assertThat(reused.statusCode()).isEqualTo(422);

            HttpResponse<String> broke = post(server, "key-2", "{\"from\": \"alice\", \"to\": \"bob\", \"amount\": 1000}");
            assertThat(broke.statusCode()).isEqualTo(402);
            assertThat(post(server, "key-2", "{\"from\": \"alice\", \"to\": \"bob\", \"amount\": 1000}").statusCode())
                    .as("a stored terminal failure is replayed").isEqualTo(402);
            assertThat(post(server, "key-3", "{\"from\": \"alice\", \"to\": \"carol\", \"amount\": 1}").statusCode())
                    .isEqualTo(404);
            assertThat(post(server, "key-4", "{\"from\": \"alice\", \"amount\": 1}").statusCode()).isEqualTo(400);

            // the same key while the first request still runs: 409 with Retry-After
            CountDownLatch holding = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            String slow = "{\"from\": \"alice\", \"to\": \"bob\", \"amount\": 5}";
            CompletableFuture<Object> holder = CompletableFuture.supplyAsync(() -> {
                try {
                    return keys.execute(db.dataSource(), TransferHttpServer.SCOPE, "key-5", slow, (c, tx) -> {
                        holding.countDown();
                        release.await();
                        return StoredResponse.json(201, "{}");
                    });
                } catch (Exception e) {
                    return e;
                }
            });
            assertThat(holding.await(60, TimeUnit.SECONDS)).isTrue();
            HttpResponse<String> busy = post(server, "key-5", slow);
            assertThat(busy.statusCode()).isEqualTo(409);
            assertThat(busy.headers().firstValue("Retry-After")).hasValueSatisfying(s -> assertThat(Long.parseLong(s)).isPositive());
            release.countDown();
            assertThat(holder.get(60, TimeUnit.SECONDS)).as("the first request with key-5 finished, not replayed")
                    .isEqualTo(new IdempotentResult(StoredResponse.json(201, "{}"), false));
            assertThat(post(server, "key-5", slow).headers().firstValue("Idempotent-Replayed")).hasValue("true");
        }
        assertThat(value(db, "SELECT balance FROM example_account WHERE id = 'alice'")).isEqualTo(70);
        assertThat(value(db, "SELECT balance FROM example_account WHERE id = 'bob'")).isEqualTo(30);
        assertThat(value(db, "SELECT count(*) FROM outbox_event WHERE event_type = 'TransferMade' "
                + "AND headers->>'traceparent' = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'")).isEqualTo(1);
    }
}
