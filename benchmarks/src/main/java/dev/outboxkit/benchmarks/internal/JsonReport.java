package dev.outboxkit.benchmarks.internal;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.outboxkit.benchmarks.LatencyProfile;
import java.io.IOException;
import java.nio.file.Path;

/**
 * {@code latest.json}: every key at the top level as a number (the median) or {@code null};
 * {@code missing} says why each null is null; {@code metrics} has unit, spread, samples, target
 * and verdict per key; {@code run} and {@code machine} say how and where.
 */
public final class JsonReport {

    private static final ObjectMapper MAPPER = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private JsonReport() {
    }

    public static ObjectNode toJson(Report report) {
        ObjectNode root = MAPPER.createObjectNode();
        for (Row row : report.rows()) {
            if (row.stat() == null) {
                root.putNull(row.metric().key());
            } else {
                root.put(row.metric().key(), row.stat().median());
            }
        }
        ObjectNode missing = root.putObject("missing");
        report.missing().forEach(missing::put);

        ObjectNode run = root.putObject("run");
        run.put("mode", report.mode());
        run.put("date", report.date().toString());
        run.put("repeats", report.repeats());
        run.put("headline_repeats", report.headlineRepeats());
        ArrayNode headline = run.putArray("headline_scenarios");
        report.headlineScenarios().forEach(headline::add);
        ArrayNode payloads = run.putArray("payload_bytes");
        report.payloadSizes().forEach(payloads::add);
        run.put("duration_s", Math.round(report.durationSeconds()));
        run.put("method", Report.METHOD);

        ObjectNode machine = root.putObject("machine");
        machine.put("cores", report.machine().cores());
        machine.put("memory_gib", Math.round(report.machine().memoryGib() * 10) / 10.0);
        machine.put("cpu", report.machine().cpu());
        machine.put("os", report.machine().os());
        machine.put("load_average_start", report.machine().loadAverage());
        machine.put("load_average_end", report.loadAtEnd());
        report.versions().forEach(machine::put);

        ObjectNode metrics = root.putObject("metrics");
        for (Row row : report.rows()) {
            ObjectNode m = metrics.putObject(row.metric().key());
            m.put("unit", row.metric().unit());
            m.put("meaning", row.metric().meaning());
            if (row.stat() != null) {
                m.put("median", row.stat().median());
                m.put("min", row.stat().min());
                m.put("max", row.stat().max());
                ArrayNode samples = m.putArray("samples");
                row.stat().samples().forEach(samples::add);
            }
            if (row.metric().target() != null) {
                m.put("target", row.metric().target().toString());
            }
            m.put("verdict", row.verdict().name().toLowerCase(java.util.Locale.ROOT));
        }

        ArrayNode latency = root.putArray("latency");
        for (LatencyProfile p : report.latencies()) {
            ObjectNode l = latency.addObject();
            l.put("system", p.system());
            l.put("rate", p.rate());
            l.put("achieved_rate", p.achievedRate());
            l.put("count", p.count());
            l.put("lost", p.lost());
            l.put("p50_ms", p.p50());
            l.put("p90_ms", p.p90());
            l.put("p99_ms", p.p99());
            l.put("p999_ms", p.p999());
            l.put("max_ms", p.max());
        }
        return root;
    }

    public static void write(Report report, Path file) throws IOException {
        MAPPER.writeValue(file.toFile(), toJson(report));
    }
}
