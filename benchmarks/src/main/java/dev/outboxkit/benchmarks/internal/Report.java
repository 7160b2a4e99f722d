package dev.outboxkit.benchmarks.internal;

import dev.outboxkit.benchmarks.LatencyProfile;
import dev.outboxkit.benchmarks.Metric;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Everything one benchmark run found, ready to be written as JSON, Markdown and charts.
 *
 * @param repeats           how often every scenario ran
 * @param headlineRepeats   how often the scenarios behind the headline figures ran (at least {@code repeats})
 * @param headlineScenarios the scenarios of this run behind a headline figure
 * @param versions          component → version (JDK, PostgreSQL, Kafka)
 * @param loadAtEnd         load averages when the run ended (the header shows start and end: a busy
 *                          machine explains a noisy number)
 */
public record Report(String mode, Instant date, int repeats, int headlineRepeats, List<String> headlineScenarios,
                     List<Integer> payloadSizes, double durationSeconds, Machine machine, String loadAtEnd,
                     Map<String, String> versions, List<Row> rows, List<LatencyProfile> latencies) {

    /** Keys without a number, and why. */
    public Map<String, String> missing() {
        Map<String, String> m = new LinkedHashMap<>();
        rows.stream().filter(r -> r.stat() == null).forEach(r -> m.put(r.metric().key(), r.missing()));
        return m;
    }

    public Row row(String key) {
        return rows.stream().filter(r -> r.metric().key().equals(key)).findFirst().orElse(null);
    }

    /**
     * {@code 3 repeats per measurement}, or {@code 1 repeat per measurement, 3 for the headline figures} when the
     * scenarios behind them ran more often.
     */
    public String repeatsLabel() {
        String label = repeats + (repeats == 1 ? " repeat" : " repeats") + " per measurement";
        return headlineRepeats == repeats || headlineScenarios.isEmpty() ? label
                : label + ", " + headlineRepeats + " for the headline figures";
    }

    /** How the numbers were taken; the header of the Markdown report and {@code run.method} in the JSON. */
    public static final String METHOD = String.join(" ",
            "Everything runs on this one machine: a durable embedded PostgreSQL 17 (fsync and synchronous_commit on;",
            "only the smoke mode, whose numbers mean nothing, runs it with fsync off: see Versions),",
            "a single in-JVM KRaft Kafka broker and the load, started fresh for this run.",
            "Every figure that matters is a ratio of two measurements taken in the same run (repeat by repeat, then",
            "the median), because absolute numbers on a shared machine move with its load.",
            "Throughput: a pre-filled backlog drained, or a timed window after a warm-up.",
            "Latency: open loop at a fixed offered rate (the generator never waits for the system under test),",
            "commit→ack on one clock: the generator's time when the commit returned vs. the time an in-JVM consumer",
            "saw the record, into an HdrHistogram; warm-up excluded.",
            "Payloads are 200 B of JSON (the full run adds 1 KB). The table gives each key's median over its",
            "repeats and their spread (min–max, n repeats). A headline figure's target is met only when every repeat",
            "lies within " + Math.round(Metric.Target.HEADLINE_STEADINESS * 100) + " % of the median as well; a median",
            "that meets it while a repeat lies farther off is unsteady.");
}
