package dev.outboxkit.benchmarks.load;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DrainSeriesTest {

    private static DrainSeries.Sample at(double seconds, long published) {
        return new DrainSeries.Sample(seconds, published, 0, 0, 0, 0, 100);
    }

    @Test
    void aStepIsAMillionFromTwoMillionEventsOnAndATenthBelow() {
        assertThat(DrainSeries.stepEvents(10_000_000)).isEqualTo(1_000_000);
        assertThat(DrainSeries.stepEvents(2_000_000)).isEqualTo(1_000_000);
        assertThat(DrainSeries.stepEvents(200_000)).isEqualTo(20_000);
        assertThat(DrainSeries.stepEvents(5)).isEqualTo(1);
    }

    @Test
    void eachMillionIsTimedBetweenTheInterpolatedInstantsItsEdgesWereCrossed() {
        // 3 million events: the first million at 10,000/s (100 s), the second at 5,000/s, the third at 2,500/s
        DrainSeries series = new DrainSeries("poller", "polling relay", 3_000_000, List.of(
                at(0, 0), at(50, 500_000), at(100, 1_000_000), at(200, 1_500_000), at(300, 2_000_000),
                at(500, 2_500_000), at(700, 3_000_000)));

        List<DrainSeries.Step> steps = DrainSeries.stepRates(series.samples(), series.backlog(), 1_000_000);

        assertThat(steps).extracting(DrainSeries.Step::to).containsExactly(1_000_000L, 2_000_000L, 3_000_000L);
        assertThat(steps.get(0).eventsPerSecond()).isCloseTo(10_000, within(0.1));
        assertThat(steps.get(1).eventsPerSecond()).isCloseTo(5_000, within(1e-6));
        assertThat(steps.get(2).eventsPerSecond()).isCloseTo(2_500, within(1e-6));
        assertThat(steps.get(2).eventsPerSecond() / steps.get(0).eventsPerSecond()).isCloseTo(0.25, within(1e-6));
    }

    @Test
    void aCrossingBetweenTwoSamplesIsInterpolatedAndTheLastStepMayBeShorter() {
        // samples every 10 s at a steady 30,000 events/s; the edges (1 M, 2 M) fall between samples; 2.5 M in all
        List<DrainSeries.Sample> samples = new java.util.ArrayList<>();
        for (int s = 0; s <= 80; s += 10) {
            samples.add(at(s, s * 30_000L));
        }
        samples.add(at(2_500_000 / 30_000.0, 2_500_000)); // the last sample, at the empty table

        List<DrainSeries.Step> steps = DrainSeries.stepRates(samples, 2_500_000, 1_000_000);

        assertThat(steps).hasSize(3);
        assertThat(steps.get(0).endSeconds()).isCloseTo(1_000_000 / 30_000.0, within(1e-6));
        assertThat(steps).allSatisfy(s -> assertThat(s.eventsPerSecond()).isCloseTo(30_000, within(0.1)));
        assertThat(steps.get(2).to() - steps.get(2).from()).isEqualTo(500_000);
    }

    @Test
    void theRelaysStartBeforeItsFirstRecordIsInNoStep() {
        // 5 s of start-up with nothing published, the first record at 5 s, then 100,000 events/s
        DrainSeries series = new DrainSeries("poller", "polling relay", 2_000_000, List.of(
                at(0, 0), at(4, 0), at(5, 1), at(15, 1_000_001), at(25, 2_000_000)));

        assertThat(series.firstRecordSeconds()).isEqualTo(5.0);
        assertThat(series.stepRates()).extracting(DrainSeries.Step::startSeconds).first().isEqualTo(5.0);
        assertThat(series.stepRates().get(0).eventsPerSecond()).isCloseTo(100_000, within(1.0));
    }

    @Test
    void aStepTheSamplesHaveNotReachedIsLeftOut() {
        List<DrainSeries.Step> steps = DrainSeries.stepRates(List.of(at(0, 0), at(5, 1_500_000)), 3_000_000, 1_000_000);

        assertThat(steps).extracting(DrainSeries.Step::to).containsExactly(1_000_000L);
    }

    @Test
    void rowsLeftAreTheBacklogLessWhatKafkaHoldsAndTheSeriesReadsBackAsWritten(@TempDir Path dir) throws Exception {
        DrainSeries series = new DrainSeries("cdc", "CDC relay", 1_000, List.of(
                new DrainSeries.Sample(0, 0, 1_000, 0, 8192 * 10, 0, 90.5),
                new DrainSeries.Sample(0.5, 400, 600, 400, 8192 * 10, 1, 120.25),
                new DrainSeries.Sample(1.0, 1_003, 0, 1_000, 8192 * 12, 1, 130)));
        assertThat(series.rowsLeft(series.samples().get(1))).isEqualTo(600);
        assertThat(series.rowsLeft(series.samples().get(2))).isZero(); // duplicates never make it negative

        Path json = dir.resolve("backlog-cdc.json");
        series.write(json);

        assertThat(DrainSeries.read(json)).isEqualTo(series);
    }
}
