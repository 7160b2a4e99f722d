package dev.outboxkit.benchmarks.scenarios;

import dev.outboxkit.benchmarks.BenchContext;
import dev.outboxkit.benchmarks.Measurements;
import dev.outboxkit.benchmarks.Metric;
import dev.outboxkit.benchmarks.Scenario;
import dev.outboxkit.benchmarks.load.Await;
import dev.outboxkit.benchmarks.load.Backlog;
import dev.outboxkit.benchmarks.load.CdcRelayMain;
import dev.outboxkit.benchmarks.load.DrainSeries;
import dev.outboxkit.benchmarks.load.EventIdReader;
import dev.outboxkit.benchmarks.load.PollerRelayMain;
import dev.outboxkit.benchmarks.load.ProcessMemory;
import dev.outboxkit.benchmarks.load.Relays;
import dev.outboxkit.benchmarks.load.TopicRecords;
import dev.outboxkit.core.Identifiers;
import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.relay.cdc.CdcRelay;
import dev.outboxkit.testkit.JavaProcess;
import dev.outboxkit.testkit.TestDatabase;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The backlog mode's measurement ({@code --mode backlog}, nothing else runs it): what users meet after a long Kafka
 * outage, a huge backlog ({@code sizes().backlogEvents()}, 10,000,000 events of 200 B) drained by one relay with its
 * defaults, in a child JVM with the sidecar's JVM options ({@link RelayRss#SIDECAR_JVM_OPTIONS}) so its memory is the
 * relay's alone.
 *
 * <p>The outage is a stopped relay: the benchmark's broker serves the whole run and cannot be taken away, and while
 * Kafka is unreachable neither relay publishes or deletes anything, so the table (and the CDC relay's slot) hold the
 * same backlog either way. The backlog is written ({@link Backlog#fill}: COPY, vacuum, analyse, checkpoint) while no
 * relay runs; for the CDC relay its slot exists before (one start of the relay in this JVM until ready, then a
 * graceful stop, which keeps the slot), so the events are in the slot's WAL as after a real outage. Then the relay
 * child starts ({@link PollerRelayMain} or {@link CdcRelayMain}, timed from its {@code start()}) and drains to the
 * empty table; the CDC relay publishes a backlog found at its start from the table, then moves its slot past the WAL
 * that covered.
 *
 * <p>Every sample ({@link #samplePeriod}: 5 s for the mode's 10 million events, more often for a trial-sized backlog):
 * the records Kafka holds on the topic (rows left = backlog − those: an end-offset lookup, where counting a table of
 * millions of rows would load the server it measures), the child's {@code VmRSS}, and {@code outbox_event}'s
 * {@code pg_total_relation_size}, {@code n_live_tup}, {@code n_dead_tup} and {@code autovacuum_count}. The series goes
 * to {@code backlog-<relay>.json} beside the reports ({@link DrainSeries}); the keys summarise it.
 */
public final class BacklogAfterOutage implements Scenario {

    private static final Logger log = LoggerFactory.getLogger(BacklogAfterOutage.class);
    private static final String TABLE = Identifiers.qualified(BacklogDrain.SCHEMA, "outbox_event");

    /** The relay under test. */
    public enum Kind {
        POLLER("poller", "polling relay", PollerRelayMain.class),
        CDC("cdc", "CDC relay", CdcRelayMain.class);

        final String system;
        final String label;
        final Class<?> main;

        Kind(String system, String label, Class<?> main) {
            this.system = system;
            this.label = label;
            this.main = main;
        }

        /** The relay's system key in the keys and the series file ({@code poller}, {@code cdc}). */
        public String system() {
            return system;
        }
    }

    private final Kind kind;

    public BacklogAfterOutage(Kind kind) {
        this.kind = kind;
    }

    /** The series file of {@code relay} in {@code dir}. */
    public static Path seriesFile(Path dir, String relay) {
        return dir.resolve("backlog-" + relay + ".json");
    }

    @Override
    public String name() {
        return "backlog_" + kind.system;
    }

    private String key(String suffix) {
        return "backlog_" + kind.system + "_" + suffix;
    }

    @Override
    public List<Metric> metrics() {
        String relay = "the " + kind.label;
        String step = " (a step of a backlog below 2 million is a tenth of it)";
        return List.of(
                Metric.of(key("drain_s"), "s", "time for " + relay + " to drain the backlog, from its start to the empty table"),
                Metric.of(key("eps"), "events/s", "the backlog ÷ " + key("drain_s")),
                Metric.of(key("first_record_s"), "s", "time from " + relay + "'s start to its first record in Kafka"
                        + " (JVM, connections, leases, the producer's first metadata; the steps' rates start there)"),
                Metric.of(key("first_million_eps"), "events/s", "drain rate of the backlog's first million events" + step),
                Metric.of(key("last_million_eps"), "events/s", "drain rate of its last million events" + step),
                Metric.of(key("last_vs_first_million"), "ratio",
                        key("last_million_eps") + " ÷ " + key("first_million_eps") + ": below 1, the drain slows down"),
                Metric.of(key("rss_peak_mb"), "MB", "peak resident memory (VmHWM) of " + relay + "'s JVM at the empty table"),
                Metric.of(key("rss_final_mb"), "MB", "resident memory (VmRSS) of " + relay + "'s JVM at the empty table"),
                Metric.of(key("table_mb_before"), "MB", "pg_total_relation_size of outbox_event before " + relay + " starts"),
                Metric.of(key("table_mb_max"), "MB", "the largest pg_total_relation_size of outbox_event sampled during the drain"),
                Metric.of(key("table_mb_after"), "MB", "pg_total_relation_size of outbox_event at the empty table"),
                Metric.of(key("dead_tup_before"), "rows", "n_dead_tup of outbox_event before " + relay + " starts"),
                Metric.of(key("dead_tup_max"), "rows", "the largest n_dead_tup of outbox_event sampled during the drain"),
                Metric.of(key("dead_tup_after"), "rows", "n_dead_tup of outbox_event at the empty table"),
                Metric.of(key("autovacuums"), "runs", "autovacuum runs on outbox_event during the drain (autovacuum_count)"));
    }

    /** About 100 samples of a drain at 20,000 events/s: every 5 s for 10 million events, never more often than 0.1 s. */
    static Duration samplePeriod(long backlog) {
        return Duration.ofMillis(Math.max(100, Math.min(5_000, backlog / 2_000)));
    }

    @Override
    public Measurements run(BenchContext context) throws Exception {
        int backlog = context.sizes().backlogEvents();
        Path seriesFile = seriesFile(context.resultsDir(), kind.system);
        Files.deleteIfExists(seriesFile); // no chart from an earlier run's series if this one fails
        TestDatabase db = context.newDatabase();
        String topic = context.uniqueTopic("backlog-" + kind.system);
        context.kafka().createTopic(topic, BacklogDrain.PARTITIONS);
        String slot = kind == Kind.CDC ? Relays.uniqueSlot("bench_backlog") : null;
        try {
            if (slot != null) {
                createSlot(context, db, topic, slot);
            }
            Backlog.fill(db, BacklogDrain.SCHEMA, backlog, context.payloadBytes());
            Drained drained = drain(context, db, topic, slot, backlog);
            drained.series().write(seriesFile);
            return summary(drained, backlog);
        } finally {
            if (slot != null) {
                db.dropReplicationSlot(slot);
            }
        }
    }

    /** The CDC relay's slot, made by the relay itself: started in this JVM until ready, then stopped gracefully. */
    private static void createSlot(BenchContext context, TestDatabase db, String topic, String slot) throws Exception {
        try (CdcRelay relay = Relays.cdc(db.jdbcUrl(), db.user(), db.password(), context.kafka().bootstrapServers(),
                TopicRoute.of(topic), slot, new SimpleMeterRegistry()).build()) {
            relay.start();
            Await.until("CDC relay ready (creating its slot " + slot + ")", () -> relay.health().ready(),
                    Duration.ofMinutes(2), 20, () -> CdcDrain.failure(relay));
        }
    }

    /** A drain's samples, and the child's peak resident memory read at the empty table before it stopped. */
    private record Drained(DrainSeries series, double peakMb) {
    }

    private Drained drain(BenchContext context, TestDatabase db, String topic, String slot, int backlog)
            throws Exception {
        Path startFile = Files.createTempFile(context.workDir(), "backlog-start", ".flag");
        Files.delete(startFile);
        List<String> args = new ArrayList<>(List.of("jdbcUrl=" + db.jdbcUrl(), "user=" + db.user(),
                "password=" + db.password(), "bootstrap=" + context.kafka().bootstrapServers(), "topic=" + topic,
                "startFile=" + startFile));
        if (slot != null) {
            args.add("slot=" + slot);
        }
        Duration period = samplePeriod(backlog);
        List<DrainSeries.Sample> samples = new ArrayList<>();
        double peakMb;
        try (JavaProcess child = JavaProcess.start("bench-backlog-" + kind.system, kind.main, args,
                RelayRss.SIDECAR_JVM_OPTIONS, Map.of());
             Connection c = db.connect();
             PreparedStatement table = c.prepareStatement("SELECT pg_total_relation_size(relid), n_live_tup,"
                     + " n_dead_tup, autovacuum_count FROM pg_stat_user_tables WHERE relid = '" + TABLE + "'::regclass");
             TopicRecords records = new TopicRecords(context.kafka().bootstrapServers(), topic, EventIdReader.HEADER)) {
            if (!child.awaitOutput(PollerRelayMain.WAITING, Duration.ofMinutes(2))) {
                throw new IllegalStateException("the " + kind.label + " child did not get ready within 2 minutes:\n"
                        + child.output());
            }
            Supplier<String> failure = () -> child.isAlive() ? null : "the " + kind.label + " child exited:\n"
                    + child.output();
            long start = System.nanoTime();
            samples.add(sample(table, records, child, 0));
            Files.createFile(startFile);
            long deadline = start + BacklogDrain.drainTimeout(backlog).plusMinutes(1).toNanos();
            long next = start;
            double logged = 0;
            while (true) {
                next += period.toNanos();
                long rest = next - System.nanoTime();
                if (rest > 0) {
                    TimeUnit.NANOSECONDS.sleep(rest); // the sampling period, not a wait for a condition
                }
                DrainSeries.Sample s = sample(table, records, child, (System.nanoTime() - start) / 1e9);
                samples.add(s);
                if (s.seconds() >= logged + 5) { // the series has every sample; the log one every 5 s
                    logged = s.seconds();
                    log.info("{} backlog: {} s, {} of {} published, VmRSS {} MB, n_dead_tup {}, table {} MB",
                            kind.label, Math.round(s.seconds()), s.published(), backlog, Math.round(s.rssMb()),
                            s.deadTuples(), s.tableBytes() >> 20);
                }
                if (s.published() >= backlog) {
                    break;
                }
                String why = failure.get();
                if (why != null) {
                    throw new IllegalStateException("backlog drain of " + backlog + " rows: " + why);
                }
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("backlog drain of " + backlog + " rows: " + s.published()
                            + " published after " + Math.round(s.seconds()) + " s");
                }
            }
            // Kafka holds every event; the drain ends when the relay has deleted the last row too. Along the primary
            // key: a sequential scan would read the whole dead table each time.
            try (PreparedStatement empty = c.prepareStatement("SELECT NOT EXISTS (SELECT 1 FROM " + TABLE
                    + " ORDER BY seq LIMIT 1)")) {
                Await.until(kind.label + " deleting the last published rows", () -> {
                    try (ResultSet rs = empty.executeQuery()) {
                        return rs.next() && rs.getBoolean(1);
                    }
                }, Duration.ofMinutes(5), 20, failure);
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            DrainSeries.Sample last = sample(table, records, child, seconds);
            samples.add(last);
            // the peak of the whole life, read at the empty table like relay_rss_mb
            peakMb = ProcessMemory.peakRssMb(child.pid());
            child.terminate(Duration.ofSeconds(60));
        } finally {
            Files.deleteIfExists(startFile);
        }
        return new Drained(new DrainSeries(kind.system, kind.label, backlog, List.copyOf(samples)), peakMb);
    }

    private static DrainSeries.Sample sample(PreparedStatement table, TopicRecords records, JavaProcess child,
                                             double seconds) throws SQLException {
        long published = records.count();
        double rss = ProcessMemory.rssMb(child.pid());
        try (ResultSet rs = table.executeQuery()) {
            if (!rs.next()) {
                throw new IllegalStateException("pg_stat_user_tables has no row for " + TABLE);
            }
            return new DrainSeries.Sample(seconds, published, rs.getLong(2), rs.getLong(3), rs.getLong(1),
                    rs.getLong(4), rss);
        }
    }

    private Measurements summary(Drained drained, int backlog) {
        DrainSeries series = drained.series();
        List<DrainSeries.Sample> samples = series.samples();
        DrainSeries.Sample first = samples.get(0);
        DrainSeries.Sample last = samples.get(samples.size() - 1);
        List<DrainSeries.Step> steps = series.stepRates();
        if (steps.isEmpty()) {
            throw new IllegalStateException("the " + kind.label + " drained the backlog, but no sample saw a record in"
                    + " Kafka: the series has no step");
        }
        double firstStep = steps.get(0).eventsPerSecond();
        double lastStep = steps.get(steps.size() - 1).eventsPerSecond();
        log.info("{} backlog of {} events drained in {} s; events/s per step of {}: {}", kind.label, backlog,
                Math.round(last.seconds()), DrainSeries.stepEvents(backlog),
                steps.stream().map(s -> Long.toString(Math.round(s.eventsPerSecond()))).toList());
        return new Measurements()
                .put(key("drain_s"), last.seconds())
                .put(key("eps"), backlog / last.seconds())
                .put(key("first_record_s"), series.firstRecordSeconds())
                .put(key("first_million_eps"), firstStep)
                .put(key("last_million_eps"), lastStep)
                .put(key("last_vs_first_million"), lastStep / firstStep)
                .put(key("rss_peak_mb"), drained.peakMb())
                .put(key("rss_final_mb"), last.rssMb())
                .put(key("table_mb_before"), mb(first.tableBytes()))
                .put(key("table_mb_max"), mb(samples.stream().mapToLong(DrainSeries.Sample::tableBytes).max().orElseThrow()))
                .put(key("table_mb_after"), mb(last.tableBytes()))
                .put(key("dead_tup_before"), first.deadTuples())
                .put(key("dead_tup_max"), samples.stream().mapToLong(DrainSeries.Sample::deadTuples).max().orElseThrow())
                .put(key("dead_tup_after"), last.deadTuples())
                .put(key("autovacuums"), last.autovacuums() - first.autovacuums());
    }

    private static double mb(long bytes) {
        return bytes / (1024.0 * 1024.0);
    }
}
