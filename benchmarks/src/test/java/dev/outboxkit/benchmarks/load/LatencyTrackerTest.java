package dev.outboxkit.benchmarks.load;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class LatencyTrackerTest {

    private final AtomicLong nanos = new AtomicLong();
    private final LatencyTracker tracker = new LatencyTracker(nanos::get);

    @Test
    void commitThenAckRecordsTheDifference() {
        UUID id = UUID.randomUUID();
        nanos.set(1_000_000);
        tracker.committed(id, true);
        nanos.set(4_000_000);
        tracker.acked(id);

        assertThat(tracker.ackedCount()).isEqualTo(1);
        assertThat(tracker.pending()).isZero();
        assertThat(tracker.histogram().getTotalCount()).isEqualTo(1);
        assertThat(tracker.histogram().getMaxValue()).isBetween(2_990L, 3_010L);
    }

    @Test
    void anAckThatOvertakesTheCommitMarkCountsAsZero() {
        UUID id = UUID.randomUUID();
        nanos.set(5_000_000);
        tracker.acked(id);
        nanos.set(6_000_000);
        tracker.committed(id, true);

        assertThat(tracker.ackedCount()).isEqualTo(1);
        assertThat(tracker.histogram().getMaxValue()).isZero();
    }

    @Test
    void duplicatesAreCountedNotMeasuredAndWarmUpIsNotMeasured() {
        UUID measured = UUID.randomUUID();
        UUID warmUp = UUID.randomUUID();
        tracker.committed(warmUp, false);
        tracker.committed(measured, true);
        tracker.acked(warmUp);
        tracker.acked(measured);
        tracker.acked(measured);

        assertThat(tracker.committedCount()).isEqualTo(2);
        assertThat(tracker.ackedCount()).isEqualTo(2);
        assertThat(tracker.duplicates()).isEqualTo(1);
        assertThat(tracker.histogram().getTotalCount()).isEqualTo(1);
    }

    @Test
    void unacknowledgedEventsArePending() {
        tracker.committed(UUID.randomUUID(), true);
        tracker.committed(UUID.randomUUID(), true);
        tracker.acked(UUID.randomUUID()); // an event this run never wrote

        assertThat(tracker.pending()).isEqualTo(2);
        assertThat(tracker.ackedCount()).isZero();
    }

    @Test
    void theWorstMeasuredLatencyIsKeptPerSecondOfCommitTime() {
        commitAndAck(100_000_000L, 103_000_000L, true);      // second 0: 3 ms
        commitAndAck(900_000_000L, 950_000_000L, true);      // second 0: 50 ms, the worst
        commitAndAck(1_200_000_000L, 1_210_000_000L, true);  // second 1: 10 ms
        commitAndAck(2_500_000_000L, 9_000_000_000L, false); // second 2: warm-up, not measured

        assertThat(tracker.worstMillisBySecond()).containsOnlyKeys(0L, 1L);
        assertThat(tracker.worstMillisBySecond().get(0L)).isEqualTo(50.0);
        assertThat(tracker.worstMillisBySecond().get(1L)).isEqualTo(10.0);
        assertThat(tracker.secondOf(2_999_999_999L)).isEqualTo(2);
        assertThat(tracker.secondOf(-1L)).isEqualTo(-1);
    }

    private void commitAndAck(long commitNanos, long ackNanos, boolean measured) {
        UUID id = UUID.randomUUID();
        nanos.set(commitNanos);
        tracker.committed(id, measured);
        nanos.set(ackNanos);
        tracker.acked(id);
    }
}
