package dev.outboxkit.benchmarks.internal;

import dev.outboxkit.benchmarks.LatencyProfile;
import dev.outboxkit.benchmarks.Metric;
import dev.outboxkit.benchmarks.MetricCatalog;
import dev.outboxkit.benchmarks.Sizes;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The report's PNG charts: throughput per system, ratios against their targets, latency percentiles per rate. */
public final class Charts {

    public static final String THROUGHPUT = "throughput.png";
    public static final String RATIOS = "ratios.png";
    public static final String LATENCY = "latency.png";
    public static final String CRASH = "crash.png";

    /** Throughput bars: label → key (the 1 KB series uses the key's {@code _1kb} twin). */
    private static final Map<String, Metric> SYSTEMS = systems();
    private static final List<Metric> RATIO_KEYS = List.of(MetricCatalog.POLLER_VS_PG_CEILING,
            MetricCatalog.CDC_VS_STOCK_DEBEZIUM, MetricCatalog.WRITER_TAX_RATIO, MetricCatalog.CONSUMER_DEDUPE_RATIO,
            MetricCatalog.NOTIFY_COMMIT_RATIO, MetricCatalog.POLLER_VS_MODULITH_DRAIN,
            MetricCatalog.MODULITH_WRITER_TAX_RATIO);
    private static final List<String> LATENCY_SYSTEMS =
            List.of("kafka", MetricCatalog.DUAL_WRITE, "poller", "cdc", "modulith");

    private Charts() {
    }

    private static Map<String, Metric> systems() {
        Map<String, Metric> m = new LinkedHashMap<>();
        m.put("PostgreSQL claim/delete ceiling", MetricCatalog.PG_DRAIN_CEILING_EPS);
        m.put("Kafka producer ceiling", MetricCatalog.KAFKA_PRODUCE_CEILING_EPS);
        m.put("polling relay", MetricCatalog.POLLER_DRAIN_EPS);
        m.put("CDC relay", MetricCatalog.CDC_DRAIN_EPS);
        m.put("stock Debezium", MetricCatalog.STOCK_DEBEZIUM_EPS);
        m.put("Spring Modulith", MetricCatalog.MODULITH_DRAIN_EPS);
        m.put("consumer (inbox)", MetricCatalog.CONSUMER_EPS);
        return m;
    }

    /** Writes the charts into {@code dir}; returns file name → title, for the Markdown report. */
    public static Map<String, String> write(Report report, Path dir) throws IOException {
        Map<String, String> written = new LinkedHashMap<>();
        List<String> payloads = report.payloadSizes().stream().map(Charts::payloadLabel).toList();
        List<BarChart.Group> throughput = new ArrayList<>();
        SYSTEMS.forEach((label, metric) -> {
            List<BarChart.Bar> bars = new ArrayList<>();
            for (int size : report.payloadSizes()) {
                bars.add(bar(payloadLabel(size), report.row(metric.forPayload(size).key())));
            }
            throughput.add(new BarChart.Group(label, bars, metric.target() == null ? null : metric.target().bar()));
        });
        String title = "Throughput, events/s (median, whiskers min–max over " + report.repeats() + " repeat"
                + (report.repeats() == 1 ? ")" : "s)");
        new BarChart(title, "events/s", false).write(throughput, payloads, dir.resolve(THROUGHPUT));
        written.put(THROUGHPUT, "throughput per system");

        List<BarChart.Group> ratios = new ArrayList<>();
        for (Metric metric : RATIO_KEYS) {
            ratios.add(new BarChart.Group(metric.key(), List.of(bar("ratio", report.row(metric.key()))),
                    metric.target() == null ? null : metric.target().bar()));
        }
        new BarChart("Same-run ratios against their targets", "ratio", false).write(ratios, List.of("ratio"),
                dir.resolve(RATIOS));
        written.put(RATIOS, "same-run ratios");

        List<String> percentiles = List.of("p50", "p90", "p99", "p99.9");
        List<BarChart.Group> latency = new ArrayList<>();
        for (int rate : Sizes.LATENCY_RATES) {
            for (String system : LATENCY_SYSTEMS) {
                LatencyProfile p = report.latencies().stream()
                        .filter(l -> l.system().equals(system) && l.rate() == rate).findFirst().orElse(null);
                List<BarChart.Bar> bars = p == null ? List.of(BarChart.Bar.of("p50", null)) : List.of(
                        BarChart.Bar.of("p50", p.p50()), BarChart.Bar.of("p90", p.p90()),
                        BarChart.Bar.of("p99", p.p99()), BarChart.Bar.of("p99.9", p.p999()));
                Row p99 = report.row(LatencyProfile.key(system, "p99", rate));
                Double target = p99 == null || p99.metric().target() == null ? null : p99.metric().target().bar();
                latency.add(new BarChart.Group(system + " at " + rate + "/s", bars, target));
            }
        }
        new BarChart("Latency commit→ack at a fixed offered rate (open loop)", "ms", true)
                .write(latency, percentiles, dir.resolve(LATENCY));
        written.put(LATENCY, "latency percentiles per rate");

        List<BarChart.Group> crash = new ArrayList<>();
        for (String system : MetricCatalog.CRASH_SYSTEMS) {
            crash.add(new BarChart.Group(MetricCatalog.systemLabel(system).replaceFirst("^the ", ""), List.of(
                    bar("lost", report.row(system + "_crash_lost")),
                    bar("duplicates", report.row(system + "_crash_duplicates")),
                    bar("order violations", report.row(system + "_crash_order_violations"))), null));
        }
        new BarChart("After kill -9 of the publishing process and a restart (events)", "events", false)
                .write(crash, List.of("lost", "duplicates", "order violations"), dir.resolve(CRASH));
        written.put(CRASH, "lost and duplicated events after a crash, per system");
        return written;
    }

    private static BarChart.Bar bar(String series, Row row) {
        if (row == null || row.stat() == null) {
            return BarChart.Bar.of(series, null);
        }
        Stat s = row.stat();
        return new BarChart.Bar(series, s.median(), s.min(), s.max());
    }

    private static String payloadLabel(int bytes) {
        return bytes % 1024 == 0 ? bytes / 1024 + " KB payload" : bytes + " B payload";
    }
}
