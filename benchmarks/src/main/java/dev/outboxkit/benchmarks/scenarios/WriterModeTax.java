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
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code writer_tax_<mode>_<n>c}: the writer's cost per write mode, at 1 and at 8 clients: the
 * {@link WriterTaxBaseline} transfer workload without an event and with one event per transfer written in
 * that mode, in the order without, with, with, without (half a window each) on the same database; the key is
 * the ratio of the two means (1 = free). Back to back, the two legs see the same machine, which the ratio of
 * {@code writer_tax_ratio} (baseline and outbox in separate scenarios) does not promise.
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

    private static double leg(BenchContext context, TestDatabase db, int clients, Duration window,
                              TransferWorkload.Hook hook) throws Exception {
        return TransferWorkload.run(db, clients, context.sizes().warmup(), window, hook).perSecond();
    }

    @Override
    public Measurements run(BenchContext context) throws Exception {
        TestDatabase db = context.newDatabase();
        TransferWorkload.createAccounts(db);
        int bytes = context.payloadBytes();
        AtomicLong sequence = new AtomicLong();
        Measurements m = new Measurements();
        // A B B A with half windows: the two legs see the same warm-up and drift, in the time of one A B
        Duration half = context.sizes().window().dividedBy(2);
        for (int clients : List.of(1, 8)) {
            for (WriteMode mode : MODES) {
                OutboxWriter writer = OutboxWriter.builder().mode(mode).build();
                TransferWorkload.Hook withEvent = (connection, transfer) -> {
                    OutboxTransaction tx = writer.begin(connection);
                    tx.add(OutboxMessage.builder(SyntheticEvents.AGGREGATE_TYPE, "acc-" + transfer.from(),
                            SyntheticEvents.EVENT_TYPE).payloadJson(
                                    SyntheticEvents.payload(sequence.getAndIncrement(), bytes)).build());
                    tx.commit();
                };
                double without = leg(context, db, clients, half, TransferWorkload.Hook.NONE);
                double with = leg(context, db, clients, half, withEvent);
                with = (with + leg(context, db, clients, half, withEvent)) / 2;
                without = (without + leg(context, db, clients, half, TransferWorkload.Hook.NONE)) / 2;
                m.put(key(mode, clients), with / without);
            }
        }
        return m;
    }
}
