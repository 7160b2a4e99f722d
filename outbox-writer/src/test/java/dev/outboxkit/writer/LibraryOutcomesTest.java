package dev.outboxkit.writer;

import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.writer.outcomes.CallerIsolationSuite;
import dev.outboxkit.writer.outcomes.IdempotencyAdapter;
import dev.outboxkit.writer.outcomes.IdempotencyOutcomeSuite;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.ExtendWith;

/** The engine's outcomes through the library API, {@link IdempotencyKeys#execute}; the scope names the caller. */
@ExtendWith(OutboxTestkitExtension.class)
class LibraryOutcomesTest implements IdempotencyOutcomeSuite, CallerIsolationSuite, IdempotencyAdapter {

    private static TestDatabase db;
    private static IdempotencyKeys keys;
    private volatile CountDownLatch holding;
    private volatile CountDownLatch release;

    @BeforeAll
    static void database(TestDatabase database) throws SQLException {
        db = database;
        db.exec("CREATE TABLE effect (id uuid PRIMARY KEY, idem_key text NOT NULL, amount bigint NOT NULL)");
        keys = IdempotencyKeys.builder().build();
    }

    @Override
    public IdempotencyAdapter adapter() {
        return this;
    }

    @Override
    public Reply send(String key, long amount) {
        return sendAs("alice", key, amount);
    }

    /** What an HTTP layer over the library does: the response, or the refusal's status. */
    @Override
    public Reply sendAs(String caller, String key, long amount) {
        try {
            IdempotentResult r = keys.execute(db.dataSource(), "transfers caller=" + caller, key,
                    "{\"amount\": " + amount + "}", (c, tx) -> work(c, tx, key, amount));
            return new Reply(r.response().status(), r.replayed(), r.response().bodyAsString(), null);
        } catch (RequestInProgressException e) {
            return new Reply(e.httpStatus(), false, e.getMessage(), e.retryAfter());
        } catch (IdempotencyException e) {
            return new Reply(e.httpStatus(), false, e.getMessage(), null);
        } catch (SQLException | RuntimeException e) {
            return new Reply(500, false, e.toString(), null);
        }
    }

    /** The effect (one row, one event), then a 201 unique to this run; over 1000 is refused for good. */
    private StoredResponse work(java.sql.Connection c, OutboxTransaction tx, String key, long amount) throws Exception {
        UUID id = UUID.randomUUID();
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO effect (id, idem_key, amount) VALUES (?, ?, ?)")) {
            ps.setObject(1, id);
            ps.setString(2, key);
            ps.setLong(3, amount);
            ps.executeUpdate();
        }
        tx.add(OutboxMessage.builder("transfer", id.toString(), "TransferMade").payloadJson("{\"amount\": " + amount + "}")
                .build());
        CountDownLatch wait = release;
        if (wait != null) {
            holding.countDown();
            wait.await(60, TimeUnit.SECONDS);
        }
        if (amount > 1000) {
            throw new TerminalFailureException(StoredResponse.json(402, "{\"error\": \"over the limit\"}"));
        }
        return StoredResponse.json(201, "{\"id\": \"" + id + "\"}");
    }

    @Override
    public long refusedAmount() {
        return 5000;
    }

    @Override
    public long effects() throws SQLException {
        return db.count("SELECT count(*) FROM effect");
    }

    @Override
    public DataSource dataSource() {
        return db.dataSource();
    }

    @Override
    public String effectTable() {
        return "effect";
    }

    @Override
    public IdempotencyKeys keys() {
        return keys;
    }

    @Override
    public Hold hold() {
        holding = new CountDownLatch(1);
        release = new CountDownLatch(1);
        CountDownLatch h = holding;
        CountDownLatch r = release;
        return new Hold() {
            @Override
            public boolean awaitHolding(Duration timeout) throws InterruptedException {
                return h.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
            }

            @Override
            public void close() {
                release = null;
                r.countDown();
            }
        };
    }
}
