package dev.outboxkit.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.outboxkit.testkit.History;
import dev.outboxkit.writer.OutboxMessage;
import dev.outboxkit.writer.OutboxTransaction;
import java.sql.Connection;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Issue 8's scenarios that the module suites do not already cover, end to end (writers →
 * polling relay in a child JVM → Kafka → dedupe consumer → effect table), each checked with
 * {@link History} after heal and drain. The checker's figures are printed per scenario
 * ({@code RELIABILITY <scenario>: …}).
 */
class FaultScenariosTest {

    private static void assertClean(History.Report report, long minIntents) {
        assertThat(report.ok()).as(report.summary()).isTrue();
        assertThat(report.intents()).as("events written").isGreaterThanOrEqualTo((int) minIntents);
        assertThat(report.lost()).isZero();
        assertThat(report.duplicateEffects()).isZero();
        assertThat(report.orderViolations()).isZero();
    }

    /** Issue 8 scenario 4: {@code pg_ctl stop -m immediate} twice under writers and the poller. */
    @Test
    void postgresCrashedAndRestartedUnderWritersAndRelay() throws Exception {
        try (Pipeline p = new Pipeline("pg-restart", 1)) {
            p.startWriters(4, Duration.ofMillis(5));
            await().atMost(Duration.ofMinutes(2)).until(() -> p.appliedCount() > 200);
            for (int i = 0; i < 2; i++) {
                p.env.pg.stopImmediately();
                Pipeline.sleep(Duration.ofSeconds(3));
                p.env.pg.start();
                long before = p.appliedCount();
                await("flowing again after restart " + (i + 1)).atMost(Duration.ofMinutes(2))
                        .until(() -> p.appliedCount() > before + 200);
            }
            History.Report report = p.healDrainAndCheck();
            assertClean(report, 1000);
            assertThat(p.connectionFailures.get() + p.inDoubtCommits.get() + p.failedCommits.get())
                    .as("writers noticed the crashes").isPositive();
        }
    }

    /** Issue 8 scenario 5: blackhole and reset between the relay and PostgreSQL, then between the relay and Kafka. */
    @Test
    void networkBlackholeAndResetBetweenRelayAndPostgresAndKafka() throws Exception {
        try (Pipeline p = new Pipeline("network", 1)) {
            p.startWriters(3, Duration.ofMillis(10));
            await().atMost(Duration.ofMinutes(2)).until(() -> p.appliedCount() > 200);

            p.env.pgProxy.blackhole();
            Pipeline.sleep(Duration.ofSeconds(8));       // longer than the relay's lease
            p.env.pgProxy.heal();
            awaitProgress(p, "after the PostgreSQL blackhole");
            p.env.pgProxy.resetAndRefuse();
            Pipeline.sleep(Duration.ofSeconds(3));
            p.env.pgProxy.heal();
            awaitProgress(p, "after the PostgreSQL reset");

            p.env.kafkaProxy.blackhole();
            Pipeline.sleep(Duration.ofSeconds(8));
            p.env.kafkaProxy.heal();
            awaitProgress(p, "after the Kafka blackhole");
            p.env.kafkaProxy.reset();
            awaitProgress(p, "after the Kafka reset");

            History.Report report = p.healDrainAndCheck();
            assertClean(report, 500);
        }
    }

    /** Issue 8 scenario 10: a transaction that inserted an outbox row stays open for 20 s; the relay keeps flowing. */
    @Test
    void longOpenTransactionDoesNotStallTheRelay() throws Exception {
        try (Pipeline p = new Pipeline("long-tx", 1)) {
            p.startWriters(3, Duration.ofMillis(10));
            await().atMost(Duration.ofMinutes(2)).until(() -> p.appliedCount() > 100);
            UUID held;
            try (Connection c = p.db.connect()) {
                c.setAutoCommit(false);
                OutboxTransaction tx = p.writer.begin(c);
                held = tx.add(OutboxMessage.builder("reliability", "held", "Happened").payloadJson("{\"held\":true}").build());
                tx.flush();                                      // the row exists, uncommitted, with a low seq
                long atStart = p.appliedCount();
                long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
                await("applied while the transaction is open").atMost(Duration.ofSeconds(20))
                        .until(() -> p.appliedCount() > atStart + 300);
                long remaining = deadline - System.nanoTime();
                if (remaining > 0) {
                    Pipeline.sleep(Duration.ofNanos(remaining));
                }
                long duringHold = p.appliedCount() - atStart;
                assertThat(duringHold).as("events applied while a transaction stayed open 20 s").isGreaterThan(300);
                tx.commit();
                p.history.committed(held, "held", 1);
                System.out.println("RELIABILITY long-tx: applied while the transaction was open for 20 s: " + duringHold);
            }
            History.Report report = p.healDrainAndCheck();
            assertClean(report, 500);
            assertThat(p.count("SELECT count(*) FROM reliability_effect WHERE event_id = '" + held + "'"))
                    .as("the long transaction's event, committed late with a low seq").isEqualTo(1);
        }
    }

    private static void awaitProgress(Pipeline p, String what) throws Exception {
        long before = p.appliedCount();
        await("progress " + what).atMost(Duration.ofMinutes(2)).until(() -> p.appliedCount() > before + 100);
    }
}
