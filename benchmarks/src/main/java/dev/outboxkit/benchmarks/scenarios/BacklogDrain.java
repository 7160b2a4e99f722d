package dev.outboxkit.benchmarks.scenarios;

import dev.outboxkit.benchmarks.BenchContext;
import dev.outboxkit.benchmarks.Measurements;
import dev.outboxkit.benchmarks.Metric;
import dev.outboxkit.benchmarks.Scenario;
import dev.outboxkit.benchmarks.Sizes;
import dev.outboxkit.testkit.TestDatabase;
import java.time.Duration;
import java.util.List;

/**
 * What the four drain scenarios ({@link PgDrainCeiling}, {@link PollerDrain}, {@link CdcDrain},
 * {@link StockDebeziumDrain}) share: a fresh database, a backlog of {@code sizes().backlogEvents()} events of the
 * run's payload size (so payload-sensitive), and one number, events per second over the part of the drain that
 * {@link #drain} times. Each scenario sets up its system, decides where the clock starts (after a fill, or at the
 * commit of one COPY) and stops, and returns the seconds in between.
 */
abstract class BacklogDrain implements Scenario {

    /** Schema of the outbox tables in every drain's database. */
    static final String SCHEMA = "public";
    /** Partitions of the drains' topics. */
    static final int PARTITIONS = 8;

    private final String name;
    private final Metric metric;

    BacklogDrain(String name, Metric metric) {
        this.name = name;
        this.metric = metric;
    }

    @Override
    public final String name() {
        return name;
    }

    @Override
    public final List<Metric> metrics() {
        return List.of(metric);
    }

    @Override
    public final boolean payloadSensitive() {
        return true;
    }

    @Override
    public final Measurements run(BenchContext context) throws Exception {
        TestDatabase db = context.newDatabase();
        int backlog = backlog(context.sizes());
        double seconds = drain(context, db, backlog);
        return new Measurements().put(metric.key(), backlog / seconds);
    }

    /** Events in this system's backlog: {@link Sizes#backlogEvents()} unless a slow peer needs fewer. */
    int backlog(Sizes sizes) {
        return sizes.backlogEvents();
    }

    /**
     * Drains {@code backlog} events through the system under test (throwing when it cannot account for every one)
     * and returns the seconds the timed part took.
     */
    abstract double drain(BenchContext context, TestDatabase db, int backlog) throws Exception;

    /** Seconds since {@code startNanos} (a {@link System#nanoTime()}). */
    static double secondsSince(long startNanos) {
        return (System.nanoTime() - startNanos) / 1e9;
    }

    /** Generous: 2 minutes plus 1 ms per row (a relay at 1,000 events/s still finishes). */
    static Duration drainTimeout(int rows) {
        return Duration.ofMinutes(2).plusMillis(rows);
    }
}
