package dev.outboxkit.benchmarks;

import dev.outboxkit.benchmarks.internal.Charts;
import dev.outboxkit.benchmarks.internal.JsonReport;
import dev.outboxkit.benchmarks.internal.Machine;
import dev.outboxkit.benchmarks.internal.MarkdownReport;
import dev.outboxkit.benchmarks.internal.Report;
import dev.outboxkit.benchmarks.internal.Row;
import dev.outboxkit.benchmarks.internal.Stat;
import dev.outboxkit.testkit.EmbeddedKafka;
import dev.outboxkit.testkit.OutboxTestkit;
import dev.outboxkit.testkit.TestKafka;
import dev.outboxkit.testkit.TestPostgres;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.function.ToDoubleFunction;
import org.apache.kafka.common.utils.AppInfoParser;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs scenarios on a fresh benchmark stack and writes {@code latest.json}, {@code latest.md}
 * and the PNG charts. Repeats are interleaved (repeat 1 of every scenario, then repeat 2 of every
 * scenario that has one, ...: {@link #schedule}), so the two sides of a ratio are measured minutes,
 * not a whole run, apart; ratios are taken per repeat, then the median. The scenarios behind the
 * headline figures run {@link Sizes#headlineRepeats()} times, the rest {@link Sizes#repeats()}.
 * A failing scenario costs its own keys only (null, with the reason).
 */
public final class BenchmarkRunner {

    private static final Logger log = LoggerFactory.getLogger(BenchmarkRunner.class);

    private BenchmarkRunner() {
    }

    /** Where the outputs went. */
    public record Outputs(Path json, Path markdown, List<Path> charts) {
    }

    public static Outputs run(Sizes sizes, List<Scenario> scenarios, Path outDir) throws Exception {
        return run(sizes, scenarios, outDir, durable(sizes.mode()));
    }

    /**
     * Whether the run's PostgreSQL syncs its commits to disk: yes when the numbers are meant (quick, full), no
     * for the smoke, which proves the harness and its checks and whose numbers mean nothing; there a commit's
     * fsync (about 12 ms on CI's disk, longer under load) only made the commit-bound scenarios, the Spring
     * Modulith peer's above all, slow.
     */
    static boolean durable(Sizes.Mode mode) {
        return mode != Sizes.Mode.SMOKE;
    }

    static Outputs run(Sizes sizes, List<Scenario> scenarios, Path outDir, boolean durable) throws Exception {
        List<Metric> declared = declaredMetrics(sizes, scenarios);
        List<Run> schedule = schedule(sizes, scenarios);
        Path work = Files.createDirectories(outDir.resolve("tmp"));
        Machine machine = Machine.describe();
        Instant date = Instant.now();
        long started = System.nanoTime();

        Results results;
        Map<String, String> versions = new LinkedHashMap<>();
        versions.put("JDK", System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"));
        log.info("benchmark stack starting: {} embedded PostgreSQL 17 and an in-JVM Kafka broker",
                durable ? "durable" : "non-durable (fsync off, smoke only)");
        try (TestPostgres postgres = OutboxTestkit.startEmbeddedPostgres(0, durable); TestKafka kafka = new EmbeddedKafka(1)) {
            versions.put("PostgreSQL", postgresVersion(postgres));
            versions.put("Kafka", AppInfoParser.getVersion() + " (one KRaft broker in the benchmark JVM)");
            results = measure(schedule,
                    run -> new BenchContext(postgres, kafka, sizes, run.payloadBytes(), run.repeat(), work));
        }
        String loadAtEnd = Machine.loadAverageNow();
        List<Row> rows = rows(declared, results);
        List<LatencyProfile> latency = new ArrayList<>();
        results.latencies.values().forEach(list -> latency.add(median(list)));
        List<String> headline = scenarios.stream().filter(Scenario::headline).map(Scenario::name).toList();
        Report report = new Report(sizes.mode().label(), date, sizes.repeats(), sizes.headlineRepeats(), headline,
                sizes.payloadSizes(), (System.nanoTime() - started) / 1e9, machine, loadAtEnd, versions, rows, latency);

        Files.createDirectories(outDir);
        Path json = outDir.resolve("latest.json");
        Path md = outDir.resolve("latest.md");
        JsonReport.write(report, json);
        Map<String, String> charts = Charts.write(report, outDir);
        MarkdownReport.write(report, charts, md);
        log.info("wrote {}, {} and {} charts in {} s", json, md, charts.size(), Math.round(report.durationSeconds()));
        return new Outputs(json, md, charts.keySet().stream().map(outDir::resolve).toList());
    }

    /** One run of one scenario: at one payload size, in one repeat. */
    record Run(Scenario scenario, int payloadBytes, int repeat) {
    }

    /**
     * The runs in the order they happen: round {@code r} runs every scenario (at each of its payload sizes) that has
     * an {@code r}-th repeat ({@link Sizes#repeatsOf}), in the order of {@code scenarios}. In quick mode round 1 is
     * every scenario and rounds 2 and 3 are the headline ones only, so their repeats interleave.
     */
    static List<Run> schedule(Sizes sizes, List<Scenario> scenarios) {
        int rounds = scenarios.stream().mapToInt(sizes::repeatsOf).max().orElse(0);
        List<Run> runs = new ArrayList<>();
        for (int repeat = 1; repeat <= rounds; repeat++) {
            for (Scenario scenario : scenarios) {
                if (sizes.repeatsOf(scenario) >= repeat) {
                    for (int payload : payloadSizes(sizes, scenario)) {
                        runs.add(new Run(scenario, payload, repeat));
                    }
                }
            }
        }
        return List.copyOf(runs);
    }

    private static List<Integer> payloadSizes(Sizes sizes, Scenario scenario) {
        return scenario.payloadSensitive() ? sizes.payloadSizes() : List.of(Sizes.DEFAULT_PAYLOAD_BYTES);
    }

    /** What the runs measured: values by key and repeat, why a key is missing, latency profiles by system and rate. */
    static final class Results {
        final Map<String, Map<Integer, Double>> samples = new HashMap<>();
        final Map<String, String> failures = new HashMap<>();
        final Map<String, List<LatencyProfile>> latencies = new LinkedHashMap<>();
    }

    /** Runs {@code schedule} in its order, each run with the context {@code contexts} makes for it. */
    static Results measure(List<Run> schedule, Function<Run, BenchContext> contexts) {
        Results results = new Results();
        for (Run run : schedule) {
            runOnce(run.scenario(), contexts.apply(run), results);
        }
        return results;
    }

    private static void runOnce(Scenario scenario, BenchContext context, Results results) {
        String suffix = Metric.payloadSuffix(context.payloadBytes());
        Set<String> keys = new LinkedHashSet<>();
        scenario.metrics().forEach(m -> keys.add(m.key() + suffix));
        String what = scenario.name() + " (repeat " + context.repeat() + ", " + context.payloadBytes() + " B payloads)";
        log.info("running {}", what);
        long start = System.nanoTime();
        try {
            Measurements m = scenario.run(context);
            for (var value : m.values().entrySet()) {
                String key = value.getKey() + suffix;
                if (!keys.contains(key)) {
                    throw new IllegalStateException(scenario.name() + " produced the undeclared key " + key
                            + "; list it in metrics()");
                }
            }
            m.values().forEach((key, v) -> results.samples.computeIfAbsent(key + suffix, k -> new TreeMap<>())
                    .put(context.repeat(), v));
            for (String key : keys) {
                if (!m.values().containsKey(key.substring(0, key.length() - suffix.length()))) {
                    results.failures.putIfAbsent(key, what + " did not produce it");
                }
            }
            m.latencies().forEach(p -> results.latencies.computeIfAbsent(p.system() + "@" + p.rate(),
                    k -> new ArrayList<>()).add(p));
            log.info("{} done in {} s: {}", what, Math.round((System.nanoTime() - start) / 1e9), m.values());
        } catch (Exception e) {
            log.warn("{} failed after {} s", what, Math.round((System.nanoTime() - start) / 1e9), e);
            keys.forEach(key -> results.failures.putIfAbsent(key, what + " failed: " + e));
        } finally {
            context.cleanUp();
        }
    }

    /**
     * The issue's keys first, then every scenario's own keys, each once. The backlog mode reports its own scenarios'
     * keys only: it measures none of the issue's.
     */
    static List<Metric> declaredMetrics(Sizes sizes, List<Scenario> scenarios) {
        Map<String, Metric> byKey = new LinkedHashMap<>();
        if (sizes.mode() != Sizes.Mode.BACKLOG) {
            MetricCatalog.required().forEach(m -> byKey.put(m.key(), m));
        }
        Map<String, String> owner = new HashMap<>();
        for (Scenario scenario : scenarios) {
            for (int payload : payloadSizes(sizes, scenario)) {
                for (Metric metric : scenario.metrics()) {
                    Metric m = metric.forPayload(payload);
                    String previous = owner.putIfAbsent(m.key(), scenario.name());
                    if (previous != null) {
                        throw new IllegalArgumentException("scenarios " + previous + " and " + scenario.name()
                                + " both produce " + m.key() + "; each key has one owner");
                    }
                    byKey.putIfAbsent(m.key(), m);
                }
            }
        }
        return List.copyOf(byKey.values());
    }

    /** One row per metric: median and spread over every repeat that measured it, or why none did. */
    static List<Row> rows(List<Metric> metrics, Results results) {
        List<Row> rows = new ArrayList<>();
        for (Metric metric : metrics) {
            Map<Integer, Double> byRepeat = results.samples.get(metric.key());
            if (byRepeat == null) {
                byRepeat = derive(metric.key(), results.samples);
            }
            if (byRepeat != null && !byRepeat.isEmpty()) {
                rows.add(new Row(metric, Stat.of(new ArrayList<>(byRepeat.values())), null));
            } else {
                rows.add(new Row(metric, null, reason(metric.key(), results.failures, results.samples)));
            }
        }
        return rows;
    }

    /**
     * A catalog ratio from its two sides, in each repeat that measured both; null when the key is no ratio. It has as
     * many samples as its sides share repeats: one for most ratios, {@link Sizes#headlineRepeats()} for a headline one.
     */
    private static Map<Integer, Double> derive(String key, Map<String, Map<Integer, Double>> samples) {
        for (MetricCatalog.Ratio ratio : MetricCatalog.RATIOS) {
            if (ratio.metric().key().equals(key)) {
                Map<Integer, Double> num = samples.getOrDefault(ratio.numerator(), Map.of());
                Map<Integer, Double> den = samples.getOrDefault(ratio.denominator(), Map.of());
                Map<Integer, Double> out = new TreeMap<>();
                num.forEach((repeat, n) -> {
                    Double d = den.get(repeat);
                    if (d != null && d > 0) {
                        out.put(repeat, n / d);
                    }
                });
                return out;
            }
        }
        return null;
    }

    private static String reason(String key, Map<String, String> failures, Map<String, Map<Integer, Double>> samples) {
        if (failures.containsKey(key)) {
            return failures.get(key);
        }
        if (MetricCatalog.PENDING.containsKey(key)) {
            return MetricCatalog.PENDING.get(key);
        }
        for (MetricCatalog.Ratio ratio : MetricCatalog.RATIOS) {
            if (ratio.metric().key().equals(key)) {
                List<String> why = new ArrayList<>();
                for (String side : List.of(ratio.numerator(), ratio.denominator())) {
                    if (!samples.containsKey(side)) {
                        why.add(side + " is missing (" + reason(side, failures, samples) + ")");
                    }
                }
                return "derived from " + ratio.numerator() + " ÷ " + ratio.denominator() + " of the same repeat; "
                        + (why.isEmpty() ? "no repeat measured both" : String.join("; ", why));
            }
        }
        return "no scenario in this run produces it (see ScenarioCatalog, or --only)";
    }

    /** Per-field median of the repeats' profiles of one system at one rate. */
    private static LatencyProfile median(List<LatencyProfile> list) {
        LatencyProfile first = list.get(0);
        return new LatencyProfile(first.system(), first.rate(), med(list, LatencyProfile::achievedRate),
                Math.round(med(list, LatencyProfile::count)), Math.round(med(list, LatencyProfile::lost)),
                med(list, LatencyProfile::p50), med(list, LatencyProfile::p90), med(list, LatencyProfile::p99),
                med(list, LatencyProfile::p999), med(list, LatencyProfile::max));
    }

    private static double med(List<LatencyProfile> list, ToDoubleFunction<LatencyProfile> field) {
        return Stat.of(list.stream().map(p -> field.applyAsDouble(p)).toList()).median();
    }

    private static String postgresVersion(TestPostgres postgres) throws Exception {
        String version;
        String fsync;
        try (Connection c = postgres.connectAdmin("postgres"); Statement s = c.createStatement()) {
            try (ResultSet rs = s.executeQuery("SHOW server_version")) {
                rs.next();
                version = rs.getString(1);
            }
            try (ResultSet rs = s.executeQuery("SHOW fsync")) {
                rs.next();
                fsync = rs.getString(1);
            }
        }
        return version + " (embedded, fsync " + fsync + ")";
    }
}
