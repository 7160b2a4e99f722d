package dev.outboxkit.benchmarks.internal;

import dev.outboxkit.benchmarks.LatencyProfile;
import dev.outboxkit.benchmarks.Metric;
import dev.outboxkit.benchmarks.MetricCatalog;
import dev.outboxkit.benchmarks.Numbers;
import dev.outboxkit.benchmarks.Sizes;
import dev.outboxkit.benchmarks.load.DrainSeries;
import dev.outboxkit.benchmarks.scenarios.BacklogAfterOutage;
import java.awt.Color;
import java.awt.Graphics2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.imageio.ImageIO;

/**
 * The report's PNG charts: throughput per system, ratios against their targets, latency percentiles per rate,
 * events lost after a crash, and the peers side by side (backlog drain and p99 at 200 events/s).
 */
public final class Charts {

    public static final String THROUGHPUT = "throughput.png";
    public static final String RATIOS = "ratios.png";
    public static final String LATENCY = "latency.png";
    public static final String CRASH = "crash.png";
    public static final String PEERS = "peers.png";
    /** The backlog mode's one chart ({@code --mode backlog}). */
    public static final String BACKLOG = "backlog.png";

    /** Throughput bars: label → key (the 1 KB series uses the key's {@code _1kb} twin). */
    private static final Map<String, Metric> SYSTEMS = systems();
    private static final List<Metric> RATIO_KEYS = List.of(MetricCatalog.POLLER_VS_PG_CEILING,
            MetricCatalog.CDC_VS_STOCK_DEBEZIUM, MetricCatalog.WRITER_TAX_RATIO, MetricCatalog.CONSUMER_DEDUPE_RATIO,
            MetricCatalog.NOTIFY_COMMIT_RATIO, MetricCatalog.POLLER_VS_MODULITH_DRAIN,
            MetricCatalog.MODULITH_WRITER_TAX_RATIO, MetricCatalog.POLLER_VS_NAMASTACK_DRAIN,
            MetricCatalog.NAMASTACK_WRITER_TAX_RATIO);
    private static final List<String> LATENCY_SYSTEMS =
            List.of("kafka", MetricCatalog.DUAL_WRITE, "poller", "cdc", "modulith", "namastack");

    private Charts() {
    }

    /** The peers chart's systems: label → the system key of its latency keys (null: no latency scenario). */
    private static final Map<String, String> PEER_SYSTEMS = peerSystems();
    /** The peers chart's drain key per label. */
    private static final Map<String, Metric> PEER_DRAINS = Map.of(
            "outboxkit polling relay", MetricCatalog.POLLER_DRAIN_EPS,
            "outboxkit CDC relay", MetricCatalog.CDC_DRAIN_EPS,
            "stock Debezium outbox router", MetricCatalog.STOCK_DEBEZIUM_EPS,
            "Spring Modulith", MetricCatalog.MODULITH_DRAIN_EPS,
            "namastack-outbox", MetricCatalog.NAMASTACK_DRAIN_EPS);
    private static final int PEER_RATE = 200;

    private static Map<String, String> peerSystems() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("outboxkit polling relay", "poller");
        m.put("outboxkit CDC relay", "cdc");
        m.put("stock Debezium outbox router", null);
        m.put("Spring Modulith", "modulith");
        m.put("namastack-outbox", "namastack");
        return m;
    }

    private static Map<String, Metric> systems() {
        Map<String, Metric> m = new LinkedHashMap<>();
        m.put("PostgreSQL claim/delete ceiling", MetricCatalog.PG_DRAIN_CEILING_EPS);
        m.put("Kafka producer ceiling", MetricCatalog.KAFKA_PRODUCE_CEILING_EPS);
        m.put("polling relay", MetricCatalog.POLLER_DRAIN_EPS);
        m.put("CDC relay", MetricCatalog.CDC_DRAIN_EPS);
        m.put("stock Debezium", MetricCatalog.STOCK_DEBEZIUM_EPS);
        m.put("Spring Modulith", MetricCatalog.MODULITH_DRAIN_EPS);
        m.put("namastack-outbox", MetricCatalog.NAMASTACK_DRAIN_EPS);
        m.put("consumer (inbox)", MetricCatalog.CONSUMER_EPS);
        return m;
    }

    /**
     * Writes the charts into {@code dir}; returns file name → title, for the Markdown report. A backlog mode's report
     * gets its one chart ({@link #writeBacklog}) and no other.
     */
    public static Map<String, String> write(Report report, Path dir) throws IOException {
        Map<String, String> written = new LinkedHashMap<>();
        if (Sizes.Mode.BACKLOG.label().equals(report.mode())) {
            writeBacklog(dir, dir.resolve(BACKLOG));
            written.put(BACKLOG, "the backlog's drain rate per million events and the relays' resident memory over time");
            return written;
        }
        List<String> payloads = report.payloadSizes().stream().map(Charts::payloadLabel).toList();
        List<BarChart.Group> throughput = new ArrayList<>();
        SYSTEMS.forEach((label, metric) -> {
            List<BarChart.Bar> bars = new ArrayList<>();
            for (int size : report.payloadSizes()) {
                bars.add(bar(payloadLabel(size), report.row(metric.forPayload(size).key())));
            }
            throughput.add(new BarChart.Group(label, bars, metric.target() == null ? null : metric.target().bar()));
        });
        String title = "Throughput, events/s (median, whiskers min–max over " + report.repeatsLabel() + ")";
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
                latency.add(new BarChart.Group(latencyLabel(system) + " at " + rate + "/s", bars, target));
            }
        }
        new BarChart("Latency commit→ack at a fixed offered rate (open loop)", "ms", true)
                .write(latency, percentiles, dir.resolve(LATENCY));
        written.put(LATENCY, "latency percentiles per rate");

        List<BarChart.Group> crash = new ArrayList<>();
        for (String system : MetricCatalog.CRASH_SYSTEMS) {
            crash.add(new BarChart.Group(latencyLabel(system), List.of(
                    bar("lost", report.row(system + "_crash_lost")),
                    bar("duplicates", report.row(system + "_crash_duplicates")),
                    bar("order violations", report.row(system + "_crash_order_violations"))), null));
        }
        new BarChart("After kill -9 of the publishing process and a restart (events)", "events", false)
                .write(crash, List.of("lost", "duplicates", "order violations"), dir.resolve(CRASH));
        written.put(CRASH, "lost and duplicated events after a crash, per system");

        writePeers(report, dir.resolve(PEERS));
        written.put(PEERS, "the peers side by side: backlog drain and p99 at " + PEER_RATE + " events/s");
        return written;
    }

    /**
     * Two panels side by side, each a {@link BarChart} on a log scale (the peers differ by two orders of
     * magnitude): the backlog drain rate of each peer and its commit→ack p99 at {@value #PEER_RATE} events/s
     * offered. A peer without the key (stock Debezium has no latency scenario) shows "not measured".
     */
    static void writePeers(Report report, Path png) throws IOException {
        List<BarChart.Group> drain = new ArrayList<>();
        List<BarChart.Group> p99 = new ArrayList<>();
        PEER_SYSTEMS.forEach((label, system) -> {
            drain.add(new BarChart.Group(label, List.of(bar("drain", report.row(PEER_DRAINS.get(label).key()))), null));
            Row row = system == null ? null : report.row(LatencyProfile.key(system, "p99", PEER_RATE));
            p99.add(new BarChart.Group(label, List.of(bar("p99", row)), null));
        });
        BufferedImage left = new BarChart("Backlog drain, events/s (higher is better; median of "
                + report.repeatsLabel() + ")", "events/s", true).render(drain, List.of("drain"));
        BufferedImage right = new BarChart("commit→ack p99 at " + PEER_RATE + " events/s offered, ms (lower is better)",
                "ms", true).render(p99, List.of("p99"));
        writeSideBySide(left, right, png);
    }

    /**
     * The backlog mode's chart from the relays' series in {@code dir} ({@link BacklogAfterOutage#seriesFile}): the
     * drain rate of each successive million events per relay ({@link BarChart}), beside each relay's resident memory
     * over the drain ({@link LineChart}). A relay without its series (it failed, or was left out with --only) is
     * not drawn.
     */
    static void writeBacklog(Path dir, Path png) throws IOException {
        List<DrainSeries> all = new ArrayList<>();
        for (BacklogAfterOutage.Kind kind : BacklogAfterOutage.Kind.values()) {
            Path file = BacklogAfterOutage.seriesFile(dir, kind.system());
            if (Files.exists(file)) {
                all.add(DrainSeries.read(file));
            }
        }
        Map<String, List<BarChart.Bar>> bySteps = new LinkedHashMap<>();
        List<LineChart.Line> rss = new ArrayList<>();
        long step = 0;
        for (DrainSeries series : all) {
            step = DrainSeries.stepEvents(series.backlog());
            for (DrainSeries.Step s : series.stepRates()) {
                bySteps.computeIfAbsent(Numbers.format(s.to()), k -> new ArrayList<>())
                        .add(BarChart.Bar.of(series.label(), s.eventsPerSecond()));
            }
            rss.add(new LineChart.Line(series.label(), series.samples().stream()
                    .map(p -> new double[] {p.seconds(), p.rssMb()}).toList()));
        }
        List<BarChart.Group> groups = new ArrayList<>();
        bySteps.forEach((to, bars) -> groups.add(new BarChart.Group("to " + to, bars, null)));
        BufferedImage left = new BarChart("Drain rate per " + Numbers.format(step) + " events, events/s", "events/s",
                false).render(groups, all.stream().map(DrainSeries::label).toList());
        BufferedImage right = new LineChart("Resident memory (VmRSS) of the relay's JVM", "s since the relay's start",
                "MB").render(rss);
        writeSideBySide(left, right, png);
    }

    /** Two charts side by side in one PNG. */
    private static void writeSideBySide(BufferedImage left, BufferedImage right, Path png) throws IOException {
        BufferedImage both = new BufferedImage(left.getWidth() + right.getWidth(), Math.max(left.getHeight(),
                right.getHeight()), BufferedImage.TYPE_INT_RGB);
        Graphics2D g = both.createGraphics();
        try {
            g.setColor(Color.WHITE);
            g.fillRect(0, 0, both.getWidth(), both.getHeight());
            g.drawImage(left, 0, 0, null);
            g.drawImage(right, left.getWidth(), 0, null);
        } finally {
            g.dispose();
        }
        if (!ImageIO.write(both, "png", png.toFile())) {
            throw new IOException("no PNG writer in this JDK");
        }
    }

    private static String latencyLabel(String system) {
        return switch (system) {
            case "kafka" -> "Kafka alone";
            case MetricCatalog.DUAL_WRITE -> "dual write";
            case "poller" -> "polling relay";
            case "cdc" -> "CDC relay";
            case "modulith" -> "Spring Modulith";
            case "namastack" -> "namastack-outbox";
            default -> system;
        };
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
