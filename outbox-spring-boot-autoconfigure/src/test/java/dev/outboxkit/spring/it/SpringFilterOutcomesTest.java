package dev.outboxkit.spring.it;

import dev.outboxkit.writer.IdempotencyKeys;
import dev.outboxkit.writer.outcomes.CallerIsolationSuite;
import dev.outboxkit.writer.outcomes.IdempotencyAdapter;
import dev.outboxkit.writer.outcomes.IdempotencyOutcomeSuite;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.springframework.beans.factory.annotation.Autowired;

/** The engine's outcomes through the Spring filter ({@code @Idempotent}, real HTTP); the caller is the principal. */
class SpringFilterOutcomesTest extends JdbcAppTest implements IdempotencyOutcomeSuite, CallerIsolationSuite, IdempotencyAdapter {

    @Autowired
    TransferController controller;
    @Autowired
    IdempotencyKeys keys;

    @Override
    public IdempotencyAdapter adapter() {
        return this;
    }

    @Override
    public Reply send(String key, long amount) throws Exception {
        return sendAs("alice", key, amount);
    }

    @Override
    public Reply sendAs(String caller, String key, long amount) throws Exception {
        HttpResponse<byte[]> r = send(post("/outcomes", caller, key, "{\"from\":\"A\",\"to\":\"B\",\"amount\":" + amount + "}"));
        return new Reply(r.statusCode(), r.headers().firstValue("Idempotent-Replayed").isPresent(),
                new String(r.body(), StandardCharsets.UTF_8),
                r.headers().firstValue("Retry-After").map(s -> Duration.ofSeconds(Long.parseLong(s))).orElse(null));
    }

    @Override
    public long refusedAmount() {
        return 5000;
    }

    @Override
    public long effects() {
        return count("SELECT count(*) FROM transfer");
    }

    @Override
    public DataSource dataSource() {
        return db.dataSource();
    }

    @Override
    public String effectTable() {
        return "transfer";
    }

    @Override
    public IdempotencyKeys keys() {
        return keys;
    }

    @Override
    public Hold hold() {
        CountDownLatch holding = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        controller.outcomeHolding = holding;
        controller.outcomeRelease = release;
        return new Hold() {
            @Override
            public boolean awaitHolding(Duration timeout) throws InterruptedException {
                return holding.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
            }

            @Override
            public void close() {
                controller.outcomeRelease = null;
                release.countDown();
            }
        };
    }
}
