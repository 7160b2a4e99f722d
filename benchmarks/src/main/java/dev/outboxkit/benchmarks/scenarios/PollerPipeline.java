package dev.outboxkit.benchmarks.scenarios;

import dev.outboxkit.benchmarks.BenchContext;
import dev.outboxkit.benchmarks.Measurements;
import dev.outboxkit.benchmarks.Metric;
import dev.outboxkit.benchmarks.Scenario;
import dev.outboxkit.relay.poller.spi.SliceIndexes;
import dev.outboxkit.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.Statement;
import java.util.List;

/**
 * {@code poller_pipeline_<variant>_eps}: the polling relay's drain with claims one after the other (the default),
 * pipelined on the seq index (the next claim steps over the locked rows of the batch in flight), and pipelined on
 * alternate slices of the slice index ({@link SliceIndexes#NAME}), in the order A B C C B A on fresh backlogs.
 */
public final class PollerPipeline implements Scenario {

    private enum Variant { OFF, SEQ, SLICED }

    @Override
    public String name() {
        return "poller_pipeline";
    }

    private static String key(Variant v) {
        return "poller_pipeline_" + v.name().toLowerCase(java.util.Locale.ROOT) + "_eps";
    }

    @Override
    public List<Metric> metrics() {
        return List.of(Metric.of(key(Variant.OFF), "events/s", "polling relay drain, claims one after the other"),
                Metric.of(key(Variant.SEQ), "events/s", "polling relay drain, pipelined claims on the seq index"),
                Metric.of(key(Variant.SLICED), "events/s", "polling relay drain, pipelined claims on alternate slices"),
                Metric.of("poller_pipeline_sliced_vs_off", "ratio", "sliced pipelined drain ÷ claims one after the other"),
                Metric.of("poller_pipeline_seq_vs_off", "ratio", "pipelined drain on the seq index ÷ one after the other"));
    }

    @Override
    public Measurements run(BenchContext context) throws Exception {
        drain(context, Variant.SEQ); // warm-up, not counted
        double[] sum = new double[3];
        for (Variant v : List.of(Variant.OFF, Variant.SEQ, Variant.SLICED, Variant.SLICED, Variant.SEQ, Variant.OFF)) {
            sum[v.ordinal()] += drain(context, v) / 2;
        }
        Measurements m = new Measurements();
        for (Variant v : Variant.values()) {
            m.put(key(v), sum[v.ordinal()]);
        }
        return m.put("poller_pipeline_sliced_vs_off", sum[2] / sum[0]).put("poller_pipeline_seq_vs_off", sum[1] / sum[0]);
    }

    private static double drain(BenchContext context, Variant v) throws Exception {
        int backlog = context.sizes().backlogEvents();
        TestDatabase db = context.newDatabase();
        if (v == Variant.SLICED) {
            try (Connection c = db.connect(); Statement s = c.createStatement()) {
                for (String ddl : SliceIndexes.ddl(BacklogDrain.SCHEMA)) {
                    s.execute(ddl);
                }
            }
        }
        BacklogDrain.DrainClock clock = BacklogDrain.DrainClock.on(db);
        PollerDrain.drain(context, db, backlog, "poller-pipe-" + v.name().toLowerCase(java.util.Locale.ROOT),
                b -> b.pipelineClaims(v != Variant.OFF), clock);
        return backlog / clock.seconds();
    }
}
