package dev.outboxkit.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.outboxkit.testkit.History;
import dev.outboxkit.testkit.JavaProcess;
import dev.outboxkit.writer.OutboxMessage;
import dev.outboxkit.writer.OutboxTransaction;
import java.sql.Connection;
import java.time.Duration;
import java.util.UUID;
import java.util.function.Predicate;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Issue 8's scenarios that the module suites do not already cover, end to end (writers →
 * relay in a child JVM → Kafka → dedupe consumer → effect table), each checked with
 * {@link History} after heal and drain. The PostgreSQL crash and the network faults run once with
 * the polling relay and once with the CDC relay; kill -9 and SIGSTOP past the lease run with the
 * CDC relay (the polling relay's are in its own suite). The checker's figures are printed per
 * scenario ({@code RELIABILITY <scenario>: …}).
 */
class FaultScenariosTest {

    private static void assertClean(History.Report report, long minIntents) {
        assertThat(report.ok()).as(report.summary()).isTrue();
        assertThat(report.intents()).as("events written").isGreaterThanOrEqualTo((int) minIntents);
        assertThat(report.lost()).isZero();
        assertThat(report.duplicateEffects()).isZero();
        assertThat(report.orderViolations()).isZero();
    }

    /** Issue 8 scenario 4: {@code pg_ctl stop -m immediate} twice under writers and the relay. */
    @ParameterizedTest
    @EnumSource(RelayKind.class)
    void postgresCrashedAndRestartedUnderWritersAndRelay(RelayKind kind) throws Exception {
        try (Harness p = new Harness("pg-restart-" + kind.label(), 1, kind)) {
            p.startWriters(4, Duration.ofMillis(5));
            await().atMost(Duration.ofMinutes(2)).until(() -> p.appliedCount() > 200);
            for (int i = 0; i < 2; i++) {
                p.env.pg.stopImmediately();
                Harness.sleep(Duration.ofSeconds(3)); // the fault's duration: PostgreSQL down
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
    @ParameterizedTest
    @EnumSource(value = RelayKind.class, names = {"POLL", "CDC"})
    void networkBlackholeAndResetBetweenRelayAndPostgresAndKafka(RelayKind kind) throws Exception {
        try (Harness p = new Harness("network-" + kind.label(), 1, kind)) {
            p.startWriters(3, Duration.ofMillis(10));
            await().atMost(Duration.ofMinutes(2)).until(() -> p.appliedCount() > 200);

            p.env.pgProxy.blackhole();
            Harness.sleep(Duration.ofSeconds(8));       // longer than the relay's lease
            p.env.pgProxy.heal();
            awaitProgress(p, "after the PostgreSQL blackhole");
            p.env.pgProxy.resetAndRefuse();
            Harness.sleep(Duration.ofSeconds(3));       // the fault's duration: connections refused
            p.env.pgProxy.heal();
            awaitProgress(p, "after the PostgreSQL reset");

            if (kind.cdc()) {
                await("CDC relay streaming and ready before the Kafka blackhole").atMost(Duration.ofMinutes(2)).until(p::relayReady);
            }
            p.env.kafkaProxy.blackhole();
            if (kind.cdc()) {
                // Kafka acknowledges nothing while events wait: past twice the lease the CDC relay must not look ready.
                await("CDC relay not ready while Kafka is unreachable").atMost(Duration.ofSeconds(30)).until(() -> !p.relayReady());
            } else {
                Harness.sleep(Duration.ofSeconds(8)); // the fault's duration: longer than the relay's lease
            }
            p.env.kafkaProxy.heal();
            awaitProgress(p, "after the Kafka blackhole");
            if (kind.cdc()) {
                await("CDC relay ready again once Kafka answers").atMost(Duration.ofMinutes(2)).until(p::relayReady);
            }
            p.env.kafkaProxy.reset();
            awaitProgress(p, "after the Kafka reset");

            History.Report report = p.healDrainAndCheck();
            assertClean(report, 500);
        }
    }

    /** Issue 8 scenario 10: a transaction that inserted an outbox row stays open for 20 s; the relay keeps flowing. */
    @Test
    void longOpenTransactionDoesNotStallTheRelay() throws Exception {
        try (Harness p = new Harness("long-tx", 1)) {
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
                    Harness.sleep(Duration.ofNanos(remaining)); // the fault's duration: the transaction open 20 s
                }
                long duringHold = p.appliedCount() - atStart;
                assertThat(duringHold).as("events applied while a transaction stayed open 20 s").isGreaterThan(300);
                tx.commit();
                p.history.committed(held, "held", 1);
                System.out.println("RELIABILITY long-tx: applied while the transaction was open for 20 s: " + duringHold);
            }
            History.Report report = p.healDrainAndCheck();
            assertClean(report, 500);
            assertThat(p.count("SELECT count(*) FROM reliability_effect WHERE event_id = ?", held))
                    .as("the long transaction's event, committed late with a low seq").isEqualTo(1);
        }
    }

    /**
     * The active CDC relay is killed with SIGKILL while it streams under four writers, and started again
     * (a new instance id: it waits for the dead one's lease to expire); twice in the WAL-only mode, where
     * every event after the stored offset must come back from the slot through Debezium's resume (in the
     * default mode the restart drains the table first).
     */
    @ParameterizedTest
    @EnumSource(value = RelayKind.class, names = {"CDC", "CDC_WAL"})
    void cdcRelayKilledMidStreamAndRestarted(RelayKind kind) throws Exception {
        try (Harness p = new Harness("cdc-kill9-" + kind.label(), 1, kind)) {
            p.startWriters(4, Duration.ofMillis(5));
            await().atMost(Duration.ofMinutes(2)).until(() -> p.appliedCount() > 200);
            int kills = kind == RelayKind.CDC_WAL ? 2 : 1;
            for (int i = 0; i < kills; i++) {
                assertThat(p.relay("relay-1").awaitOutput("READY", Duration.ofMinutes(2)))
                        .as("relay streams before kill %d:%n%s", i + 1, p.relay("relay-1").output()).isTrue();
                awaitProgress(p, "before kill " + (i + 1));       // mid-stream: events are flowing right now
                p.kill9Relay("relay-1");
                p.startRelay("relay-1");
                awaitProgress(p, "after kill " + (i + 1) + " and restart");
            }
            History.Report report = p.healDrainAndCheck();
            assertClean(report, 1000);
        }
    }

    /**
     * Two CDC relays on one slot. The active one is frozen with SIGSTOP past its lease (its sockets stay
     * open, as in a long GC pause); the standby takes over (new fencing token, ends the frozen one's
     * walsender) and streams. Then the frozen one resumes: its late offset writes are refused, it steps
     * down to standby, and the stored offset stays the new holder's.
     */
    @Test
    void pausedCdcRelayIsFencedAfterAStandbyTookOver() throws Exception {
        try (Harness p = new Harness("cdc-sigstop", 2, RelayKind.CDC)) {
            p.startWriters(3, Duration.ofMillis(10));
            await().atMost(Duration.ofMinutes(2)).until(() -> p.appliedCount() > 200);
            String active = await().atMost(Duration.ofMinutes(1)).until(p::activeCdcRelay, a -> a != null);
            String standby = active.equals("relay-1") ? "relay-2" : "relay-1";
            JavaProcess stale = p.relay(active);
            assertThat(stale.awaitOutput("READY", Duration.ofMinutes(2))).as(stale.output()).isTrue();
            assertThat(p.relay(standby).awaitOutput("ROLE STANDBY", Duration.ofMinutes(2)))
                    .as(p.relay(standby).output()).isTrue();
            Harness.LeaseState before = p.cdcLease();

            stale.pause();
            long pausedAt = System.nanoTime();
            Harness.LeaseState taken = await("the standby takes the lease").atMost(Duration.ofMinutes(2))
                    .until(p::cdcLease, l -> l.fence() > before.fence());
            assertThat(p.relay(standby).awaitOutput("READY", Duration.ofMinutes(2)))
                    .as("the standby streams:%n%s", p.relay(standby).output()).isTrue();
            awaitProgress(p, "with the standby streaming and the old holder frozen");
            // frozen longer than a whole lease: by its own clock too, its authority ran out while it slept
            Duration frozen = Duration.ofNanos(System.nanoTime() - pausedAt);
            Duration atLeast = Harness.RELAY_LEASE.plusSeconds(2);
            if (frozen.compareTo(atLeast) < 0) {
                Harness.sleep(atLeast.minus(frozen));
            }
            long pausedSeconds = (System.nanoTime() - pausedAt) / 1_000_000_000L;

            int mark = stale.output().length();
            stale.resume();
            awaitSince(stale, mark, "the stale instance notices it lost the lease",
                    out -> out.contains("lost lease") || out.contains("offset write refused"));
            awaitSince(stale, mark, "the stale instance steps down", out -> out.contains("ROLE STANDBY"));
            awaitProgress(p, "after the stale instance woke up");
            assertThat(p.cdcLease()).as("the lease stays the new holder's").isEqualTo(taken);
            Harness.LeaseState offset = p.cdcOffsetWriter();
            assertThat(offset).as("the stored offset was last written by the new holder, under its token").isEqualTo(taken);
            System.out.printf("RELIABILITY cdc-sigstop: %s paused %d s (lease %d s), %s took over with token %d "
                            + "(was %d); the woken instance had %s offset write(s) refused, logged the lost lease: %s, "
                            + "stepped down to standby%n", active, pausedSeconds, Harness.RELAY_LEASE.toSeconds(), standby,
                    taken.fence(), before.fence(), since(stale, mark).lines().filter(l -> l.startsWith("FENCE_REJECTIONS "))
                            .reduce((x, y) -> y).map(l -> l.substring("FENCE_REJECTIONS ".length())).orElse("0"),
                    since(stale, mark).contains("lost lease"));
            History.Report report = p.healDrainAndCheck();
            assertClean(report, 500);
        }
    }

    private static String since(JavaProcess process, int mark) {
        return process.output().substring(mark);
    }

    /** Waits until {@code process} printed, after {@code mark}, what {@code printed} accepts; else fails with that output. */
    private static void awaitSince(JavaProcess process, int mark, String what, Predicate<String> printed) {
        try {
            await(what).atMost(Duration.ofMinutes(2)).until(() -> printed.test(since(process, mark)));
        } catch (ConditionTimeoutException e) {
            throw new AssertionError(what + ": not within 2 minutes; " + process.name() + " printed since:\n"
                    + since(process, mark) + "\nits threads:\n" + process.threadDump(), e);
        }
    }

    private static void awaitProgress(Harness p, String what) throws Exception {
        long before = p.appliedCount();
        await("progress " + what).atMost(Duration.ofMinutes(2)).until(() -> p.appliedCount() > before + 100);
    }
}
