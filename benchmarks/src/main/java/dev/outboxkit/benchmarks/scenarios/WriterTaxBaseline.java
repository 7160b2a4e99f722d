package dev.outboxkit.benchmarks.scenarios;

import dev.outboxkit.benchmarks.BenchContext;
import dev.outboxkit.benchmarks.Measurements;
import dev.outboxkit.benchmarks.Metric;
import dev.outboxkit.benchmarks.MetricCatalog;
import dev.outboxkit.benchmarks.Scenario;
import dev.outboxkit.benchmarks.load.TransferWorkload;
import dev.outboxkit.testkit.TestDatabase;
import java.util.List;

/**
 * {@code writer_baseline_tps}: transfers/s without any outbox, 8 clients — the denominator of
 * {@code writer_tax_ratio}. The writer scenario measures {@code writer_outbox_tps} with the
 * same {@link TransferWorkload} and a hook that writes the event; the runner divides the two
 * per repeat. (The writer scenario may also run both legs itself and put the ratio directly.)
 */
public final class WriterTaxBaseline implements Scenario {

    @Override
    public String name() {
        return "writer_tax_baseline";
    }

    @Override
    public List<Metric> metrics() {
        return List.of(MetricCatalog.WRITER_BASELINE_TPS);
    }

    @Override
    public Measurements run(BenchContext context) throws Exception {
        TestDatabase db = context.newDatabase();
        TransferWorkload.createAccounts(db);
        var result = TransferWorkload.run(db, context.sizes().clients(), context.sizes().warmup(),
                context.sizes().window(), TransferWorkload.Hook.NONE);
        return new Measurements().put(MetricCatalog.WRITER_BASELINE_TPS.key(), result.perSecond());
    }
}
