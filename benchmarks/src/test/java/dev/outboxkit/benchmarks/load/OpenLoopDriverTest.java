package dev.outboxkit.benchmarks.load;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class OpenLoopDriverTest {

    /**
     * A system under test that acknowledges every event 300 ms after its commit: a closed-loop
     * generator would need 300 ms per event (90 s here); the open-loop one offers all of them on
     * schedule and measures the 300 ms.
     */
    @Test
    void aSlowSystemDoesNotSlowTheGeneratorAndItsDelayIsMeasured() throws Exception {
        ScheduledExecutorService slowSystem = Executors.newScheduledThreadPool(2);
        LatencyTracker tracker = new LatencyTracker();
        try {
            long start = System.nanoTime();
            OpenLoopDriver.Result result = OpenLoopDriver.run(200, Duration.ofMillis(500), Duration.ofSeconds(1),
                    Duration.ofSeconds(60), 2, () -> (n, commit) -> {
                        UUID id = UUID.randomUUID();
                        commit.done(id);
                        slowSystem.schedule(() -> tracker.acked(id), 300, TimeUnit.MILLISECONDS);
                    }, tracker);
            double seconds = (System.nanoTime() - start) / 1e9;

            assertThat(result.scheduled()).isEqualTo(300);
            assertThat(result.committed()).isEqualTo(300);
            assertThat(result.acked()).isEqualTo(300);
            assertThat(result.lost()).isZero();
            assertThat(result.micros().getTotalCount()).as("warm-up events are not measured").isEqualTo(200);
            assertThat(result.micros().getValueAtPercentile(50)).isGreaterThanOrEqualTo(299_000);
            assertThat(seconds).as("the generator did not wait for acknowledgements").isLessThan(60);
            assertThat(result.profile("fake").p50()).isGreaterThanOrEqualTo(299);
        } finally {
            slowSystem.shutdownNow();
        }
    }

    @Test
    void eventsNeverAcknowledgedAreReportedLost() throws Exception {
        LatencyTracker tracker = new LatencyTracker();
        OpenLoopDriver.Result result = OpenLoopDriver.run(100, Duration.ZERO, Duration.ofMillis(200),
                Duration.ofMillis(200), 1, () -> (n, commit) -> commit.done(UUID.randomUUID()), tracker);

        assertThat(result.committed()).isEqualTo(20);
        assertThat(result.lost()).isEqualTo(20);
        assertThat(result.micros().getTotalCount()).isZero();
    }
}
