package dev.outboxkit.spring.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxkit.writer.IdempotencyKeys;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;

/** @Idempotent endpoints over real HTTP (Tomcat, Spring Security, PostgreSQL). */
class IdempotencyHttpTest extends JdbcAppTest {

    @Autowired
    TransferController controller;
    @Autowired
    IdempotencyKeys keys;

    static String transfer(long amount) {
        return "{\"from\":\"A\",\"to\":\"B\",\"amount\":" + amount + "}";
    }

    static String header(HttpResponse<?> r, String name) {
        return r.headers().firstValue(name).orElse(null);
    }

    static String body(HttpResponse<byte[]> r) {
        return new String(r.body(), StandardCharsets.UTF_8);
    }

    long transfersOf(HttpResponse<byte[]> r) {
        String id = header(r, "X-Transfer-Id");
        return count("SELECT count(*) FROM transfer WHERE id = ?::uuid", id);
    }

    @Test
    void fiftyConcurrentRequestsWithOneKeyMakeOneTransferAndOneEvent() throws Exception {
        String key = UUID.randomUUID().toString();
        long transfersBefore = count("SELECT count(*) FROM transfer");
        long eventsBefore = count("SELECT count(*) FROM outbox_event WHERE aggregate_type = 'transfer'");
        List<CompletableFuture<HttpResponse<byte[]>>> futures = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            futures.add(sendAsync(post("/transfers", "alice", key, transfer(7))));
        }
        List<HttpResponse<byte[]>> responses = new ArrayList<>();
        for (CompletableFuture<HttpResponse<byte[]>> f : futures) {
            responses.add(f.get());
        }
        List<HttpResponse<byte[]>> executed = responses.stream()
                .filter(r -> r.statusCode() == 201 && header(r, "Idempotent-Replayed") == null).toList();
        assertThat(executed).hasSize(1);
        HttpResponse<byte[]> first = executed.get(0);
        for (HttpResponse<byte[]> r : responses) {
            if (r == first) {
                continue;
            }
            assertThat(r.statusCode()).as(body(r)).isIn(201, 409);
            if (r.statusCode() == 201) {
                assertThat(header(r, "Idempotent-Replayed")).isEqualTo("true");
                assertThat(r.body()).isEqualTo(first.body());
            } else {
                assertThat(header(r, "Retry-After")).isNotNull();
                assertThat(header(r, "Content-Type")).isEqualTo("application/problem+json");
            }
        }
        assertThat(count("SELECT count(*) FROM transfer")).isEqualTo(transfersBefore + 1);
        assertThat(count("SELECT count(*) FROM outbox_event WHERE aggregate_type = 'transfer'")).isEqualTo(eventsBefore + 1);
        assertThat(count("SELECT count(*) FROM outbox_event WHERE aggregate_id = ?", header(first, "X-Transfer-Id")))
                .isEqualTo(1);
    }

    /** Issue 29, item 5: the 409 of a request still running asks for a short wait, not the whole lease. */
    @Test
    void aConcurrentRequestWhileTheFirstIsSlowIsToldToRetrySoonNotAfterTheLease() throws Exception {
        String key = UUID.randomUUID().toString();
        controller.slowStarted = new CountDownLatch(1);
        controller.slowRelease = new CountDownLatch(1);
        CompletableFuture<HttpResponse<byte[]>> first = sendAsync(post("/slow", "alice", key, transfer(3)));
        try {
            assertThat(controller.slowStarted.await(60, TimeUnit.SECONDS)).as("the first request runs").isTrue();
            HttpResponse<byte[]> second = send(post("/slow", "alice", key, transfer(3)));
            assertThat(second.statusCode()).as(body(second)).isEqualTo(409);
            long retryAfter = Long.parseLong(header(second, "Retry-After"));
            // the first has run well under a second: the configured shortest wait (1 s), rounded up at most once
            assertThat(retryAfter).isBetween(keys.retryAfter().toSeconds(), keys.retryAfter().toSeconds() + 1);
            assertThat(retryAfter).isLessThan(keys.lease().toSeconds());
        } finally {
            controller.slowRelease.countDown();
        }
        assertThat(first.get(60, TimeUnit.SECONDS).statusCode()).isEqualTo(201);
        HttpResponse<byte[]> retry = send(post("/slow", "alice", key, transfer(3)));
        assertThat(retry.statusCode()).isEqualTo(201);
        assertThat(header(retry, "Idempotent-Replayed")).isEqualTo("true");
    }

    @Test
    void aRetryAfterTheFirstResponseIsAByteIdenticalReplay() throws Exception {
        String key = UUID.randomUUID().toString();
        HttpResponse<byte[]> first = send(post("/transfers", "alice", key, transfer(5)));
        assertThat(first.statusCode()).isEqualTo(201);
        assertThat(header(first, "Idempotent-Replayed")).isNull();
        // the same request, its JSON members reordered and spaced: the canonical hash is the same
        HttpResponse<byte[]> retry = send(post("/transfers", "alice", key, "{ \"amount\": 5, \"to\": \"B\", \"from\": \"A\" }"));
        assertThat(retry.statusCode()).isEqualTo(201);
        assertThat(header(retry, "Idempotent-Replayed")).isEqualTo("true");
        assertThat(retry.body()).isEqualTo(first.body());
        for (String name : List.of("Location", "X-Transfer-Id", "Content-Type")) {
            assertThat(header(retry, name)).as(name).isNotNull().isEqualTo(header(first, name));
        }
        assertThat(transfersOf(first)).isEqualTo(1);
        assertThat(count("SELECT count(*) FROM outbox_event WHERE aggregate_id = ?", header(first, "X-Transfer-Id")))
                .isEqualTo(1);
    }

    @Test
    void theSameKeyWithAnotherBodyIs422AndRunsNothing() throws Exception {
        String key = UUID.randomUUID().toString();
        assertThat(send(post("/transfers", "alice", key, transfer(3))).statusCode()).isEqualTo(201);
        long transfers = count("SELECT count(*) FROM transfer");
        HttpResponse<byte[]> other = send(post("/transfers", "alice", key, transfer(4)));
        assertThat(other.statusCode()).isEqualTo(422);
        assertThat(body(other)).contains("already used for a different request");
        assertThat(count("SELECT count(*) FROM transfer")).isEqualTo(transfers);
    }

    @Test
    void oneCallerCanNeverReplayAnotherCallersResponse() throws Exception {
        String key = UUID.randomUUID().toString();
        HttpResponse<byte[]> alice = send(post("/transfers", "alice", key, transfer(2)));
        HttpResponse<byte[]> bob = send(post("/transfers", "bob", key, transfer(2)));
        assertThat(alice.statusCode()).isEqualTo(201);
        assertThat(bob.statusCode()).isEqualTo(201);
        assertThat(header(bob, "Idempotent-Replayed")).isNull();
        assertThat(header(bob, "X-Transfer-Id")).isNotEqualTo(header(alice, "X-Transfer-Id"));
        assertThat(bob.body()).isNotEqualTo(alice.body());
        // each caller's retry replays their own response
        assertThat(send(post("/transfers", "bob", key, transfer(2))).body()).isEqualTo(bob.body());
        assertThat(send(post("/transfers", "alice", key, transfer(2))).body()).isEqualTo(alice.body());
        assertThat(jdbc.queryForList("SELECT scope FROM idempotency_key WHERE idem_key = ? ORDER BY scope", String.class, key))
                .containsExactly("POST /transfers caller=alice", "POST /transfers caller=bob");
    }

    @Test
    void aMissingKeyIs400AndAnUnauthenticatedCallerNeverReachesTheKeys() throws Exception {
        HttpResponse<byte[]> missing = send(post("/transfers", "alice", null, transfer(1)));
        assertThat(missing.statusCode()).isEqualTo(400);
        assertThat(body(missing)).contains("Idempotency-Key");
        HttpResponse<byte[]> badPassword = send(post("/transfers", "mallory", UUID.randomUUID().toString(), transfer(1)));
        assertThat(badPassword.statusCode()).isEqualTo(401);
    }

    @Test
    void aFailureThatIsNotFinalIsNotStoredAndTheRetryRuns() throws Exception {
        String key = UUID.randomUUID().toString();
        long transfers = count("SELECT count(*) FROM transfer");
        controller.failNext.set(true);
        HttpResponse<byte[]> failed = send(post("/flaky", "alice", key, transfer(9)));
        assertThat(failed.statusCode()).isEqualTo(503);
        assertThat(count("SELECT count(*) FROM transfer")).as("the 503's work was rolled back").isEqualTo(transfers);
        HttpResponse<byte[]> retry = send(post("/flaky", "alice", key, transfer(9)));
        assertThat(retry.statusCode()).isEqualTo(201);
        assertThat(header(retry, "Idempotent-Replayed")).isNull();
        assertThat(count("SELECT count(*) FROM transfer")).isEqualTo(transfers + 1);
    }

    @Test
    void aTerminalFailureRollsTheWorkBackAndIsStoredAndReplayed() throws Exception {
        String key = UUID.randomUUID().toString();
        long transfers = count("SELECT count(*) FROM transfer");
        HttpResponse<byte[]> refused = send(post("/payments", "alice", key, transfer(5000)));
        assertThat(refused.statusCode()).isEqualTo(402);
        assertThat(body(refused)).isEqualTo("{\"error\":\"over the limit\",\"amount\":5000}");
        assertThat(count("SELECT count(*) FROM transfer")).isEqualTo(transfers);
        HttpResponse<byte[]> retry = send(post("/payments", "alice", key, transfer(5000)));
        assertThat(retry.statusCode()).isEqualTo(402);
        assertThat(header(retry, "Idempotent-Replayed")).isEqualTo("true");
        assertThat(retry.body()).isEqualTo(refused.body());
        assertThat(count("SELECT count(*) FROM transfer")).isEqualTo(transfers);
    }

    @Test
    void aPurgedKeyIs410AndDoesNotRunAgain() throws Exception {
        String key = UUID.randomUUID().toString();
        assertThat(send(post("/transfers", "alice", key, transfer(1))).statusCode()).isEqualTo(201);
        long transfers = count("SELECT count(*) FROM transfer");
        jdbc.update("UPDATE idempotency_key SET created_at = now() - interval '2 days' WHERE idem_key = ?", key);
        assertThat(keys.purgeExpired(db.dataSource())).isPositive();
        HttpResponse<byte[]> late = send(post("/transfers", "alice", key, transfer(1)));
        assertThat(late.statusCode()).isEqualTo(410);
        assertThat(body(late)).contains("NOT executed again");
        assertThat(count("SELECT count(*) FROM transfer")).isEqualTo(transfers);
    }

    @Test
    void aConnectionLostDuringTheCommitIs503AndTheKeyStaysClaimed() throws Exception {
        String key = UUID.randomUUID().toString();
        long transfers = count("SELECT count(*) FROM transfer");
        HttpResponse<byte[]> unknown = send(post("/fragile", "alice", key, transfer(6)));
        assertThat(unknown.statusCode()).as(body(unknown)).isEqualTo(503);
        assertThat(header(unknown, "Retry-After")).isEqualTo("30");
        assertThat(body(unknown)).contains("may or may not have taken effect");
        // the session died before the COMMIT reached PostgreSQL: nothing happened, and the claim holds until its lease ends
        assertThat(count("SELECT count(*) FROM transfer")).isEqualTo(transfers);
        HttpResponse<byte[]> retry = send(post("/fragile", "alice", key, transfer(6)));
        assertThat(retry.statusCode()).isEqualTo(409);
        assertThat(header(retry, "Retry-After")).isNotNull();
    }
}
