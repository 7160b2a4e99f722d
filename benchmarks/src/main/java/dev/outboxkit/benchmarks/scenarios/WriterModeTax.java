package dev.outboxkit.benchmarks.scenarios;

import dev.outboxkit.benchmarks.BenchContext;
import dev.outboxkit.benchmarks.Measurements;
import dev.outboxkit.benchmarks.Metric;
import dev.outboxkit.benchmarks.Scenario;
import dev.outboxkit.benchmarks.load.SyntheticEvents;
import dev.outboxkit.benchmarks.load.TransferWorkload;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.writer.OutboxMessage;
import dev.outboxkit.writer.OutboxTransaction;
import dev.outboxkit.writer.OutboxWriter;
import dev.outboxkit.writer.WriteMode;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code writer_tax_<mode>_<n>c}: the writer's cost per write mode, at 1 and at {@code clients} clients: the
 * {@link WriterTaxBaseline} transfer workload without an event, then with one event per transfer written in
 * that mode, one right after the other on the same database; the key is their ratio (1 = free). Run
 * back to back, the two legs see the same machine, which the per-scenario ratio of {@code writer_tax_ratio}
 * (baseline and outbox in separate scenarios) does not promise.
 */
public final class WriterModeTax implements Scenario {

    private static final List<WriteMode> MODES = List.of(WriteMode.KEEP, WriteMode.INSERT_AND_DELETE,
            WriteMode.LOGICAL_MESSAGE);

    @Override
    public String name() {
        return "writer_modes";
    }

    /** The key of one mode at {@code clients} clients. */
    public static String key(WriteMode mode, int clients) {
        return "writer_tax_" + mode.name().toLowerCase(Locale.ROOT) + "_" + clients + "c";
    }

    @Override
    public List<Metric> metrics() {
        List<Metric> metrics = new ArrayList<>();
        for (int clients : List.of(1, 8)) {
            for (WriteMode mode : MODES) {
                metrics.add(Metric.of(key(mode, clients), "ratio", "transfers/s with one event written in mode " + mode
                        + " ÷ without, " + clients + (clients == 1 ? " client" : " clients") + ", legs back to back"));
            }
        }
        return metrics;
    }

    @Override
    public Measurements run(BenchContext context) throws Exception {
        TestDatabase db = context.newDatabase();
        TransferWorkload.createAccounts(db);
        int bytes = context.payloadBytes();
        AtomicLong sequence = new AtomicLong();
        Measurements m = new Measurements();
        for (int clients : List.of(1, 8)) {
            for (WriteMode mode : MODES) {
                OutboxWriter writer = OutboxWriter.builder().mode(mode).build();
                double without = TransferWorkload.run(db, clients, context.sizes().warmup(), context.sizes().window(),
                        TransferWorkload.Hook.NONE).perSecond();
                double with = TransferWorkload.run(db, clients, context.sizes().warmup(), context.sizes().window(),
                        (connection, transfer) -> {
                            OutboxTransaction tx = writer.begin(connection);
                            tx.add(OutboxMessage.builder(SyntheticEvents.AGGREGATE_TYPE, "acc-" + transfer.from(),
                                    SyntheticEvents.EVENT_TYPE).payloadJson(
                                            SyntheticEvents.payload(sequence.getAndIncrement(), bytes)).build());
                            tx.commit();
                        }).perSecond();
                m.put(key(mode, clients), with / without);
            }
        }
        return m;
    }
}
