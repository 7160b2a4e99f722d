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

    /**
     * The passes that bridge Debezium's start (issue 30): a seq keeps the snapshot of the last pass that handled it,
     * so a copy is judged against the pass that saw its row.
     */
    @Test
    void passesMergeWithEachSeqUnderTheSnapshotOfThePassThatHandledIt() {
        StartupDrain.Result first = new StartupDrain.Result(new long[] {3, 5, 9}, new long[] {1_000, 1_000, 1_000}, 1_000, 2, 1,
                new long[] {5});
        StartupDrain.Result second = new StartupDrain.Result(new long[] {5, 12}, new long[] {2_000, 2_000}, 2_000, 2, 0,
                new long[0]);
        StartupDrain.Result both = first.then(second);
        assertThat(both.drainedSeqs()).containsExactly(3, 5, 9, 12);
        assertThat(both.snapshotLsn()).isEqualTo(2_000);
        assertThat(both.published()).isEqualTo(4);
        assertThat(both.parkedSeqs()).isEmpty(); // 5 was put back and published by the second pass
        assertThat(both.drained(3, 999L)).isTrue();
        assertThat(both.drained(3, 1_500L)).as("written after the pass that saw seq 3: not its copy").isFalse();
        assertThat(both.drained(5, 1_500L)).as("the put-back row the second pass published").isTrue();
        assertThat(both.drained(12, 1_999L)).isTrue();
        assertThat(both.drained(12, 2_000L)).isFalse();
    }

    /** A later pass skips what an earlier one published (its delete may not be committed), but not a parked seq. */
    @Test
    void aLaterPassSkipsPublishedRowsButPublishesARowPutBackUnderAParkedSeq() {
        StartupDrain.Result first = new StartupDrain.Result(new long[] {3, 5, 9}, new long[] {1_000, 1_000, 1_000}, 1_000, 2, 1,
                new long[] {5});
        assertThat(first.publishedBefore(3)).isTrue();
        assertThat(first.publishedBefore(9)).isTrue();
        assertThat(first.publishedBefore(5)).as("parked: deleted with its parking, so seen again it was put back").isFalse();
        assertThat(first.publishedBefore(4)).isFalse();
    }
}
