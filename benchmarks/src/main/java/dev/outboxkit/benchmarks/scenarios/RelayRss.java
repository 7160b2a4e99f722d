package dev.outboxkit.benchmarks.scenarios;

import dev.outboxkit.benchmarks.BenchContext;
import dev.outboxkit.benchmarks.Measurements;
import dev.outboxkit.benchmarks.Metric;
import dev.outboxkit.benchmarks.MetricCatalog;
import dev.outboxkit.benchmarks.Scenario;
import dev.outboxkit.benchmarks.load.Await;
import dev.outboxkit.benchmarks.load.Backlog;
import dev.outboxkit.benchmarks.load.NativeMemory;
import dev.outboxkit.benchmarks.load.PollerRelayMain;
import dev.outboxkit.benchmarks.load.ProcessMemory;
import dev.outboxkit.benchmarks.load.Relays;
import dev.outboxkit.core.Identifiers;
import dev.outboxkit.testkit.JavaProcess;
import dev.outboxkit.testkit.TestDatabase;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code relay_rss_mb}: peak resident memory ({@code VmHWM}) of the polling relay running alone in
 * its own JVM ({@link PollerRelayMain} through the testkit's {@link JavaProcess} with the sidecar's JVM
 * options, default relay settings) while it drains the backlog, read from
 * {@code /proc/<pid>/status} just before the child is stopped; beside it the same for {@link #LEAN_JVM_OPTIONS}.
 *
 * <p>Each of the two runs twice, in the order A B B A (A the sidecar's options in even repeats, the lean ones in
 * odd), each child on a fresh backlog, so a drifting load weighs on both alike. A child's drain rate is the rows left
 * when its first batch is committed ÷ the seconds from then to the empty table: its JVM start, the relay's
 * connections, leases and first producer metadata are behind it, its JIT warm-up is not (C1 only is part of what the
 * lean options change). A backlog of one batch or less (the smoke run's) is timed from the relay's {@code start()}. Then one more child of each runs with
 * {@code -XX:NativeMemoryTracking=summary}, which costs memory of its own (its tracking overhead and a header per
 * malloc), so it is kept out of the headline figures: at the end of its drain, {@code jcmd VM.native_memory summary}
 * tells what the JVM has committed, by category, beside that child's own RSS.
 */
public final class RelayRss implements Scenario {

    private static final Logger log = LoggerFactory.getLogger(RelayRss.class);

    /**
     * The JVM options {@code bin/outbox} runs the sidecar with (its {@code default_java_opts}; a test
     * keeps the two equal). {@link JavaProcess} adds {@code -Xmx512m}.
     */
    public static final List<String> SIDECAR_JVM_OPTIONS = List.of("-XX:+UseSerialGC", "-Xms32m");

    /**
     * The sidecar's options and what trims its memory: the C1 compiler only (no C2 and its compile arenas), a heap
     * that gives back what it does not use, smaller thread stacks and code cache. Measured, not the default: less
     * memory for less drain throughput, an opt-in for memory-tight pods (outbox-cli/README.md).
     */
    public static final List<String> LEAN_JVM_OPTIONS = Stream.concat(SIDECAR_JVM_OPTIONS.stream(),
            Stream.of("-XX:TieredStopAtLevel=1", "-XX:MinHeapFreeRatio=10", "-XX:MaxHeapFreeRatio=20", "-Xss512k",
                    "-XX:ReservedCodeCacheSize=32m")).toList();

    private static final String TABLE = Identifiers.qualified(BacklogDrain.SCHEMA, "outbox_event");
    private static final String NMT = "-XX:NativeMemoryTracking=summary";

    public static final Metric RSS_LEAN = Metric.of("relay_rss_lean_mb", "MB",
            "peak resident memory (VmHWM) of the same relay child with the lean JVM options (RelayRss.LEAN_JVM_OPTIONS), the higher of two");
    public static final Metric DRAIN = Metric.of("relay_drain_eps", "events/s",
            "drain rate of the relay child with the sidecar's JVM options, rows left after its first batch ÷ seconds from then to the empty table, mean of two");
    public static final Metric DRAIN_LEAN = Metric.of("relay_lean_drain_eps", "events/s",
            "the same with the lean JVM options, mean of two, same repeat");
    public static final Metric LEAN_DRAIN_RATIO = Metric.of("relay_lean_drain_ratio", "ratio",
            "relay_lean_drain_eps ÷ relay_drain_eps, same repeat (A B B A)");

    /** The NMT categories reported as keys of their own, by key; the rest is {@code _other_mb}. */
    private static final Map<String, List<String>> CATEGORIES = Map.of(
            "heap", List.of("Java Heap"),
            "class", List.of("Class", "Metaspace"),
            "thread", List.of("Thread"),
            "code", List.of("Code"),
            "gc", List.of("GC"),
            "compiler", List.of("Compiler"),
            "symbol", List.of("Symbol"),
            "cds", List.of("Shared class space"));
    private static final List<String> CATEGORY_ORDER = List.of("heap", "class", "thread", "code", "gc", "compiler",
            "symbol", "cds");

    private enum Variant {
        SIDECAR("relay_rss_nmt", "the sidecar's JVM options", SIDECAR_JVM_OPTIONS),
        LEAN("relay_rss_lean_nmt", "the lean JVM options", LEAN_JVM_OPTIONS);

        final String prefix;
        final String label;
        final List<String> options;

        Variant(String prefix, String label, List<String> options) {
            this.prefix = prefix;
            this.label = label;
            this.options = options;
        }
    }

    @Override
    public String name() {
        return "relay_rss";
    }

    @Override
    public List<Metric> metrics() {
        List<Metric> metrics = new ArrayList<>(List.of(MetricCatalog.RELAY_RSS_MB, RSS_LEAN, DRAIN, DRAIN_LEAN,
                LEAN_DRAIN_RATIO));
        for (Variant v : Variant.values()) {
            metrics.addAll(nmtMetrics(v));
        }
        return metrics;
    }

    private static List<Metric> nmtMetrics(Variant v) {
        String child = "the relay child with " + v.label + " and " + NMT + ", at the end of its drain";
        List<Metric> metrics = new ArrayList<>();
        metrics.add(Metric.of(v.prefix + "_total_mb", "MB", "NMT's total committed memory of " + child));
        for (String key : CATEGORY_ORDER) {
            metrics.add(Metric.of(v.prefix + "_" + key + "_mb", "MB", "NMT committed " + String.join(" + ", CATEGORIES.get(key))
                    + " of " + child));
        }
        metrics.add(Metric.of(v.prefix + "_other_mb", "MB", "NMT committed, every other category, of " + child));
        metrics.add(Metric.of(v.prefix + "_compiler_peak_mb", "MB",
                "the peak of NMT's Compiler malloc and arenas (the JIT compilers' scratch memory, freed since) of " + child));
        metrics.add(Metric.of(v.prefix + "_vmrss_mb", "MB", "resident memory (VmRSS) of " + child + ", as jcmd ran"));
        metrics.add(Metric.of(v.prefix + "_rss_anon_mb", "MB", "the anonymous part (RssAnon: heap, stacks, malloc arenas) of that VmRSS"));
        metrics.add(Metric.of(v.prefix + "_rss_file_mb", "MB", "the file-backed part (RssFile: libjvm.so, the JDK's lib/modules, the CDS archive) of that VmRSS"));
        metrics.add(Metric.of(v.prefix + "_vmhwm_mb", "MB", "peak resident memory (VmHWM) of " + child
                + " (NMT's own overhead included)"));
        return metrics;
    }

    @Override
    public Measurements run(BenchContext context) throws Exception {
        Variant a = context.repeat() % 2 == 0 ? Variant.SIDECAR : Variant.LEAN;
        Variant b = a == Variant.SIDECAR ? Variant.LEAN : Variant.SIDECAR;
        List<Drain> aDrains = new ArrayList<>();
        List<Drain> bDrains = new ArrayList<>();
        aDrains.add(drain(context, a, false));
        bDrains.add(drain(context, b, false));
        bDrains.add(drain(context, b, false));
        aDrains.add(drain(context, a, false));
        List<Drain> sidecar = a == Variant.SIDECAR ? aDrains : bDrains;
        List<Drain> lean = a == Variant.SIDECAR ? bDrains : aDrains;
        double rate = meanRate(sidecar);
        double leanRate = meanRate(lean);
        Measurements m = new Measurements()
                .put(MetricCatalog.RELAY_RSS_MB.key(), maxPeak(sidecar))
                .put(RSS_LEAN.key(), maxPeak(lean))
                .put(DRAIN.key(), rate)
                .put(DRAIN_LEAN.key(), leanRate)
                .put(LEAN_DRAIN_RATIO.key(), leanRate / rate);
        for (Variant v : Variant.values()) {
            Drain d = drain(context, v, true);
            NativeMemory.Summary nmt = d.nmt();
            m.put(v.prefix + "_total_mb", nmt.totalCommittedMb());
            double named = 0;
            for (String key : CATEGORY_ORDER) {
                double mb = nmt.committedMb(CATEGORIES.get(key).toArray(String[]::new));
                named += mb;
                m.put(v.prefix + "_" + key + "_mb", mb);
            }
            m.put(v.prefix + "_other_mb", nmt.totalCommittedMb() - named);
            m.put(v.prefix + "_compiler_peak_mb", nmt.peakMb("Compiler"));
            m.put(v.prefix + "_vmrss_mb", d.rssMb());
            m.put(v.prefix + "_rss_anon_mb", d.rssAnonMb());
            m.put(v.prefix + "_rss_file_mb", d.rssFileMb());
            m.put(v.prefix + "_vmhwm_mb", d.peakMb());
        }
        return m;
    }

    /** One child's drain: its rate, its peak and current RSS at the empty table, and its NMT summary if tracked. */
    private record Drain(double eventsPerSecond, double peakMb, double rssMb, double rssAnonMb, double rssFileMb,
                         NativeMemory.Summary nmt) {
    }

    private static Drain drain(BenchContext context, Variant variant, boolean nmt) throws Exception {
        TestDatabase db = context.newDatabase();
        // The breakdown children drain a third: memory peaks within the first batches (one claimed batch held twice
        // while its commit runs), and the scenario's time is mostly fills and drains.
        int backlog = nmt ? BacklogDrain.warmupBacklog(context.sizes().backlogEvents()) : context.sizes().backlogEvents();
        String topic = context.uniqueTopic("relay-rss");
        context.kafka().createTopic(topic, BacklogDrain.PARTITIONS);
        Backlog.fill(db, BacklogDrain.SCHEMA, backlog, context.payloadBytes());
        Path startFile = Files.createTempFile(context.workDir(), "relay-rss-start", ".flag");
        Files.delete(startFile);
        List<String> options = new ArrayList<>(variant.options);
        if (nmt) {
            options.add(NMT);
        }
        try (JavaProcess child = JavaProcess.start("bench-poller-rss-" + variant.name().toLowerCase(Locale.ROOT),
                PollerRelayMain.class,
                List.of("jdbcUrl=" + db.jdbcUrl(), "user=" + db.user(), "password=" + db.password(),
                        "bootstrap=" + context.kafka().bootstrapServers(), "topic=" + topic, "startFile=" + startFile),
                options, Map.of());
             Connection c = db.connect()) {
            if (!child.awaitOutput(PollerRelayMain.WAITING, Duration.ofMinutes(2))) {
                throw new IllegalStateException("the relay child (" + options + ") did not get ready within 2 minutes:\n"
                        + child.output());
            }
            long firstSeq = queryLong(c, "SELECT min(seq) FROM " + TABLE);
            Supplier<String> failure = () -> child.isAlive() ? null : "the child relay exited:\n" + child.output();
            Duration timeout = BacklogDrain.drainTimeout(backlog).plusMinutes(1);
            long start = System.nanoTime();
            Files.createFile(startFile);
            // the clock starts when the first batch is committed (its first row is gone): the relay's connections,
            // leases and the producer's first metadata are then behind it; the rows counted are those left
            Await.until("child relay's first batch", () -> queryLong(c, "SELECT count(*) FROM " + TABLE
                    + " WHERE seq = " + firstSeq) == 0, timeout, 2, failure);
            long firstBatch = System.nanoTime();
            long rest = queryLong(c, "SELECT count(*) FROM " + TABLE);
            Await.until("child relay drains " + backlog + " rows", () -> Relays.tableEmpty(c, BacklogDrain.SCHEMA),
                    timeout, 5, failure);
            double seconds = (System.nanoTime() - (rest > 0 ? firstBatch : start)) / 1e9;
            // a backlog of one batch or less (the smoke run's) has no rest to time: then start to empty
            double rate = (rest > 0 ? rest : backlog) / seconds;
            double peak = ProcessMemory.peakRssMb(child.pid());
            double rss = ProcessMemory.rssMb(child.pid());
            double anon = ProcessMemory.rssAnonMb(child.pid());
            double file = ProcessMemory.rssFileMb(child.pid());
            NativeMemory.Summary summary = nmt ? NativeMemory.summary(child.pid()) : null;
            child.terminate(Duration.ofSeconds(60));
            log.info("relay child {}{}: first batch after {} s, then {} rows in {} s = {} events/s, VmHWM {} MB,"
                    + " VmRSS {} MB (anon {}, file {}){}", variant, nmt ? " (NMT)" : "", String.format("%.2f", (firstBatch - start) / 1e9),
                    rest, String.format("%.2f", seconds), Math.round(rate),
                    String.format("%.1f", peak), String.format("%.1f", rss), String.format("%.1f", anon),
                    String.format("%.1f", file),
                    summary == null ? "" : ", NMT committed " + summary.committedKb() + " KB, peaks " + summary.peakKb());
            return new Drain(rate, peak, rss, anon, file, summary);
        } finally {
            Files.deleteIfExists(startFile);
        }
    }

    private static long queryLong(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static double meanRate(List<Drain> drains) {
        return drains.stream().mapToDouble(Drain::eventsPerSecond).average().orElseThrow();
    }

    private static double maxPeak(List<Drain> drains) {
        return drains.stream().mapToDouble(Drain::peakMb).max().orElseThrow();
    }
}
