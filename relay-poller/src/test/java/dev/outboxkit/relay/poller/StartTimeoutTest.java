package dev.outboxkit.relay.poller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.outboxkit.testkit.OutboxRows;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.Readiness;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import dev.outboxkit.testkit.fault.TcpFaultProxy;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A relay started while its database does not answer keeps trying until {@code startTimeout} (not ready
 * meanwhile, saying what it waits for), then gives up naming what it tried; a database that answers no fails at
 * once. The database is kept away by a proxy that refuses every connection (as a server that is down does) and
 * brought back by healing it.
 */
@ExtendWith(OutboxTestkitExtension.class)
class StartTimeoutTest {

    @Test
    void aDatabaseThatAnswersWithinTheStartTimeoutIsWaitedForAndThenPublishedFrom(TestDatabase db, TestKafka kafka)
            throws Exception {
        String topic = TestKafka.uniqueTopic("poll-start-wait");
        kafka.createTopic(topic, 1);
        UUID id;
        try (Connection c = db.connect()) {
            id = OutboxRows.insert(c, "order", "o-1", "{\"n\": 1}");
        }
        try (TcpFaultProxy pg = refusing("start-wait-pg", db);
             PollingRelay relay = PollingRelayTest.relay(db, kafka, topic).jdbcUrl(db.jdbcUrlVia(pg.host(), pg.port()))
                     .leaseDuration(Duration.ofSeconds(15)).startTimeout(Duration.ofSeconds(120)).build()) {
            // not ready, live, naming the proxy's address, the start not returned: checked by startWaiting
            Readiness.WaitingStart start = Readiness.startWaiting(relay, "does not answer yet (attempt ", pg.address(),
                    Duration.ofSeconds(60));
            System.out.println("poll relay, database down at start: " + start.health().detail());
            Readiness.Restored back = start.afterRestore(pg::heal, Duration.ofSeconds(60), Duration.ofSeconds(60));
            System.out.println("poll relay, database back: " + back);
            await("the waiting row published").atMost(Duration.ofSeconds(60))
                    .until(() -> db.count("SELECT count(*) FROM outbox_event") == 0);
        }
        // at least once: a first batch whose acknowledgement outlasts its budget on a loaded machine is sent again
        assertThat(kafka.readAll(List.of(topic))).isNotEmpty()
                .allSatisfy(r -> assertThat(new String(r.headers().lastHeader("id").value())).isEqualTo(id.toString()));
    }

    /**
     * A proxy in front of the test database that refuses every connection from the start, as a server that is down
     * does; set before any pool exists, so no connection opened before the refusal can slip through.
     */
    private static TcpFaultProxy refusing(String name, TestDatabase db) {
        return TcpFaultProxy.start(name, db.server().host(), db.server().port()).resetAndRefuse();
    }

    @Test
    void aDatabaseThatStaysAwayFailsTheStartAfterTheStartTimeoutNamingWhatWasTried(TestDatabase db, TestKafka kafka) {
        try (TcpFaultProxy pg = refusing("start-timeout-pg", db);
             PollingRelay relay = PollingRelayTest.relay(db, kafka, "unused").jdbcUrl(db.jdbcUrlVia(pg.host(), pg.port()))
                     .startTimeout(Duration.ofSeconds(3)).build()) {
            long began = System.nanoTime();
            assertThatThrownBy(relay::start).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("cannot reach the database at " + pg.address() + "/" + db.name())
                    .hasMessageContaining("(startTimeout PT3S) failed, the last with")
                    .hasMessageContaining("SQLSTATE 08")
                    .hasMessageNotContaining(db.password())
                    .satisfies(e -> System.out.println("poll relay, database away past startTimeout PT3S, after "
                            + (System.nanoTime() - began) / 1_000_000 + " ms: " + e.getMessage()));
            assertThat(System.nanoTime() - began).as("tried for the whole start timeout")
                    .isGreaterThanOrEqualTo(Duration.ofSeconds(3).toNanos() - Duration.ofMillis(300).toNanos());
            assertThat(relay.health().ready()).isFalse();
        }
    }

    @Test
    void closeEndsAStartThatWaitsForTheDatabase(TestDatabase db, TestKafka kafka) throws Exception {
        try (TcpFaultProxy pg = refusing("start-close-pg", db)) {
            PollingRelay relay = PollingRelayTest.relay(db, kafka, "unused").jdbcUrl(db.jdbcUrlVia(pg.host(), pg.port()))
                    .startTimeout(Duration.ofMinutes(10)).build();
            CompletableFuture<Void> start = CompletableFuture.runAsync(relay::start);
            await().atMost(Duration.ofSeconds(60)).until(() -> relay.health().detail().contains("does not answer yet"));
            long closing = System.nanoTime();
            relay.close();
            assertThat(start).failsWithin(Duration.ofSeconds(30)).withThrowableThat()
                    .withMessageContaining("stopped while waiting for the database");
            System.out.println("poll relay, closed while waiting for the database: start ended and closed in "
                    + (System.nanoTime() - closing) / 1_000_000 + " ms");
            assertThat(relay.health().live()).isFalse();
        }
    }

    @Test
    void aRoleTheDatabaseDoesNotKnowFailsAtOnce(TestDatabase db, TestKafka kafka) {
        try (PollingRelay relay = PollingRelayTest.relay(db, kafka, "unused").user("no_such_role")
                .startTimeout(Duration.ofMinutes(10)).build()) {
            long began = System.nanoTime();
            assertThatThrownBy(relay::start).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("refused the connection, which is not retried")
                    .hasMessageContaining("SQLSTATE 28000")
                    .hasMessageContaining("check the user and password");
            // one attempt, answered by the driver (not the pool's 10 s wait), however long the start timeout
            Duration took = Duration.ofNanos(System.nanoTime() - began);
            System.out.println("poll relay, unknown role: start refused after " + took.toMillis() + " ms");
            assertThat(took).isLessThan(Duration.ofSeconds(30));
        }
    }
}
