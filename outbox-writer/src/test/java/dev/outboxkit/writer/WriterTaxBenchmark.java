package dev.outboxkit.writer;

import dev.outboxkit.testkit.OutboxTestkit;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestPostgres;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * What the outbox costs a service: transfers per second with and without outbox events, on a
 * durable PostgreSQL 17 (fsync and synchronous_commit on), in one run. A transfer updates two
 * account rows (two statements, lower id first) and commits; with the outbox it also adds 1 or 5
 * events of about 200 bytes, which {@link OutboxTransaction#commit()} sends with the COMMIT in one
 * round trip. For context it also runs the naive way (one INSERT statement per event before the
 * commit) and measures NOTIFY's cost at commit.
 *
 * <p>The variants of one setting run on the same client threads, alternating in short slices
 * (A B C A B C ...), so a machine whose load drifts (other builds) hits all of them alike; the
 * rate of a variant is the median of its slices, the ratio the median of the ratios of adjacent
 * slices.
 *
 * <p>Not a JUnit test. Run: {@code java -cp <test class path> dev.outboxkit.writer.WriterTaxBenchmark
 * [seconds per slice, default 2] [cycles, default 8]}; the command and the results are in
 * docs/performance.md, "outbox-writer: what the outbox costs".
 */
public final class WriterTaxBenchmark {

    private static final int ACCOUNTS = 10_000;
    private static final String PAYLOAD_PADDING = "x".repeat(120);
    private static final int WARM_UP_CYCLES = 1;

    enum Variant { NO_OUTBOX, OUTBOX, NAIVE_OUTBOX, OUTBOX_NOTIFY }

    private WriterTaxBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        double slice = args.length > 0 ? Double.parseDouble(args[0]) : 2;
        int cycles = args.length > 1 ? Integer.parseInt(args[1]) : 8;
        List<String> table = new ArrayList<>();
        String notifyLine;
        try (TestPostgres pg = OutboxTestkit.startEmbeddedPostgres(0, true)) {
            TestDatabase db = pg.newDatabase();
            setUp(db);
            System.out.printf(Locale.ROOT, "WriterTaxBenchmark: %s, durable (fsync, synchronous_commit on), %d cores, "
                    + "%.1f s slices, %d cycles (+%d warm-up)%n", pg.describe(), Runtime.getRuntime().availableProcessors(),
                    slice, cycles, WARM_UP_CYCLES);
            for (int clients : new int[] {1, 8}) {
                for (int events : new int[] {1, 5}) {
                    Result r = run(db, clients, events, slice, cycles, Variant.NO_OUTBOX, Variant.OUTBOX, Variant.NAIVE_OUTBOX);
                    table.add(String.format(Locale.ROOT, "| %d | %d | %.0f | %.0f | **%.2f** | %.0f | %.2f | %s | %s |",
                            events, clients, r.rate(0), r.rate(1), r.ratio(1), r.rate(2), r.ratio(2), r.cost(0), r.cost(1)));
                }
            }
            Result n = run(db, 8, 1, slice, cycles, Variant.OUTBOX, Variant.OUTBOX_NOTIFY);
            notifyLine = String.format(Locale.ROOT, "NOTIFY in every transaction (8 clients, 1 event): %.0f tx/s vs %.0f "
                    + "without, ratio %.2f", n.rate(1), n.rate(0), n.ratio(1));
            pg.drop(db);
        }
        System.out.println();
        System.out.println("| events/tx | clients | no outbox (tx/s) | outbox (tx/s) | ratio | naive: INSERT per event (tx/s) "
                + "| naive ratio | no outbox: CPU server+client, WAL per tx | outbox: CPU server+client, WAL per tx |");
        System.out.println("|---|---|---|---|---|---|---|---|---|");
        table.forEach(System.out::println);
        System.out.println();
        System.out.println(notifyLine);
    }

    /**
     * Per variant, [variant][cycle]: rates, and totals of transfers, backend CPU ns, client CPU ns
     * and WAL bytes over all measured slices.
     */
    private record Result(double[][] rates, long[] transfers, long[] serverCpu, long[] clientCpu, long[] wal) {
        String cost(int v) {
            return String.format(Locale.ROOT, "%.0f+%.0f µs, %.0f B", serverCpu[v] / 1e3 / transfers[v],
                    clientCpu[v] / 1e3 / transfers[v], (double) wal[v] / transfers[v]);
        }

        double rate(int variant) {
            return median(rates[variant]);
        }

        /** Median over cycles of (variant / first variant) in the same cycle. */
        double ratio(int variant) {
            double[] ratios = new double[rates[0].length];
            for (int i = 0; i < ratios.length; i++) {
                ratios[i] = rates[variant][i] / rates[0][i];
            }
            return median(ratios);
        }
    }

    private static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    private static void setUp(TestDatabase db) throws SQLException {
        try (Connection c = db.connect(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE account (id int PRIMARY KEY, balance bigint NOT NULL) WITH (fillfactor = 70)");
            s.execute("INSERT INTO account SELECT g, 1000000000 FROM generate_series(1, " + ACCOUNTS + ") g");
            s.execute("VACUUM ANALYZE account");
        }
    }

    private static Result run(TestDatabase db, int clients, int events, double sliceSeconds, int cycles, Variant... variants)
            throws Exception {
        try (Connection c = db.connect(); Statement s = c.createStatement()) {
            s.execute("TRUNCATE outbox_event");
            s.execute("VACUUM account");
            s.execute("CHECKPOINT");
        }
        int slices = (cycles + WARM_UP_CYCLES) * variants.length;
        AtomicInteger slice = new AtomicInteger(-1);
        AtomicLongArray done = new AtomicLongArray(slices);
        AtomicBoolean stop = new AtomicBoolean();
        CountDownLatch ready = new CountDownLatch(clients);
        List<Integer> backends = new CopyOnWriteArrayList<>();
        List<Throwable> failures = new CopyOnWriteArrayList<>();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < clients; i++) {
            Thread t = new Thread(() -> {
                try (Connection c = db.connect()) {
                    c.setAutoCommit(false);
                    Client client = new Client(c, events);
                    try (Statement st = c.createStatement(); java.sql.ResultSet rs = st.executeQuery("SELECT pg_backend_pid()")) {
                        rs.next();
                        backends.add(rs.getInt(1));
                    }
                    c.commit();
                    ready.countDown();
                    while (!stop.get()) {
                        int s = slice.get();
                        Variant v = s < 0 ? variants[0] : variants[s % variants.length];
                        client.transfer(v);
                        if (s >= 0 && slice.get() == s) {
                            done.incrementAndGet(s);
                        }
                    }
                } catch (Throwable e) {
                    failures.add(e);
                    ready.countDown();
                }
            }, "client-" + i);
            threads.add(t);
            t.start();
        }
        ready.await();
        long sliceNanos = (long) (sliceSeconds * 1e9);
        long[] elapsed = new long[slices];
        long[] serverCpu = new long[slices];
        long[] clientCpu = new long[slices];
        long[] wal = new long[slices];
        ThreadMXBean cpu = ManagementFactory.getThreadMXBean();
        try (Connection admin = db.connect(); Statement lsn = admin.createStatement()) {
            for (int s = 0; s < slices && failures.isEmpty(); s++) {
                long server0 = backendCpu(backends);
                long client0 = clientCpu(cpu, threads);
                long wal0 = walPosition(lsn);
                long start = System.nanoTime();
                slice.set(s);
                Thread.sleep(sliceNanos / 1_000_000);
                elapsed[s] = System.nanoTime() - start;
                serverCpu[s] = backendCpu(backends) - server0;
                clientCpu[s] = clientCpu(cpu, threads) - client0;
                wal[s] = walPosition(lsn) - wal0;
            }
        }
        slice.set(slices);
        stop.set(true);
        for (Thread t : threads) {
            t.join();
        }
        if (!failures.isEmpty()) {
            throw new IllegalStateException("a client failed", failures.get(0));
        }
        double[][] rates = new double[variants.length][cycles];
        long[] transfers = new long[variants.length];
        long[] serverTotal = new long[variants.length];
        long[] clientTotal = new long[variants.length];
        long[] walTotal = new long[variants.length];
        for (int s = WARM_UP_CYCLES * variants.length; s < slices; s++) {
            int v = s % variants.length;
            rates[v][s / variants.length - WARM_UP_CYCLES] = done.get(s) / (elapsed[s] / 1e9);
            transfers[v] += done.get(s);
            serverTotal[v] += serverCpu[s];
            clientTotal[v] += clientCpu[s];
            walTotal[v] += wal[s];
        }
        Result r = new Result(rates, transfers, serverTotal, clientTotal, walTotal);
        StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "  clients=%d events=%d:", clients, events));
        for (int v = 0; v < variants.length; v++) {
            line.append(String.format(Locale.ROOT, "%n    %-14s %6.0f tx/s  %s  slices %s", variants[v].name().toLowerCase(Locale.ROOT),
                    r.rate(v), r.cost(v), Arrays.toString(Arrays.stream(rates[v]).mapToLong(Math::round).toArray())));
        }
        System.out.println(line);
        return r;
    }

    /** CPU time the backends spent on a CPU, in ns (Linux /proc/<pid>/schedstat). */
    private static long backendCpu(List<Integer> pids) throws java.io.IOException {
        long total = 0;
        for (int pid : pids) {
            String stat = java.nio.file.Files.readString(java.nio.file.Path.of("/proc/" + pid + "/schedstat"));
            total += Long.parseLong(stat.substring(0, stat.indexOf(' ')));
        }
        return total;
    }

    private static long clientCpu(ThreadMXBean cpu, List<Thread> threads) {
        long total = 0;
        for (Thread t : threads) {
            total += Math.max(0, cpu.getThreadCpuTime(t.getId()));
        }
        return total;
    }

    private static long walPosition(Statement s) throws SQLException {
        try (java.sql.ResultSet rs = s.executeQuery("SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::bigint")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /** One client's connection and statements. */
    private static final class Client {
        private static final OutboxWriter WRITER = OutboxWriter.builder().build();
        private static final OutboxWriter NOTIFYING_WRITER = OutboxWriter.builder().notifyChannel("outbox_event").build();

        private final Connection c;
        private final int events;
        private final PreparedStatement debit;
        private final PreparedStatement credit;
        private final PreparedStatement naiveInsert;

        Client(Connection c, int events) throws SQLException {
            this.c = c;
            this.events = events;
            this.debit = c.prepareStatement("UPDATE account SET balance = balance - ? WHERE id = ?");
            this.credit = c.prepareStatement("UPDATE account SET balance = balance + ? WHERE id = ?");
            this.naiveInsert = c.prepareStatement("INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, "
                    + "topic, payload, headers) VALUES (?, ?, ?, ?, ?, ?::jsonb, ?::jsonb)");
        }

        void transfer(Variant variant) throws SQLException {
            ThreadLocalRandom random = ThreadLocalRandom.current();
            int a = random.nextInt(1, ACCOUNTS + 1);
            int b = random.nextInt(1, ACCOUNTS);
            if (b >= a) {
                b++;
            }
            long amount = random.nextLong(1, 100);
            // lower id first: concurrent transfers never deadlock
            int first = Math.min(a, b);
            int second = Math.max(a, b);
            PreparedStatement ps1 = first == a ? debit : credit;
            PreparedStatement ps2 = first == a ? credit : debit;
            switch (variant) {
                case NO_OUTBOX -> {
                    update(ps1, first, amount);
                    update(ps2, second, amount);
                    c.commit();
                }
                case OUTBOX, OUTBOX_NOTIFY -> {
                    OutboxTransaction tx = (variant == Variant.OUTBOX ? WRITER : NOTIFYING_WRITER).begin(c);
                    update(ps1, first, amount);
                    update(ps2, second, amount);
                    for (int i = 0; i < events; i++) {
                        tx.add(OutboxMessage.builder("account", Integer.toString(a), "MoneySent")
                                .payloadJson(payload(a, b, amount, i)).build());
                    }
                    tx.commit();
                }
                case NAIVE_OUTBOX -> {
                    update(ps1, first, amount);
                    update(ps2, second, amount);
                    for (int i = 0; i < events; i++) {
                        naiveInsert.setObject(1, UUID.randomUUID());
                        naiveInsert.setString(2, "account");
                        naiveInsert.setString(3, Integer.toString(a));
                        naiveInsert.setString(4, "MoneySent");
                        naiveInsert.setString(5, null);
                        naiveInsert.setString(6, payload(a, b, amount, i));
                        naiveInsert.setString(7, "{}");
                        naiveInsert.executeUpdate();
                    }
                    c.commit();
                }
            }
        }

        private static void update(PreparedStatement ps, int account, long amount) throws SQLException {
            ps.setLong(1, amount);
            ps.setInt(2, account);
            ps.executeUpdate();
        }

        private static String payload(int from, int to, long amount, int i) {
            return "{\"from\": " + from + ", \"to\": " + to + ", \"amount\": " + amount + ", \"leg\": " + i
                    + ", \"memo\": \"" + PAYLOAD_PADDING + "\"}";
        }
    }
}
