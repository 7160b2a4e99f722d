package dev.outboxkit.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** {@link FailoverGap}'s arithmetic on a hand-made topic: which record is the survivor's first, which events count. */
class FailoverGapTest {

    private static FailoverGap.Published record(String aggregate, long createdMs, long publishedMs) {
        return new FailoverGap.Published(UUID.randomUUID(), aggregate, publishedMs, Instant.ofEpochMilli(createdMs));
    }

    @Test
    void firstRecordOfTheStoppedWorkAfterItExitedAndWorstDelayAroundIt() {
        // signal at 10,000, process gone at 10,050; the stopped instance held "a", the survivor "b"
        FailoverGap.Stop stop = new FailoverGap.Stop(10_000, 10_050, Set.of("a"));
        FailoverGap.Published inFlight = record("a", 9_900, 10_040);           // the stopped one's, before it exited
        FailoverGap.Published republished = new FailoverGap.Published(inFlight.id(), "a", 10_900,
                inFlight.createdAt());                                          // again, by the survivor
        List<FailoverGap.Published> topic = List.of(
                record("a", 8_000, 8_010),                                      // long before: not around the stop
                inFlight,
                record("b", 10_100, 10_110),                                    // the survivor's own work
                record("a", 10_200, 10_800),                                    // waited for the takeover: 600 ms
                republished);
        FailoverGap.Gap gap = FailoverGap.measure(topic, stop);
        assertThat(gap.firstRecordMs()).isEqualTo(800);                         // 10,800 - 10,000
        // the in-flight event's first delivery (140 ms) counts, not its republication; 600 ms is the worst
        assertThat(gap.worstDelayMs()).isEqualTo(600);
    }

    @Test
    void noSurvivorIsAnError() {
        FailoverGap.Stop stop = new FailoverGap.Stop(10_000, 10_050, Set.of("a"));
        assertThatThrownBy(() -> FailoverGap.measure(List.of(record("b", 10_100, 10_110)), stop))
                .hasMessageContaining("no survivor took it over");
    }
}
