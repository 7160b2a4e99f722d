package dev.outboxkit.relay.cdc.internal;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * The stream skips the WAL copies of rows the start-up drain handled, but not a row that
 * {@code outbox dead-letters retry} put back under the seq of a row the drain parked: that insert is written
 * after the drain's snapshot.
 */
class DrainedCopiesTest {

    private final StartupDrain.Result drain = new StartupDrain.Result(new long[] {3, 5, 9}, 1_000, 2, 1);

    @Test
    void aChangeWrittenBeforeTheSnapshotWithADrainedSeqIsACopy() {
        assertThat(drain.drained(3, 999L)).isTrue();
        assertThat(drain.drained(9, 10L)).isTrue();
    }

    @Test
    void aRowPutBackUnderADrainedSeqAfterTheSnapshotIsNotACopy() {
        assertThat(drain.drained(5, 1_000L)).isFalse();
        assertThat(drain.drained(5, 5_000L)).isFalse();
    }

    @Test
    void otherSeqsAreNeverCopiesAndAnUnknownPositionFallsBackToTheSeq() {
        assertThat(drain.drained(4, 10L)).isFalse();
        assertThat(drain.drained(3, null)).isTrue();
    }
}
