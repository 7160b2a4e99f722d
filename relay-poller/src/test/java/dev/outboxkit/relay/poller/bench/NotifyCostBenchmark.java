package dev.outboxkit.relay.poller.bench;

import dev.outboxkit.testkit.OutboxTestkit;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestPostgres;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

/**
 * What LISTEN/NOTIFY costs a writer: commits per second of 8 clients, each transaction one
 * outbox INSERT, without and with a statement-level trigger that calls {@code pg_notify}
 * (PostgreSQL serialises notifying commits on one global lock). Durable server (fsync on).
 * Not a test: run with {@code exec:java} or from the IDE; prints one table.
 *
 * <p>Arguments: seconds per round (default 10), rounds (default 2), clients (default 8).
 */
public final class NotifyCostBenchmark {

    private NotifyCostBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 10;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 2;
        int clients = args.length > 2 ? Integer.parseInt(args[2]) : 8;
        try (TestPostgres pg = OutboxTestkit.startEmbeddedPostgres(0, true)) {
            TestDatabase db = pg.newDatabase();
            List<String> lines = new ArrayList<>();
            for (int round = 1; round <= rounds; round++) {
                for (boolean notify : new boolean[] {false, true}) {
                    setTrigger(db, notify);
                    double rate = run(db, clients, seconds);
                    String line = String.format("round %d  %-22s %,10.0f commits/s  (%d clients, %d s)", round,
                            notify ? "with pg_notify trigger" : "without NOTIFY", rate, clients, seconds);
                    System.out.println(line);
                    lines.add(line);
                }
            }
            System.out.println("\n== NOTIFY cost (durable PostgreSQL 17, one outbox INSERT per transaction) ==");
            lines.forEach(System.out::println);
            pg.drop(db);
        }
    }

    static void setTrigger(TestDatabase db, boolean on) throws Exception {
        try (Connection c = db.connect(); Statement s = c.createStatement()) {
            s.execute("DROP TRIGGER IF EXISTS outbox_event_notify ON outbox_event");
            if (on) {
                s.execute("CREATE TRIGGER outbox_event_notify AFTER INSERT ON outbox_event "
                        + "FOR EACH STATEMENT EXECUTE FUNCTION outbox_event_notify()");
            }
            s.execute("TRUNCATE outbox_event");
        }
    }

    static double run(TestDatabase db, int clients, int seconds) throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        LongAdder commits = new LongAdder();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < clients; i++) {
            int client = i;
            Thread t = new Thread(() -> {
                try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement(
                        "INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload) "
                                + "VALUES (?, 'order', ?, 'created', '{\"n\":1}'::jsonb)")) {
                    c.setAutoCommit(false);
                    long n = 0;
                    while (!stop.get()) {
                        ps.setObject(1, UUID.randomUUID());
                        ps.setString(2, "c" + client + "-" + (n++ % 1000));
                        ps.executeUpdate();
                        c.commit();
                        commits.increment();
                    }
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            threads.add(t);
        }
        threads.forEach(Thread::start);
        Thread.sleep(1000); // warm-up
        long start = System.nanoTime();
        long before = commits.sum();
        Thread.sleep(seconds * 1000L);
        long after = commits.sum();
        double elapsed = (System.nanoTime() - start) / 1e9;
        stop.set(true);
        for (Thread t : threads) {
            t.join();
        }
        return (after - before) / elapsed;
    }
}
