package dev.outboxkit.examples.transfer;

import static org.awaitility.Awaitility.await;

import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.writer.IdempotencyKeys;
import dev.outboxkit.writer.outcomes.IdempotencyAdapter;
import dev.outboxkit.writer.outcomes.IdempotencyOutcomeSuite;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The engine's outcomes through the JDK HTTP example (real HTTP). It serves one tenant, so the caller isolation suite
 * does not apply. A request still running is made by holding the sender's account row locked.
 */
@ExtendWith(OutboxTestkitExtension.class)
class TransferHttpServerOutcomesTest implements IdempotencyOutcomeSuite, IdempotencyAdapter {

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(30)).build();
    private static TestDatabase db;
    private static IdempotencyKeys keys;
    private static TransferHttpServer server;

    @BeforeAll
    static void start(TestDatabase database) throws Exception {
        db = database;
        TransferHttpServer.openAccount(db.dataSource(), "alice", 1_000_000);
        TransferHttpServer.openAccount(db.dataSource(), "bob", 0);
        keys = IdempotencyKeys.builder().build();
        server = TransferHttpServer.start(db.dataSource(), keys, 0);
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    @Override
    public IdempotencyAdapter adapter() {
        return this;
    }

    @Override
    public Reply send(String key, long amount) throws Exception {
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + "/transfers"))
                .timeout(Duration.ofSeconds(60)).header("Content-Type", "application/json").header("Idempotency-Key", key)
                .POST(HttpRequest.BodyPublishers.ofString("{\"from\": \"alice\", \"to\": \"bob\", \"amount\": " + amount + "}"))
                .build(), HttpResponse.BodyHandlers.ofString());
        return new Reply(r.statusCode(), r.headers().firstValue(TransferHttpServer.REPLAYED).isPresent(), r.body(),
                r.headers().firstValue("Retry-After").map(s -> Duration.ofSeconds(Long.parseLong(s))).orElse(null));
    }

    @Override
    public long refusedAmount() {
        return 1_000_000_000; // more than alice has: 402, stored
    }

    @Override
    public long effects() throws SQLException {
        return db.count("SELECT count(*) FROM outbox_event WHERE event_type = 'TransferMade'");
    }

    @Override
    public DataSource dataSource() {
        return db.dataSource();
    }

    @Override
    public String effectTable() {
        return "example_account";
    }

    @Override
    public IdempotencyKeys keys() {
        return keys;
    }

    /** Holds alice's row locked in a transaction of the test's: a transfer from her waits for it. */
    @Override
    public Hold hold() {
        try {
            Connection locker = db.connect();
            locker.setAutoCommit(false);
            try (Statement s = locker.createStatement()) {
                s.execute("SELECT 1 FROM example_account WHERE id = 'alice' FOR UPDATE");
            }
            return new Hold() {
                @Override
                public boolean awaitHolding(Duration timeout) {
                    await().atMost(timeout).until(() -> db.count("SELECT count(*) FROM pg_stat_activity "
                            + "WHERE datname = current_database() AND wait_event_type = 'Lock'") > 0);
                    return true;
                }

                @Override
                public void close() {
                    try (locker) {
                        locker.rollback();
                    } catch (SQLException e) {
                        throw new IllegalStateException("could not release the row lock", e);
                    }
                }
            };
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }
}
