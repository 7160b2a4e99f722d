package dev.outboxkit.benchmarks.scenarios;

import dev.outboxkit.benchmarks.BenchContext;
import dev.outboxkit.benchmarks.Measurements;
import dev.outboxkit.benchmarks.Metric;
import dev.outboxkit.benchmarks.MetricCatalog;
import dev.outboxkit.benchmarks.Scenario;
import dev.outboxkit.benchmarks.load.ClosedLoop;
import dev.outboxkit.benchmarks.load.ModulithPeer;
import dev.outboxkit.benchmarks.load.SyntheticEvents;
import dev.outboxkit.benchmarks.load.TransferWorkload;
import dev.outboxkit.core.EventIds;
import dev.outboxkit.testkit.TestDatabase;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code modulith_writer_baseline_tps} and {@code modulith_writer_event_tps}: the writer workload of
 * {@link WriterTaxBaseline} and {@link WriterOutbox} (8 clients, two account updates per transfer) run by the
 * Spring Modulith peer's {@code @Transactional} service, first without an event, then publishing one event per
 * transfer (the registry's row in the same transaction, the externalizer sending it after commit). Both legs go
 * through the same Spring transaction machinery, so the ratio ({@code modulith_writer_tax_ratio}) is the cost of
 * the event alone, like {@code writer_tax_ratio} for outboxkit's writer.
 */
public final class ModulithWriterTax implements Scenario {

    @Override
    public String name() {
        return "modulith_writer";
    }

    @Override
    public List<Metric> metrics() {
        return List.of(MetricCatalog.MODULITH_WRITER_BASELINE_TPS, MetricCatalog.MODULITH_WRITER_EVENT_TPS);
    }

    @Override
    public Measurements run(BenchContext context) throws Exception {
        TestDatabase db = context.newDatabase();
        TransferWorkload.createAccounts(db);
        String topic = context.uniqueTopic("modulith-writer");
        context.kafka().createTopic(topic, BacklogDrain.PARTITIONS);
        int bytes = context.payloadBytes();
        AtomicLong sequence = new AtomicLong();
        try (ModulithPeer peer = ModulithPeer.start(db, context.kafka().bootstrapServers(), topic)) {
            double without = transfers(context, peer, false, bytes, sequence);
            double with = transfers(context, peer, true, bytes, sequence);
            return new Measurements().put(MetricCatalog.MODULITH_WRITER_BASELINE_TPS.key(), without)
                    .put(MetricCatalog.MODULITH_WRITER_EVENT_TPS.key(), with);
        }
    }

    private static double transfers(BenchContext context, ModulithPeer peer, boolean event, int bytes,
                                     AtomicLong sequence) throws Exception {
        return ClosedLoop.run(context.sizes().clients(), context.sizes().warmup(), context.sizes().window(),
                () -> () -> {
                    TransferWorkload.Transfer t = TransferWorkload.randomTransfer();
                    long n = sequence.getAndIncrement();
                    peer.transfer(t.from(), t.to(), t.amount(), event ? EventIds.next() : null, "acc-" + t.from(), n,
                            event ? SyntheticEvents.payload(n, bytes) : null);
                    return true;
                }).perSecond();
    }
}
