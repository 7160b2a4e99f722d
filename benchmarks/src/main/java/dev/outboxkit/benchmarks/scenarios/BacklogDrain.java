package dev.outboxkit.benchmarks.scenarios;

import dev.outboxkit.benchmarks.BenchContext;
import dev.outboxkit.benchmarks.Measurements;
import dev.outboxkit.benchmarks.Metric;
import dev.outboxkit.benchmarks.Scenario;
import dev.outboxkit.benchmarks.MetricCatalog;
import dev.outboxkit.benchmarks.Sizes;
import dev.outboxkit.benchmarks.load.CpuBudget;
import dev.outboxkit.testkit.TestDatabase;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the drain scenarios ({@link PgDrainCeiling}, {@link PollerDrain}, {@link CdcDrain},
 * {@link DebeziumCeilingDrain}, {@link StockDebeziumDrain}, {@link ModulithDrain}, {@link NamastackDrain}) share:
 * a fresh database, a backlog of {@code sizes().backlogEvents()} events of the run's payload size (so
 * payload-sensitive), events per second over the part of the drain that {@link #drain} times, and that part's CPU budget
 * ({@link MetricCatalog#cpuBudget}), after an untimed warm-up drain of a third of the size on another database
 * (a relay runs for days; what a cold JVM spends compiling is not the relay's cost per event). Each scenario sets
 * up its system and decides where its {@link DrainClock} starts (after a fill, or at the commit of one COPY) and
 * stops.
 */
abstract class BacklogDrain implements Scenario {

    /** Schema of the outbox tables in every drain's database. */
    static final String SCHEMA = "public";
    /** Partitions of the drains' topics. */
    static final int PARTITIONS = 8;

    private static final Logger log = LoggerFactory.getLogger(BacklogDrain.class);

    private final String name;
    private final Metric metric;
    private final String system;
    private final List<Metric> cpuMetrics;

    /** {@code system} prefixes the CPU keys ({@code <system>_cpu_…}); {@code drain} names the drain in their meanings. */
    BacklogDrain(String name, Metric metric, String system, String drain) {
        this.name = name;
        this.metric = metric;
        this.system = system;
        this.cpuMetrics = MetricCatalog.cpuBudget(system, drain);
    }

    @Override
    public final String name() {
        return name;
    }

    @Override
    public final List<Metric> metrics() {
        List<Metric> metrics = new ArrayList<>(List.of(metric));
        metrics.addAll(cpuMetrics);
        return metrics;
    }

    @Override
    public final boolean payloadSensitive() {
        return true;
    }

    @Override
    public final Measurements run(BenchContext context) throws Exception {
        int backlog = backlog(context.sizes());
        // Warm-up: the same drain, a third of the size, on a database of its own, not reported. Cold, the JIT
        // compilers took 20-38 µs of CPU per event inside the timed part (more than the relays themselves), and the
        // drain that ran first paid for compiling code the next one shared (Debezium's, for cdc_drain).
        TestDatabase warm = context.newDatabase();
        drain(context, warm, warmupBacklog(backlog), DrainClock.on(warm));
        TestDatabase db = context.newDatabase();
        DrainClock clock = DrainClock.on(db);
        drain(context, db, backlog, clock);
        CpuBudget.Usage cpu = clock.cpu();
        log.info("{} CPU over {} events ({} µs/event in all): {}", name, backlog,
                Math.round(cpu.totalMicrosPerEvent(backlog)), cpu.profile(10));
        Measurements m = new Measurements().put(metric.key(), backlog / clock.seconds());
        for (CpuBudget.Part part : CpuBudget.Part.values()) {
            m.put(MetricCatalog.cpuPerEventKey(system, part), cpu.microsPerEvent(part, backlog));
        }
        return m.put(MetricCatalog.cpuBusyKey(system), cpu.machineBusy())
                .put(MetricCatalog.cpuBusyOthersKey(system), cpu.othersBusy());
    }

    /** Events of the untimed warm-up drain before the measured one. */
    static int warmupBacklog(int backlog) {
        return Math.max(1_000, backlog / 3);
    }

    /** Events in this system's backlog: {@link Sizes#backlogEvents()} unless a slow peer needs fewer. */
    int backlog(Sizes sizes) {
        return sizes.backlogEvents();
    }

    /**
     * Drains {@code backlog} events through the system under test (throwing when it cannot account for every one),
     * with {@code clock} started and stopped around the timed part.
     */
    abstract void drain(BenchContext context, TestDatabase db, int backlog, DrainClock clock) throws Exception;

    /**
     * The timed part of a drain: wall time, and the CPU the machine spent meanwhile ({@link CpuBudget}). The CPU
     * snapshots sit outside the wall clock (taken before it starts and after it stops, a few ms on a quiet
     * machine), so they never slow the drain's events/s.
     */
    static final class DrainClock {
        private final CpuBudget budget;
        private CpuBudget.Snapshot cpuStart;
        private long startNanos;
        private double seconds = -1;
        private CpuBudget.Usage cpu;

        private DrainClock(CpuBudget budget) {
            this.budget = budget;
        }

        /** A clock for drains of {@code db}'s PostgreSQL server. */
        static DrainClock on(TestDatabase db) throws Exception {
            try (Connection c = db.connect()) {
                return new DrainClock(CpuBudget.forServerOf(c));
            }
        }

        void start() {
            cpuStart = budget.snapshot();
            startNanos = System.nanoTime();
        }

        void stop() {
            if (cpuStart == null) {
                throw new IllegalStateException("drain clock stopped before it was started");
            }
            seconds = (System.nanoTime() - startNanos) / 1e9;
            cpu = budget.between(cpuStart, budget.snapshot());
        }

        /** Wall seconds from {@link #start()} to {@link #stop()}. */
        double seconds() {
            requireStopped();
            return seconds;
        }

        CpuBudget.Usage cpu() {
            requireStopped();
            return cpu;
        }

        private void requireStopped() {
            if (cpu == null) {
                throw new IllegalStateException("the drain never stopped its clock (start() and stop() around the timed part)");
            }
        }
    }

    /** Generous: 2 minutes plus 1 ms per row (a relay at 1,000 events/s still finishes). */
    static Duration drainTimeout(int rows) {
        return Duration.ofMinutes(2).plusMillis(rows);
    }
}
