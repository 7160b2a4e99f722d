package dev.outboxkit.benchmarks.scenarios;

import dev.outboxkit.benchmarks.BenchContext;
import dev.outboxkit.benchmarks.Measurements;
import dev.outboxkit.benchmarks.Metric;
import dev.outboxkit.benchmarks.Scenario;
import dev.outboxkit.benchmarks.load.BackToBack;
import dev.outboxkit.benchmarks.load.SyntheticEvents;
import dev.outboxkit.benchmarks.load.TransferWorkload;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.writer.OutboxMessage;
import dev.outboxkit.writer.OutboxTransaction;
import dev.outboxkit.writer.OutboxWriter;
import dev.outboxkit.writer.WriteMode;
import java.sql.PreparedStatement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code writer_tax_<mode>_<n>c}: the writer's cost per write mode, at 1 and at 8 clients: the
 * {@link TransferWorkload} without an event and with one event per transfer written in that mode, measured
 * {@link BackToBack} on the same database; the key is the ratio of the two means (1 = free). {@link WriterOutbox}
 * measures the default mode at the benchmark's client count the same way.
 *
 * <p>{@code writer_tax_raw_logical_message_<n>c} is PostgreSQL's own price of that mode, the floor under the
 * writer's: the same transfers with a hand-written {@code pg_logical_emit_message} of a ready JSON body of the
 * same size in the committing round trip (as the writer sends it), no writer at all.
 */
public final class WriterModeTax implements Scenario {

    private static final List<WriteMode> MODES = List.of(WriteMode.KEEP, WriteMode.INSERT_AND_DELETE,
            WriteMode.LOGICAL_MESSAGE);

    @Override
    public String name() {
        return "writer_modes";
    }

    /** The raw emit variant's name in its key. */
    static final String RAW_LOGICAL_MESSAGE = "raw_logical_message";

    /** The key of one mode at {@code clients} clients. */
    public static String key(WriteMode mode, int clients) {
        return key(mode.name().toLowerCase(Locale.ROOT), clients);
    }

    static String key(String variant, int clients) {
        return "writer_tax_" + variant + "_" + clients + "c";
    }

    @Override
    public List<Metric> metrics() {
        List<Metric> metrics = new ArrayList<>();
        for (int clients : List.of(1, 8)) {
            String who = clients + (clients == 1 ? " client" : " clients") + ", legs back to back";
            for (WriteMode mode : MODES) {
                metrics.add(Metric.of(key(mode, clients), "ratio", "transfers/s with one event written in mode " + mode
                        + " ÷ without, " + who));
            }
            metrics.add(Metric.of(key(RAW_LOGICAL_MESSAGE, clients), "ratio", "transfers/s with a hand-written"
                    + " pg_logical_emit_message of the same size in the commit's round trip ÷ without (PostgreSQL's own"
                    + " price of LOGICAL_MESSAGE mode, no writer), " + who));
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
                TransferWorkload.Hook withEvent = (connection, transfer) -> {
                    OutboxTransaction tx = writer.begin(connection);
                    tx.add(OutboxMessage.builder(SyntheticEvents.AGGREGATE_TYPE, "acc-" + transfer.from(),
                            SyntheticEvents.EVENT_TYPE).payloadJson(
                                    SyntheticEvents.payload(sequence.getAndIncrement(), bytes)).build());
                    tx.commit();
                };
                m.put(key(mode, clients), backToBack(context, db, clients, withEvent));
            }
            // The emit the writer sends, with a body made beforehand, committed in the same round trip.
            String body = SyntheticEvents.payload(0, bytes + RAW_ENVELOPE_BYTES);
            TransferWorkload.Hook rawEmit = (connection, transfer) -> {
                try (PreparedStatement ps = connection.prepareStatement(
                        "SELECT pg_catalog.pg_logical_emit_message(true, 'outboxkit', ?);\nCOMMIT")) {
                    ps.setString(1, body);
                    ps.execute();
                }
            };
            m.put(key(RAW_LOGICAL_MESSAGE, clients), backToBack(context, db, clients, rawEmit));
        }
        return m;
    }

    /**
     * What the writer's message adds around a payload (member names, id, aggregate, type, topic, headers, time and
     * the payload's quoting: 238 bytes for the benchmark's event), so the raw body is as long as the writer's.
     */
    private static final int RAW_ENVELOPE_BYTES = 240;

    private static double backToBack(BenchContext context, TestDatabase db, int clients, TransferWorkload.Hook with)
            throws Exception {
        return TransferWorkload.backToBack(db, clients, context.sizes().warmup(), context.sizes().window(), with)
                .ratio();
    }
}
