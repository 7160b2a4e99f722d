package dev.outboxkit.benchmarks.load;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The relay latency path without a relay: the open-loop driver writes outbox rows through
 * {@link OutboxInsertTarget}, and a stand-in "relay" (a claim/delete loop) acknowledges every id
 * it takes out of the table. Every committed row is acknowledged exactly once; nothing is lost.
 */
@ExtendWith(OutboxTestkitExtension.class)
class OutboxInsertTargetTest {

    @Test
    void everyCommittedRowIsSeenAndAcknowledgedOnce(TestDatabase db) throws Exception {
        LatencyTracker tracker = new LatencyTracker();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong taken = new AtomicLong();
        Thread relay = new Thread(() -> drain(db, tracker, stop, taken), "stand-in-relay");
        relay.start();
        try {
            OpenLoopDriver.Result result = OpenLoopDriver.run(200, Duration.ofMillis(200), Duration.ofSeconds(1),
                    Duration.ofSeconds(60), 2, OutboxInsertTarget.factory(db, "public", 200), tracker);

            assertThat(result.committed()).isEqualTo(240);
            assertThat(result.acked()).isEqualTo(240);
            assertThat(result.lost()).isZero();
            assertThat(result.duplicates()).isZero();
            assertThat(result.micros().getTotalCount()).isEqualTo(200);
        } finally {
            stop.set(true);
            relay.join(60_000);
        }
        assertThat(taken.get()).isEqualTo(240);
        assertThat(Backlog.count(db, "public")).isZero();
    }

    private static void drain(TestDatabase db, LatencyTracker tracker, AtomicBoolean stop, AtomicLong taken) {
        try (Connection c = db.connect(); PreparedStatement claim = c.prepareStatement(
                "DELETE FROM outbox_event WHERE seq IN (SELECT seq FROM outbox_event ORDER BY seq"
                        + " FOR UPDATE SKIP LOCKED LIMIT 100) RETURNING id")) {
            while (!stop.get()) {
                int n = 0;
                try (ResultSet rs = claim.executeQuery()) {
                    while (rs.next()) {
                        tracker.acked(rs.getObject(1, UUID.class));
                        n++;
                    }
                }
                taken.addAndGet(n);
                if (n == 0) {
                    Thread.sleep(2);
                }
            }
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
