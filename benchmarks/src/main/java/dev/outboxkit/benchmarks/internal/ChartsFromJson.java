package dev.outboxkit.benchmarks.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.outboxkit.benchmarks.LatencyProfile;
import dev.outboxkit.benchmarks.Metric;
import dev.outboxkit.benchmarks.MetricCatalog;
import dev.outboxkit.benchmarks.Sizes;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * Draws the report's charts again from an existing {@code latest.json}, without a run: {@code benchmarks/run.sh
 * --charts-only}, or {@code java … ChartsFromJson [DIR]} (default {@code benchmarks/results}). The PNGs are written
 * next to the JSON. Targets come from {@link MetricCatalog} as it is now, the numbers from the JSON as they were.
 */
public final class ChartsFromJson {

    private ChartsFromJson() {
    }

    public static void main(String[] args) {
        Path dir = Path.of(args.length > 0 ? args[0] : "benchmarks/results");
        try {
            Map<String, String> charts = Charts.write(read(dir.resolve("latest.json")), dir);
            charts.keySet().forEach(name -> System.out.println("wrote " + dir.resolve(name)));
        } catch (IOException | RuntimeException e) {
            System.err.println("benchmarks: cannot draw the charts from " + dir.resolve("latest.json") + ": " + e);
            System.exit(1);
        }
    }

    /** The report a run wrote as {@code latest.json} ({@link JsonReport}), as far as the charts need it. */
    public static Report read(Path json) throws IOException {
        if (!Files.isRegularFile(json)) {
            throw new IOException("no such file");
        }
        JsonNode root = new ObjectMapper().readTree(json.toFile());
        Map<String, Metric> catalog = MetricCatalog.required().stream()
                .collect(Collectors.toMap(Metric::key, Function.identity()));
        List<Row> rows = new ArrayList<>();
        root.path("metrics").fields().forEachRemaining(entry -> {
            JsonNode m = entry.getValue();
            Metric metric = catalog.getOrDefault(entry.getKey(),
                    Metric.of(entry.getKey(), m.path("unit").asText(""), m.path("meaning").asText("")));
            if (m.has("median")) {
                List<Double> samples = new ArrayList<>();
                m.path("samples").forEach(v -> samples.add(v.asDouble()));
                if (samples.isEmpty()) {
                    samples.add(m.path("median").asDouble());
                }
                Stat stat = new Stat(m.path("median").asDouble(), m.path("min").asDouble(m.path("median").asDouble()),
                        m.path("max").asDouble(m.path("median").asDouble()), List.copyOf(samples));
                rows.add(new Row(metric, stat, null));
            } else {
                rows.add(new Row(metric, null, root.path("missing").path(entry.getKey()).asText("not measured")));
            }
        });
        List<LatencyProfile> latencies = new ArrayList<>();
        root.path("latency").forEach(l -> latencies.add(new LatencyProfile(l.path("system").asText(),
                l.path("rate").asInt(), l.path("achieved_rate").asDouble(), l.path("count").asLong(),
                l.path("lost").asLong(), l.path("p50_ms").asDouble(), l.path("p90_ms").asDouble(),
                l.path("p99_ms").asDouble(), l.path("p999_ms").asDouble(), l.path("max_ms").asDouble())));
        JsonNode run = root.path("run");
        JsonNode machine = root.path("machine");
        List<Integer> payloads = new ArrayList<>();
        run.path("payload_bytes").forEach(p -> payloads.add(p.asInt()));
        Map<String, String> versions = new LinkedHashMap<>();
        for (String component : List.of("JDK", "PostgreSQL", "Kafka")) {
            versions.put(component, machine.path(component).asText(""));
        }
        int repeats = Math.max(1, run.path("repeats").asInt(1));
        List<String> headline = new ArrayList<>();
        run.path("headline_scenarios").forEach(n -> headline.add(n.asText()));
        return new Report(run.path("mode").asText(""), Instant.parse(run.path("date").asText(Instant.EPOCH.toString())),
                repeats, Math.max(repeats, run.path("headline_repeats").asInt(repeats)), List.copyOf(headline),
                payloads.isEmpty() ? List.of(Sizes.DEFAULT_PAYLOAD_BYTES) : List.copyOf(payloads),
                run.path("duration_s").asDouble(), new Machine(machine.path("cores").asInt(),
                        machine.path("memory_gib").asDouble(), machine.path("cpu").asText(""), machine.path("os").asText(""),
                        machine.path("JDK").asText(""), machine.path("load_average_start").asText("")),
                machine.path("load_average_end").asText(""), versions, List.copyOf(rows), List.copyOf(latencies));
    }
}
