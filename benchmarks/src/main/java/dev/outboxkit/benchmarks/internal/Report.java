package dev.outboxkit.benchmarks.internal;

import dev.outboxkit.benchmarks.LatencyProfile;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Everything one benchmark run found, ready to be written as JSON, Markdown and charts.
 *
 * @param versions     component → version (JDK, PostgreSQL, Kafka)
 * @param loadAtEnd    load averages when the run ended (the header shows start and end: a busy
 *                     machine explains a noisy number)
 */
public record Report(String mode, Instant date, int repeats, List<Integer> payloadSizes, double durationSeconds,
                     Machine machine, String loadAtEnd, Map<String, String> versions, List<Row> rows,
                     List<LatencyProfile> latencies) {

    /** Keys without a number, and why. */
    public Map<String, String> missing() {
        Map<String, String> m = new LinkedHashMap<>();
        rows.stream().filter(r -> r.stat() == null).forEach(r -> m.put(r.metric().key(), r.missing()));
        return m;
    }

    public Row row(String key) {
        return rows.stream().filter(r -> r.metric().key().equals(key)).findFirst().orElse(null);
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
            "Payloads are 200 B of JSON (the full run adds 1 KB). Each measurement is repeated; the table gives the",
            "median and the spread (min–max).");
}
