package dev.outboxkit.relay.poller.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxkit.runtime.LeaseTable;
import dev.outboxkit.runtime.Liveness;
import dev.outboxkit.testkit.LocalPostgres;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The liveness lock both relays share (outbox-core's Liveness), against real PostgreSQL. */
@ExtendWith(OutboxTestkitExtension.class)
class LivenessTest {

    private static final Duration LEASE = Duration.ofSeconds(60);
    private final LeaseTable table = new LeaseTable("public");

    @Test
    void aHolderWhoseSessionIsGoneLosesItsLiveLeaseAtOnceAndALiveOneKeepsIt(TestDatabase db) throws Exception {
        try (Liveness a = new Liveness(db.dataSource(), "public", "poll", "a", "test a", Duration.ZERO);
             Liveness b = new Liveness(db.dataSource(), "public", "poll", "b", "test b", Duration.ZERO);
             Liveness otherSchema = new Liveness(db.dataSource(), "other", "poll", "a", "test a elsewhere", Duration.ZERO);
             Connection c = db.dataSource().getConnection()) {
            assertThat(a.hold()).isTrue();
            assertThat(a.hold()).as("held: nothing to do").isTrue();
            assertThat(b.hold()).isTrue();
            assertThat(otherSchema.hold()).as("another scope, another key").isTrue();
            c.setAutoCommit(true);
            table.take(c, List.of("p/1"), "a", LEASE, false);

            assertThat(b.gone(Set.of("a", "b", "never-started"))).as("own id left out; a lives")
                    .containsExactly("never-started");
            assertThat(table.take(c, List.of("p/1"), "b", LEASE, false, b.gone(Set.of("a"))))
                    .as("a live holder (frozen or not) keeps its lease until expiry").isEmpty();

            // a's process dies: the server ends its sessions, the lock goes with them
            db.exec("SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND classid = "
                    + Liveness.LOCK_CLASS + "::oid AND objid = hashtext('public/poll/a')::oid");
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(10))
                    .until(() -> b.gone(Set.of("a")).equals(Set.of("a")));
            List<LeaseTable.Taken> taken = table.take(c, List.of("p/1"), "b", LEASE, false, b.gone(Set.of("a")));
            assertThat(taken).singleElement().satisfies(t -> {
                assertThat(t.previousHolder()).isEqualTo("a");
                assertThat(t.from()).isEqualTo(LeaseTable.From.HOLDER_GONE);
            });
            assertThat(table.holder(c, "p/1").holder()).isEqualTo("b");

            assertThat(a.hold()).as("a notices its broken connection and takes its lock again").isTrue();
            assertThat(b.gone(Set.of("a"))).isEmpty();
            a.close();
            assertThat(b.gone(Set.of("a"))).as("a graceful close releases the lock").containsExactly("a");
        }
    }

    @Test
    void nobodyCountsAsGoneForALeaseAfterTheServerStarted(TestDatabase db) throws Exception {
        try (Liveness watcher = new Liveness(db.dataSource(), "public", "poll", "b", "test b", Duration.ofDays(365));
             Connection c = db.dataSource().getConnection()) {
            assertThat(watcher.hold()).isTrue();
            assertThat(watcher.gone(c, Set.of("never-started"))).as("the server started less than a 'lease' ago").isEmpty();
        }
    }

    /**
     * A standby promoted to primary has none of the old primary's locks but its own, older start time; a server restart
     * looks the same to an instance that reconnects late. Either way the instance's own lock moved to another server run:
     * for a lease from then nobody counts as gone (the others are reconnecting too), and afterwards one that did not come
     * back does.
     */
    @Test
    void nobodyCountsAsGoneForALeaseAfterTheOwnLockMovedToAnotherServer() throws Exception {
        Duration lease = Duration.ofSeconds(3);
        try (LocalPostgres pg = LocalPostgres.builder().build(); TestDatabase db = pg.newDatabase();
             Liveness a = new Liveness(db.dataSource(), "public", "poll", "a", "test a", lease);
             Liveness b = new Liveness(db.dataSource(), "public", "poll", "b", "test b", lease)) {
            assertThat(a.hold()).isTrue();
            assertThat(b.hold()).isTrue();
            pg.stopImmediately();
            pg.start();
            // the server's own guard (started less than a lease ago) is over before b notices the change
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100))
                    .until(() -> db.count("SELECT count(*) FROM (SELECT 1) x WHERE pg_postmaster_start_time() "
                            + "< statement_timestamp() - interval '3.2 seconds'") == 1);
            assertThat(b.hold()).as("b reconnects and takes its lock on the new server run").isTrue();
            long noticed = System.nanoTime();
            assertThat(b.gone(Set.of("a"))).as("a, reconnecting, is not gone yet").isEmpty();
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50))
                    .until(() -> b.gone(Set.of("a")).equals(Set.of("a")));
            assertThat(Duration.ofNanos(System.nanoTime() - noticed)).as("judged only a lease after b's lock moved")
                    .isGreaterThanOrEqualTo(lease.minusMillis(100));
            assertThat(a.hold()).as("a comes back").isTrue();
            assertThat(b.gone(Set.of("a"))).isEmpty();
        }
    }

    @Test
    void aSecondProcessWithTheSameIdDoesNotGetTheLock(TestDatabase db) throws Exception {
        try (Liveness first = new Liveness(db.dataSource(), "public", "poll", "same", "first", Duration.ZERO);
             Liveness second = new Liveness(db.dataSource(), "public", "poll", "same", "second", Duration.ZERO)) {
            assertThat(first.hold()).isTrue();
            assertThat(second.hold()).isFalse();
            first.close();
            assertThat(second.hold()).isTrue();
        }
    }
}
