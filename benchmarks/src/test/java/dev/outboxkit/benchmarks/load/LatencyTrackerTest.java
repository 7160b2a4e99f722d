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
}
