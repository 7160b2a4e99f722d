package dev.outboxkit.benchmarks.scenarios;

import dev.outboxkit.benchmarks.BenchContext;
import dev.outboxkit.benchmarks.Measurements;
import dev.outboxkit.benchmarks.Metric;
import dev.outboxkit.benchmarks.MetricCatalog;
import dev.outboxkit.benchmarks.Scenario;
import dev.outboxkit.benchmarks.load.BackToBack;
import dev.outboxkit.benchmarks.load.ClosedLoop;
import dev.outboxkit.benchmarks.load.ModulithPeer;
import dev.outboxkit.benchmarks.load.NamastackPeer;
import dev.outboxkit.benchmarks.load.PeerApp;
import dev.outboxkit.benchmarks.load.SyntheticEvents;
import dev.outboxkit.benchmarks.load.TransferWorkload;
import dev.outboxkit.core.EventIds;
import dev.outboxkit.testkit.TestDatabase;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code <peer>_writer_baseline_tps} and {@code <peer>_writer_event_tps}: the writer workload of
 * {@link WriterOutbox} (8 clients, two account updates per transfer) run by a peer's {@code @Transactional}
 * service without an event and with one event per transfer, {@link BackToBack} like outboxkit's (Spring Modulith: the
 * registry's row in the transaction, the externalizer sending it after commit; namastack-outbox: the record's row in
 * the transaction, its scheduler sending it later). Both legs go through the same Spring transaction machinery, so
 * the ratio ({@code <peer>_writer_tax_ratio}) is the cost of the event alone, like {@code writer_tax_ratio} for
 * outboxkit's writer.
 */
public final class PeerWriterTax implements Scenario {

    /** Which peer. */
    public enum Kind {
        MODULITH("modulith", MetricCatalog.MODULITH_WRITER_BASELINE_TPS, MetricCatalog.MODULITH_WRITER_EVENT_TPS),
        NAMASTACK("namastack", MetricCatalog.NAMASTACK_WRITER_BASELINE_TPS, MetricCatalog.NAMASTACK_WRITER_EVENT_TPS);

        final String key;
        final Metric baseline;
        final Metric event;

        Kind(String key, Metric baseline, Metric event) {
            this.key = key;
            this.baseline = baseline;
            this.event = event;
        }
    }

    private final Kind peer;

    public PeerWriterTax(Kind peer) {
        this.peer = peer;
    }

    @Override
    public String name() {
        return peer.key + "_writer";
    }

    @Override
    public List<Metric> metrics() {
        return List.of(peer.baseline, peer.event);
    }

    @Override
    public Measurements run(BenchContext context) throws Exception {
        TestDatabase db = context.newDatabase();
        TransferWorkload.createAccounts(db);
        String topic = context.uniqueTopic(peer.key + "-writer");
        context.kafka().createTopic(topic, BacklogDrain.PARTITIONS);
        int bytes = context.payloadBytes();
        AtomicLong sequence = new AtomicLong();
        String bootstrap = context.kafka().bootstrapServers();
        try (PeerApp app = peer == Kind.MODULITH ? ModulithPeer.start(db, bootstrap, topic)
                : NamastackPeer.start(db, bootstrap, topic)) {
            BackToBack rates = BackToBack.measure(() -> transfers(context, app, false, bytes, sequence),
                    () -> transfers(context, app, true, bytes, sequence));
            return new Measurements().put(peer.baseline.key(), rates.without()).put(peer.event.key(), rates.with());
        }
    }

    private static double transfers(BenchContext context, PeerApp app, boolean event, int bytes, AtomicLong sequence)
            throws Exception {
        return ClosedLoop.run(context.sizes().clients(), context.sizes().warmup(), context.sizes().window().dividedBy(2),
                () -> () -> {
                    TransferWorkload.Transfer t = TransferWorkload.randomTransfer();
                    long n = sequence.getAndIncrement();
                    app.transfer(t.from(), t.to(), t.amount(), event ? EventIds.next() : null, "acc-" + t.from(), n,
                            event ? SyntheticEvents.payload(n, bytes) : null);
                    return true;
                }).perSecond();
    }
}
