package dev.outboxkit.benchmarks;

import java.util.List;
import java.util.Set;

/**
 * One benchmark: a name, the JSON keys it produces, and one measurement on the shared stack.
 * The runner calls {@link #run} once per repeat (and per payload size when
 * {@link #payloadSensitive()}), interleaving the repeats of all scenarios so that ratios between
 * scenarios pair measurements taken close together; a {@link #headline()} scenario gets
 * {@link Sizes#headlineRepeats()} repeats, the others {@link Sizes#repeats()}. Register a new
 * scenario with one line in {@link ScenarioCatalog#all()}.
 *
 * <p>A scenario that cannot measure throws: its keys then appear as {@code null} with the reason
 * in {@code "missing"}. It never returns a made-up number.
 */
public interface Scenario {

    /** Short snake_case name for logs and the report, e.g. {@code pg_drain_ceiling}. */
    String name();

    /**
     * Every key one run puts into its {@link Measurements} (at the default payload size), with
     * unit, meaning and target. Use the constants of {@link MetricCatalog} for the keys.
     */
    List<Metric> metrics();

    /**
     * True when the scenario runs once per payload size of the mode (200 B; the full run adds
     * 1 KB): its keys then get a {@code _1kb} suffix for the 1 KB run. Default false.
     */
    default boolean payloadSensitive() {
        return false;
    }

    /**
     * True when the scenario measures a headline figure or a side of its ratio ({@link MetricCatalog#headlineInputs()}):
     * it then runs {@link Sizes#headlineRepeats()} times, interleaved with the rest. Derived from {@link #metrics()},
     * so marking a figure {@link Metric#headline()} in {@link MetricCatalog} is all it takes.
     */
    default boolean headline() {
        Set<String> inputs = MetricCatalog.headlineInputs();
        return metrics().stream().anyMatch(m -> inputs.contains(m.key()));
    }

    /**
     * One measurement. Databases made with {@link BenchContext#newDatabase()} are dropped after
     * it returns; close everything else you start (relays, child JVMs, clients) before returning.
     */
    Measurements run(BenchContext context) throws Exception;
}
