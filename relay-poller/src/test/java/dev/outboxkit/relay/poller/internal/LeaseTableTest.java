package dev.outboxkit.relay.poller.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxkit.runtime.LeaseTable;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The lease table both relays share, against real PostgreSQL. */
@ExtendWith(OutboxTestkitExtension.class)
class LeaseTableTest {

    private final LeaseTable table = new LeaseTable("public");
    private static final Duration LEASE = Duration.ofSeconds(30);

    @Test
    void takeRenewReleaseAndTheTwoFenceChecks(TestDatabase db) throws Exception {
        try (Connection c = db.dataSource().getConnection()) {
            c.setAutoCommit(true);
            List<LeaseTable.Taken> a = table.take(c, List.of("t/1", "t/2"), "a", LEASE, false);
            assertThat(a).extracting(LeaseTable.Taken::key).containsExactlyInAnyOrder("t/1", "t/2");
            assertThat(a).extracting(LeaseTable.Taken::previousHolder).containsOnlyNulls();
            long f1 = a.stream().filter(t -> t.key().equals("t/1")).findFirst().orElseThrow().fence();

            assertThat(table.take(c, List.of("t/1"), "b", LEASE, false)).as("held and live: not taken").isEmpty();
            assertThat(table.take(c, List.of("t/1"), "a", LEASE, true)).as("reclaimed by its own holder, new fence")
                    .singleElement().satisfies(t -> assertThat(t.fence()).isGreaterThan(f1))
                    .satisfies(t -> assertThat(t.previousHolder()).isEqualTo("a"));
            long f1b = table.currentFence(c, "t/1");
            assertThat(table.renew(c, Map.of("t/1", f1), "a", LEASE)).as("the old token renews nothing").isEmpty();
            assertThat(table.renew(c, Map.of("t/1", f1b), "a", LEASE)).containsExactly("t/1");
            assertThat(table.countHeld(c, Map.of("t/1", f1b), "a")).isEqualTo(1);
            assertThat(table.countHeld(c, Map.of("t/1", f1b), "b")).isZero();

            try (Statement s = c.createStatement()) {
                s.execute("UPDATE outbox_relay_lease SET expires_at = now() - interval '1 second' WHERE lease_key = 't/1'");
            }
            assertThat(table.countHeld(c, Map.of("t/1", f1b), "a")).as("expired: no longer held").isZero();
            assertThat(table.currentFence(c, "t/1")).as("but not superseded until taken").isEqualTo(f1b);
            assertThat(table.liveKeys(c, "t/")).isEqualTo(Map.of("t/2", "a"));
            LeaseTable.Taken b = table.take(c, List.of("t/1"), "b", LEASE, false).get(0);
            assertThat(b.previousHolder()).isEqualTo("a");
            assertThat(b.from()).isEqualTo(LeaseTable.From.EXPIRED);
            assertThat(table.holder(c, "t/1")).isEqualTo(new LeaseTable.Holder("b", b.fence(), true));

            assertThat(table.release(c, Map.of("t/1", f1b), "a")).as("a stale holder releases nothing").isZero();
            assertThat(table.releaseAll(c, "a", "t/")).isEqualTo(1);
            assertThat(table.holder(c, "t/2")).isNull();
            assertThat(table.currentFence(c, "t/2")).isEqualTo(-1);
        }
    }

    @Test
    void aKeyAnotherTransactionLocksIsSkippedNotWaitedFor(TestDatabase db) throws Exception {
        try (Connection holder = db.dataSource().getConnection(); Connection taker = db.dataSource().getConnection()) {
            holder.setAutoCommit(true);
            long fence = table.take(holder, List.of("s/1"), "a", LEASE, false).get(0).fence();
            try (Statement s = holder.createStatement()) {
                s.execute("UPDATE outbox_relay_lease SET expires_at = now() - interval '1 second' WHERE lease_key = 's/1'");
            }
            holder.setAutoCommit(false);
            try (Statement s = holder.createStatement()) { // what a poller claim does while it works on the partition
                s.execute("SELECT 1 FROM outbox_relay_lease WHERE lease_key = 's/1' FOR KEY SHARE");
            }
            taker.setAutoCommit(false);
            assertThat(table.take(taker, List.of("s/1"), "b", LEASE, false)).isEmpty();
            taker.commit();
            holder.commit();
            assertThat(table.currentFence(taker, "s/1")).isEqualTo(fence);
        }
    }
}
