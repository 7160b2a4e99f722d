package dev.outboxkit.benchmarks.scenarios;

import dev.outboxkit.benchmarks.BenchContext;
import dev.outboxkit.benchmarks.Measurements;
import dev.outboxkit.benchmarks.Metric;
import dev.outboxkit.benchmarks.MetricCatalog;
import dev.outboxkit.benchmarks.Scenario;
import dev.outboxkit.benchmarks.load.ClosedLoop;
import dev.outboxkit.benchmarks.load.SyntheticEvents;
import dev.outboxkit.benchmarks.load.TransferWorkload;
import dev.outboxkit.core.EventIds;
import dev.outboxkit.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import org.postgresql.PGConnection;

/**
 * {@code notify_commit_ratio}: what a {@code pg_notify} in every writer transaction costs.
 * PostgreSQL serialises the commits of notifying transactions on one lock, so this is the price
 * of waking a relay by LISTEN/NOTIFY. Each client's transaction updates one account and inserts
 * one outbox row in one statement, then commits; the NOTIFY variant adds {@code pg_notify} to
 * that same statement, so both variants make the same two round trips and differ only by the
 * notification. Both run in the same repeat (order alternating between repeats), with a
 * listener connected, and the ratio is taken there.
 */
public final class NotifyCommitRatio implements Scenario {

    static final String CHANNEL = "outboxkit_bench";
    public static final Metric WITH = Metric.of("notify_with_tps", "commits/s",
            "writer commits/s with a pg_notify in each transaction (update + outbox insert), 8 clients");
    public static final Metric WITHOUT = Metric.of("notify_without_tps", "commits/s",
            "writer commits/s of the same transactions without pg_notify, 8 clients");

    @Override
    public String name() {
        return "notify_commit";
    }

    @Override
    public List<Metric> metrics() {
        return List.of(MetricCatalog.NOTIFY_COMMIT_RATIO, WITH, WITHOUT);
    }

    @Override
    public Measurements run(BenchContext context) throws Exception {
        TestDatabase db = context.newDatabase();
        TransferWorkload.createAccounts(db);
        AtomicBoolean stop = new AtomicBoolean();
        Thread listener = listen(db, stop);
        try {
            boolean notifyFirst = context.repeat() % 2 == 0;
            double first = measure(db, context, notifyFirst);
            double second = measure(db, context, !notifyFirst);
            double with = notifyFirst ? first : second;
            double without = notifyFirst ? second : first;
            return new Measurements()
                    .put(MetricCatalog.NOTIFY_COMMIT_RATIO.key(), with / without)
                    .put(WITH.key(), with)
                    .put(WITHOUT.key(), without);
        } finally {
            stop.set(true);
            listener.join(30_000);
        }
    }

    private static double measure(TestDatabase db, BenchContext context, boolean notify) throws Exception {
        try (Connection c = db.connect(); Statement s = c.createStatement()) {
            s.execute("TRUNCATE outbox_event");
            s.execute("CHECKPOINT");
        }
        String tail = notify ? "SELECT pg_notify('" + CHANNEL + "', '') FROM event" : "SELECT seq FROM event";
        String sql = "WITH moved AS (UPDATE " + TransferWorkload.ACCOUNT_TABLE + " SET balance = balance + 1 WHERE id = ?),"
                + " event AS (INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload)"
                + " VALUES (?, ?, ?, ?, ?::jsonb) RETURNING seq) " + tail;
        int payloadBytes = context.payloadBytes();
        ClosedLoop.Result result = ClosedLoop.run(db, context.sizes().clients(), context.sizes().warmup(),
                context.sizes().window(), connection -> {
                    PreparedStatement tx = connection.prepareStatement(sql);
                    return () -> {
                        int account = ThreadLocalRandom.current().nextInt(SyntheticEvents.ACCOUNTS);
                        tx.setInt(1, account);
                        tx.setObject(2, EventIds.next());
                        tx.setString(3, SyntheticEvents.AGGREGATE_TYPE);
                        tx.setString(4, SyntheticEvents.aggregateId(account));
                        tx.setString(5, SyntheticEvents.EVENT_TYPE);
                        tx.setString(6, SyntheticEvents.payload(account, payloadBytes));
                        tx.execute();
                    };
                });
        return result.perSecond();
    }

    /** A relay's LISTEN connection, draining notifications until {@code stop}. */
    private static Thread listen(TestDatabase db, AtomicBoolean stop) throws Exception {
        Connection c = db.connect();
        try (Statement s = c.createStatement()) {
            s.execute("LISTEN " + CHANNEL);
        }
        Thread t = new Thread(() -> {
            try (c) {
                PGConnection pg = c.unwrap(PGConnection.class);
                while (!stop.get()) {
                    pg.getNotifications(100);
                }
            } catch (Exception e) {
                // the listener only keeps the queue drained; its failure does not change the commit path
            }
        }, "notify-listener");
        t.setDaemon(true);
        t.start();
        return t;
    }
}
