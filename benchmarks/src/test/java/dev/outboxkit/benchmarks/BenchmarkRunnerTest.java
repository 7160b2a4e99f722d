package dev.outboxkit.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.outboxkit.benchmarks.internal.JsonReport;
import dev.outboxkit.benchmarks.internal.Machine;
import dev.outboxkit.benchmarks.internal.MarkdownReport;
import dev.outboxkit.benchmarks.internal.Report;
import dev.outboxkit.benchmarks.internal.Row;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The runner's schedule and its statistics, with scenarios that return numbers they are given (no database, no
 * broker): which scenario runs in which round, and how a headline ratio's repeats make its median and verdict.
 */
class BenchmarkRunnerTest {

    /** A scenario that measures {@code values.apply(repeat)}. */
    private record Fake(String name, List<Metric> metrics, IntFunction<Map<String, Double>> values) implements Scenario {

        static Fake of(Metric metric, double... byRepeat) {
            return new Fake(metric.key() + "_scenario", List.of(metric),
                    repeat -> Map.of(metric.key(), byRepeat[(repeat - 1) % byRepeat.length]));
        }

        @Override
        public Measurements run(BenchContext context) {
            Measurements m = new Measurements();
            values.apply(context.repeat()).forEach(m::put);
            return m;
        }
    }

    @Test
    void quickRunsEveryScenarioOnceThenTheHeadlineOnesTwiceMoreInterleaved() {
        Fake pg = Fake.of(MetricCatalog.PG_DRAIN_CEILING_EPS, 100);
        Fake kafka = Fake.of(MetricCatalog.KAFKA_PRODUCE_CEILING_EPS, 1000);
        Fake poller = Fake.of(MetricCatalog.POLLER_DRAIN_EPS, 85);
        Fake rss = Fake.of(MetricCatalog.RELAY_RSS_MB, 120);
        List<Scenario> scenarios = List.of(pg, kafka, poller, rss);

        assertThat(scenarios).filteredOn(Scenario::headline).containsExactly(pg, poller, rss);
        assertThat(order(Sizes.of(Sizes.Mode.QUICK), scenarios)).containsExactly(
                "pg_drain_ceiling_eps_scenario#1", "kafka_produce_ceiling_eps_scenario#1", "poller_drain_eps_scenario#1",
                "relay_rss_mb_scenario#1",
                "pg_drain_ceiling_eps_scenario#2", "poller_drain_eps_scenario#2", "relay_rss_mb_scenario#2",
                "pg_drain_ceiling_eps_scenario#3", "poller_drain_eps_scenario#3", "relay_rss_mb_scenario#3");
        assertThat(order(Sizes.of(Sizes.Mode.FULL), scenarios)).hasSize(12).endsWith(
                "pg_drain_ceiling_eps_scenario#3", "kafka_produce_ceiling_eps_scenario#3", "poller_drain_eps_scenario#3",
                "relay_rss_mb_scenario#3");
        assertThat(order(Sizes.of(Sizes.Mode.SMOKE), scenarios)).hasSize(4);
        assertThat(order(Sizes.of(Sizes.Mode.QUICK).withRepeats(2), scenarios)).hasSize(8);
    }

    @Test
    void theHeadlineScenariosAreTheOnesBehindTheHeadlineFigures() {
        assertThat(ScenarioCatalog.all()).filteredOn(Scenario::headline).extracting(Scenario::name).containsExactly(
                "pg_drain_ceiling", "poller_drain", "cdc_drain", "debezium_ceiling_drain", "dual_write_latency_floor",
                "poller_latency", "cdc_latency", "relay_rss");
    }

    @Test
    void aHeadlineRatioIsTheMedianOfItsRepeatsAndPassesOnlyWhenEveryRepeatIsWithinTenPercent(@TempDir Path work) {
        Sizes quick = Sizes.of(Sizes.Mode.QUICK);
        // poller ÷ pg per repeat: 0.95, 0.90, 1.05; median 0.95 meets ≥ 0.9, but 1.05 is 10.5 % above it
        List<Scenario> unsteady = List.of(Fake.of(MetricCatalog.PG_DRAIN_CEILING_EPS, 100),
                Fake.of(MetricCatalog.KAFKA_PRODUCE_CEILING_EPS, 1000), Fake.of(MetricCatalog.POLLER_DRAIN_EPS, 95, 90, 105));
        Row ratio = row(quick, unsteady, work, MetricCatalog.POLLER_VS_PG_CEILING.key());
        assertThat(ratio.stat().samples()).containsExactly(0.95, 0.90, 1.05);
        assertThat(ratio.stat().median()).isEqualTo(0.95);
        assertThat(ratio.verdict()).isEqualTo(Row.Verdict.UNSTEADY);
        assertThat(row(quick, unsteady, work, MetricCatalog.KAFKA_PRODUCE_CEILING_EPS.key()).stat().count()).isEqualTo(1);

        // 0.94, 0.90, 0.96: every repeat within 10 % of the median 0.94
        List<Scenario> steady = List.of(Fake.of(MetricCatalog.PG_DRAIN_CEILING_EPS, 100),
                Fake.of(MetricCatalog.POLLER_DRAIN_EPS, 94, 90, 96));
        assertThat(row(quick, steady, work, MetricCatalog.POLLER_VS_PG_CEILING.key()).verdict())
                .isEqualTo(Row.Verdict.PASS);
        // a median below the bar fails, steady or not
        List<Scenario> below = List.of(Fake.of(MetricCatalog.PG_DRAIN_CEILING_EPS, 100),
                Fake.of(MetricCatalog.POLLER_DRAIN_EPS, 70, 50, 79));
        assertThat(row(quick, below, work, MetricCatalog.POLLER_VS_PG_CEILING.key()).verdict())
                .isEqualTo(Row.Verdict.FAIL);
    }

    @Test
    void theReportsSayHowOftenEachPartRanAndWhichHeadlineFigureIsUnsteady(@TempDir Path work) {
        Sizes quick = Sizes.of(Sizes.Mode.QUICK);
        List<Scenario> scenarios = List.of(Fake.of(MetricCatalog.PG_DRAIN_CEILING_EPS, 100),
                Fake.of(MetricCatalog.KAFKA_PRODUCE_CEILING_EPS, 1000), Fake.of(MetricCatalog.POLLER_DRAIN_EPS, 95, 90, 105));
        List<Row> rows = BenchmarkRunner.rows(BenchmarkRunner.declaredMetrics(quick, scenarios),
                BenchmarkRunner.measure(BenchmarkRunner.schedule(quick, scenarios), run -> context(quick, run, work)));
        Report report = new Report("quick", Instant.EPOCH, 1, 3, List.of("pg_drain_ceiling", "poller_drain"),
                List.of(Sizes.DEFAULT_PAYLOAD_BYTES), 1, new Machine(2, 4, "cpu", "os", "jdk", "0.1 0.1 0.1"),
                "0.1 0.1 0.1", Map.of(), rows, List.of());

        JsonNode json = JsonReport.toJson(report);
        assertThat(json.path("run").path("headline_repeats").asInt()).isEqualTo(3);
        assertThat(json.path("metrics").path("poller_vs_pg_ceiling").path("verdict").asText()).isEqualTo("unsteady");
        assertThat(json.path("metrics").path("poller_vs_pg_ceiling").path("samples")).hasSize(3);
        assertThat(MarkdownReport.render(report, Map.of())).contains(
                "1 repeat per measurement, 3 for the headline figures (scenarios `pg_drain_ceiling`, `poller_drain`)",
                "| `poller_vs_pg_ceiling` | 0.950 | ratio | 0.900 – 1.05 (n=3) | ≥ 0.900, each repeat within 10 % |"
                        + " **unsteady**");
    }

    private static List<String> order(Sizes sizes, List<Scenario> scenarios) {
        return BenchmarkRunner.schedule(sizes, scenarios).stream()
                .map(run -> run.scenario().name() + "#" + run.repeat()).toList();
    }

    private static Row row(Sizes sizes, List<Scenario> scenarios, Path work, String key) {
        BenchmarkRunner.Results results = BenchmarkRunner.measure(BenchmarkRunner.schedule(sizes, scenarios),
                run -> context(sizes, run, work));
        return BenchmarkRunner.rows(BenchmarkRunner.declaredMetrics(sizes, scenarios), results).stream()
                .filter(r -> r.metric().key().equals(key)).findFirst().orElseThrow();
    }

    /** No stack: a fake scenario never asks for PostgreSQL or Kafka. */
    private static BenchContext context(Sizes sizes, BenchmarkRunner.Run run, Path work) {
        return new BenchContext(null, null, sizes, run.payloadBytes(), run.repeat(), work);
    }
}
