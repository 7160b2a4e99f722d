package dev.outboxkit.benchmarks.scenarios;

import dev.outboxkit.benchmarks.BenchContext;
import dev.outboxkit.benchmarks.Measurements;
import dev.outboxkit.benchmarks.Metric;
import dev.outboxkit.benchmarks.MetricCatalog;
import dev.outboxkit.benchmarks.Scenario;
import dev.outboxkit.benchmarks.load.SyntheticEvents;
import dev.outboxkit.benchmarks.load.TransferWorkload;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.writer.OutboxMessage;
import dev.outboxkit.writer.OutboxTransaction;
import dev.outboxkit.writer.OutboxWriter;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code writer_baseline_tps} and {@code writer_outbox_tps}: the {@link TransferWorkload} (8 clients, two account
 * updates per transfer) without an outbox and with one event per transfer written through the writer's
 * {@link OutboxTransaction#commit()} (the event's INSERT and the COMMIT go in one round trip, so the transfer makes
 * as many round trips as without the outbox), measured {@link dev.outboxkit.benchmarks.load.BackToBack} on one
 * database. The runner divides the two ({@code writer_tax_ratio}), like the peers' {@link PeerWriterTax}.
 */
public final class WriterOutbox implements Scenario {

    private static final OutboxWriter WRITER = OutboxWriter.builder().build();

    @Override
    public String name() {
        return "writer_outbox";
    }

    @Override
    public List<Metric> metrics() {
        return List.of(MetricCatalog.WRITER_BASELINE_TPS, MetricCatalog.WRITER_OUTBOX_TPS);
    }

    @Override
    public Measurements run(BenchContext context) throws Exception {
        TestDatabase db = context.newDatabase();
        TransferWorkload.createAccounts(db);
        AtomicLong sequence = new AtomicLong();
        int bytes = context.payloadBytes();
        var rates = TransferWorkload.backToBack(db, context.sizes().clients(), context.sizes().warmup(),
                context.sizes().window(), (connection, transfer) -> {
                    long n = sequence.getAndIncrement();
                    OutboxTransaction tx = WRITER.begin(connection);
                    tx.add(OutboxMessage.builder(SyntheticEvents.AGGREGATE_TYPE, "acc-" + transfer.from(),
                            SyntheticEvents.EVENT_TYPE).payloadJson(SyntheticEvents.payload(n, bytes)).build());
                    tx.commit(); // events + COMMIT in one round trip; the workload's own commit() then sends nothing
                });
        return new Measurements().put(MetricCatalog.WRITER_BASELINE_TPS.key(), rates.without())
                .put(MetricCatalog.WRITER_OUTBOX_TPS.key(), rates.with());
    }
}
