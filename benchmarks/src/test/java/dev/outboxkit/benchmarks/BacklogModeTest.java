package dev.outboxkit.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The backlog mode's scenarios run in that mode only, once each, and its report lists their keys only. */
class BacklogModeTest {

    @Test
    void onlyTheBacklogModeSchedulesTheBacklogScenariosAndItSchedulesNothingElse() {
        Sizes backlog = Sizes.of(Sizes.Mode.BACKLOG);
        assertThat(BenchmarkRunner.schedule(backlog, ScenarioCatalog.forMode(Sizes.Mode.BACKLOG)))
                .extracting(run -> run.scenario().name() + "#" + run.repeat() + "@" + run.payloadBytes())
                .containsExactly("backlog_poller#1@200", "backlog_cdc#1@200");
        for (Sizes.Mode mode : List.of(Sizes.Mode.SMOKE, Sizes.Mode.QUICK, Sizes.Mode.FULL)) {
            assertThat(BenchmarkRunner.schedule(Sizes.of(mode), ScenarioCatalog.forMode(mode)))
                    .as("the %s mode's runs", mode.label())
                    .isNotEmpty()
                    .noneMatch(run -> run.scenario().name().startsWith("backlog_"));
        }
        assertThat(ScenarioCatalog.all()).noneMatch(s -> s.name().startsWith("backlog_"));
    }

    @Test
    void theBacklogModeDrainsTenMillionEventsOfTwoHundredBytesUnlessToldOtherwise() {
        Sizes backlog = Sizes.of(Sizes.Mode.parse("backlog"));
        assertThat(backlog.backlogEvents()).isEqualTo(10_000_000);
        assertThat(backlog.payloadSizes()).containsExactly(200);
        assertThat(backlog.withBacklogEvents(200_000).backlogEvents()).isEqualTo(200_000);
        assertThat(ScenarioCatalog.backlog()).noneMatch(Scenario::headline);
    }

    @Test
    void theBacklogReportListsTheBacklogKeysAndNoneOfTheIssuesKeys() {
        List<Metric> declared = BenchmarkRunner.declaredMetrics(Sizes.of(Sizes.Mode.BACKLOG), ScenarioCatalog.backlog());
        assertThat(declared).extracting(Metric::key)
                .contains("backlog_poller_drain_s", "backlog_poller_first_million_eps", "backlog_poller_last_vs_first_million",
                        "backlog_cdc_rss_peak_mb", "backlog_cdc_dead_tup_max", "backlog_cdc_autovacuums")
                .allMatch(key -> key.startsWith("backlog_"));
    }
}
