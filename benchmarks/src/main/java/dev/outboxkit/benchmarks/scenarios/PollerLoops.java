package dev.outboxkit.benchmarks.scenarios;

import dev.outboxkit.benchmarks.BenchContext;
import dev.outboxkit.benchmarks.Measurements;
import dev.outboxkit.benchmarks.Metric;
import dev.outboxkit.benchmarks.Scenario;
import dev.outboxkit.testkit.TestDatabase;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code poller_loops_<n>_eps} and {@code poller_loops_<n>_vs_pg_ceiling}: one polling relay instance draining the
 * backlog of {@link PollerDrain} with 1, 2 and 4 claim loops ({@code claimLoops}), each compared with the PostgreSQL
 * claim/delete ceiling ({@link PgDrainCeiling}) measured inside this scenario, in the order C 1 2 4 4 2 1 C on fresh
 * backlogs (so that a machine whose load drifts during the run weighs on every variant alike).
 */
public final class PollerLoops implements Scenario {

    /** The loop counts compared. */
    static final List<Integer> LOOPS = List.of(1, 2, 4);

    private static final Logger log = LoggerFactory.getLogger(PollerLoops.class);

    @Override
    public String name() {
        return "poller_loops";
    }

    private static String key(int loops) {
        return "poller_loops_" + loops + "_eps";
    }

    private static String ratioKey(int loops) {
        return "poller_loops_" + loops + "_vs_pg_ceiling";
    }

    @Override
    public List<Metric> metrics() {
        List<Metric> metrics = new java.util.ArrayList<>();
        metrics.add(Metric.of("poller_loops_pg_ceiling_eps", "events/s",
                "the PostgreSQL claim/delete ceiling, measured between the claim-loop drains"));
        for (int n : LOOPS) {
            metrics.add(Metric.of(key(n), "events/s", "polling relay drain, one instance with " + n + " claim loop"
                    + (n == 1 ? "" : "s")));
            metrics.add(Metric.of(ratioKey(n), "ratio", "poller_loops_" + n + "_eps ÷ poller_loops_pg_ceiling_eps"));
        }
        return metrics;
    }

    @Override
    public Measurements run(BenchContext context) throws Exception {
        drain(context, 2); // warm-ups (the JIT, the broker's topic creation path), not counted
        ceiling(context);
        double ceiling = 0;
        double[] sum = new double[LOOPS.size()];
        ceiling += ceiling(context) / 2;
        for (int i : new int[] {0, 1, 2, 2, 1, 0}) {
            sum[i] += drain(context, LOOPS.get(i)) / 2;
        }
        ceiling += ceiling(context) / 2;
        Measurements m = new Measurements().put("poller_loops_pg_ceiling_eps", ceiling);
        for (int i = 0; i < LOOPS.size(); i++) {
            m.put(key(LOOPS.get(i)), sum[i]).put(ratioKey(LOOPS.get(i)), sum[i] / ceiling);
        }
        return m;
    }

    private static double ceiling(BenchContext context) throws Exception {
        int backlog = context.sizes().backlogEvents();
        TestDatabase db = context.newDatabase();
        BacklogDrain.DrainClock clock = BacklogDrain.DrainClock.on(db);
        new PgDrainCeiling().drain(context, db, backlog, clock);
        double eps = backlog / clock.seconds();
        log.info("poller_loops: PostgreSQL ceiling {} events/s", Math.round(eps));
        return eps;
    }

    private static double drain(BenchContext context, int loops) throws Exception {
        int backlog = context.sizes().backlogEvents();
        TestDatabase db = context.newDatabase();
        BacklogDrain.DrainClock clock = BacklogDrain.DrainClock.on(db);
        PollerDrain.drain(context, db, backlog, "poller-loops-" + loops, b -> b.claimLoops(loops), clock);
        double eps = backlog / clock.seconds();
        log.info("poller_loops: {} claim loop(s) {} events/s", loops, Math.round(eps));
        return eps;
    }
}
