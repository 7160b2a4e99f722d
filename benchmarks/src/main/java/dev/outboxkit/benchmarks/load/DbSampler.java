package dev.outboxkit.benchmarks.load;

import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestPostgres;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * What the PostgreSQL server was doing while a latency phase ran, so that a slow phase is explained with evidence
 * and not guessed. Every {@value #PERIOD_MS} ms, on connections of its own: from
 * {@code pg_stat_activity} (the whole cluster) the relay's running statement (its age and wait event) and its open
 * transaction's age, the autovacuum workers and what they vacuum (in any database), the checkpointer's wait event
 * (anything but {@code CheckpointerMain} means a checkpoint is being written), the other sessions running a
 * statement, the oldest xmin of any session or replication slot (its age and holder); from the relay's database the outbox table's dead tuples; the WAL position. {@link #report} joins the
 * samples with the {@link LatencyTracker}'s worst latency per second of commit time, and with this JVM's garbage
 * collections meanwhile ({@link GcPauses}: the broker, the writers, the relay and the consumer share the JVM).
 */
public final class DbSampler implements AutoCloseable {

    static final int PERIOD_MS = 100;
    /** A second whose worst commit→ack is above this is "slow" in the report. */
    static final double SLOW_MS = 50;
    /**
     * An xmin horizon older than this many transactions keeps deleted outbox rows from being vacuumed or their
     * index entries from being killed, so each claim walks over them.
     */
    static final long HELD_HORIZON = 10_000;
    /** A collection at least this long counts as a pause in the report's table. */
    static final long GC_PAUSE_MS = 20;

    /** One look at the server. */
    record Sample(long nanos, double statementMs, String statementWait, double transactionMs, List<String> vacuums,
                  String checkpointer, int otherActive, long walBytes, long deadTuples, long horizonAge,
                  String horizonHolder) {
    }

    private final Connection cluster;
    private final Connection relayDb;
    private final String database;
    private final Predicate<String> relaySession;
    private final List<Sample> samples = new CopyOnWriteArrayList<>();
    private final Thread thread;
    private final GcPauses gc;
    private volatile boolean stopped;
    private volatile String failure;

    private DbSampler(TestPostgres postgres, TestDatabase db, String relayApplicationPrefix) throws SQLException {
        this.cluster = postgres.connectAdmin("postgres");
        this.relayDb = postgres.connectAdmin(db.name());
        this.database = db.name();
        this.relaySession = app -> app != null && app.startsWith(relayApplicationPrefix);
        this.thread = new Thread(this::loop, "db-sampler-" + db.name());
        this.thread.setDaemon(true);
        this.gc = GcPauses.start(); // last: nothing after it can fail and leave the listener behind
    }

    /**
     * Starts sampling; the relay's sessions are those in {@code db} whose {@code application_name} starts with
     * {@code relayApplicationPrefix}.
     */
    public static DbSampler start(TestPostgres postgres, TestDatabase db, String relayApplicationPrefix)
            throws SQLException {
        DbSampler sampler = new DbSampler(postgres, db, relayApplicationPrefix);
        sampler.thread.start();
        return sampler;
    }

    private void loop() {
        try (PreparedStatement activity = cluster.prepareStatement("""
                SELECT backend_type, datname, application_name, state, wait_event_type, wait_event,
                       extract(epoch FROM clock_timestamp() - query_start) * 1000,
                       extract(epoch FROM clock_timestamp() - xact_start) * 1000,
                       left(query, 100), age(backend_xmin)
                FROM pg_stat_activity WHERE pid <> pg_backend_pid()""");
             PreparedStatement slots = cluster.prepareStatement("""
                SELECT slot_name, greatest(age(xmin), 0), active FROM pg_replication_slots
                WHERE xmin IS NOT NULL ORDER BY age(xmin) DESC LIMIT 1""");
             PreparedStatement table = relayDb.prepareStatement("""
                SELECT coalesce((SELECT n_dead_tup FROM pg_stat_user_tables WHERE relname = 'outbox_event'
                                 ORDER BY n_dead_tup DESC LIMIT 1), 0),
                       pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint""")) {
            while (!stopped) {
                long started = System.nanoTime();
                samples.add(look(activity, slots, table, started));
                long rest = TimeUnit.MILLISECONDS.toNanos(PERIOD_MS) - (System.nanoTime() - started);
                if (rest > 0) {
                    TimeUnit.NANOSECONDS.sleep(rest); // the sampling period, not a wait for a condition
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (SQLException | RuntimeException e) {
            failure = e.toString();
        }
    }

    private Sample look(PreparedStatement activity, PreparedStatement slots, PreparedStatement table, long nanos)
            throws SQLException {
        double statementMs = 0;
        String statementWait = "";
        double transactionMs = 0;
        List<String> vacuums = new ArrayList<>();
        String checkpointer = "";
        int otherActive = 0;
        long horizonAge = 0;
        String horizonHolder = "";
        try (ResultSet rs = activity.executeQuery()) {
            while (rs.next()) {
                long xminAge = rs.getLong(10);
                if (xminAge > horizonAge) {
                    horizonAge = xminAge;
                    horizonHolder = rs.getString(1) + " " + rs.getString(2) + "/" + rs.getString(3) + " "
                            + rs.getString(4);
                }
                String type = rs.getString(1);
                String datname = rs.getString(2);
                String app = rs.getString(3);
                String state = rs.getString(4);
                String wait = rs.getString(5) == null ? "CPU" : rs.getString(5) + ":" + rs.getString(6);
                double queryMs = rs.getDouble(7);
                double xactMs = rs.getDouble(8);
                if ("autovacuum worker".equals(type)) {
                    vacuums.add(datname + ": " + rs.getString(9));
                } else if ("checkpointer".equals(type)) {
                    checkpointer = rs.getString(6) == null ? "" : rs.getString(6);
                } else if (database.equals(datname) && relaySession.test(app)) {
                    transactionMs = Math.max(transactionMs, xactMs);
                    if ("active".equals(state) && queryMs >= statementMs) {
                        statementMs = queryMs;
                        statementWait = wait;
                    }
                } else if ("client backend".equals(type) && "active".equals(state) && !database.equals(datname)) {
                    otherActive++;
                }
            }
        }
        try (ResultSet rs = slots.executeQuery()) {
            if (rs.next() && rs.getLong(2) > horizonAge) {
                horizonAge = rs.getLong(2);
                horizonHolder = "slot " + rs.getString(1) + (rs.getBoolean(3) ? " (active)" : " (inactive)");
            }
        }
        long dead;
        long wal;
        try (ResultSet rs = table.executeQuery()) {
            rs.next();
            dead = rs.getLong(1);
            wal = rs.getLong(2);
        }
        return new Sample(nanos, statementMs, statementWait, transactionMs, vacuums, checkpointer, otherActive, wal,
                dead, horizonAge, horizonHolder);
    }

    /**
     * A Markdown report: the share of slow seconds (worst commit→ack above {@value #SLOW_MS} ms) that had each
     * candidate cause, beside its share of the other seconds, and the slowest seconds one by one.
     */
    public String report(String title, LatencyTracker tracker) {
        SortedMap<Long, Double> worst = tracker.worstMillisBySecond();
        Map<Long, List<Sample>> bySecond = new TreeMap<>();
        for (Sample s : samples) {
            bySecond.computeIfAbsent(tracker.secondOf(s.nanos()), k -> new ArrayList<>()).add(s);
        }
        Map<Long, Long> gcBySecond = new TreeMap<>();
        long gcTotal = 0;
        long gcMax = 0;
        List<GcPauses.Pause> pauses = gc.pauses();
        for (GcPauses.Pause p : pauses) {
            gcBySecond.merge(tracker.secondOf(p.startNanos()), p.millis(), Long::sum);
            gcTotal += p.millis();
            gcMax = Math.max(gcMax, p.millis());
        }
        List<Second> seconds = new ArrayList<>();
        for (var e : worst.entrySet()) {
            List<Sample> in = bySecond.getOrDefault(e.getKey(), List.of());
            if (!in.isEmpty()) {
                seconds.add(Second.of(e.getKey(), e.getValue(), in, gcBySecond.getOrDefault(e.getKey(), 0L)));
            }
        }
        List<Second> slow = seconds.stream().filter(s -> s.worstMs > SLOW_MS).toList();
        List<Second> fast = seconds.stream().filter(s -> s.worstMs <= SLOW_MS).toList();
        StringBuilder out = new StringBuilder("### ").append(title).append('\n').append('\n');
        out.append(String.format(Locale.ROOT, "%d samples every %d ms; %d seconds with measured events, %d slow "
                + "(worst commit→ack > %.0f ms)%s%n%n", samples.size(), PERIOD_MS, seconds.size(), slow.size(), SLOW_MS,
                failure == null ? "" : "; the sampler stopped early: " + failure));
        out.append(String.format(Locale.ROOT, "Garbage collections of the benchmark JVM (broker, writers, relay and "
                + "consumer together) during the phase: %d, %d ms in all, the longest %d ms%n%n", pauses.size(), gcTotal,
                gcMax));
        out.append("| in the second | slow seconds | other seconds |\n|---|---:|---:|\n");
        row(out, "autovacuum on outbox_event", slow, fast, s -> s.vacuumsOutbox);
        row(out, "autovacuum elsewhere", slow, fast, s -> s.vacuumsElsewhere);
        row(out, "checkpoint being written", slow, fast, s -> s.checkpointing);
        row(out, "a relay statement running > 100 ms", slow, fast, s -> s.statementMs > 100);
        row(out, "a relay transaction open > 1 s", slow, fast, s -> s.transactionMs > 1000);
        row(out, "sessions of other databases running", slow, fast, s -> s.otherActive > 0);
        row(out, "xmin horizon > " + HELD_HORIZON + " transactions old", slow, fast,
                s -> s.horizonAge > HELD_HORIZON);
        row(out, "a GC pause of this JVM >= " + GC_PAUSE_MS + " ms", slow, fast, s -> s.gcMillis >= GC_PAUSE_MS);
        out.append('\n').append("Slowest seconds (second of commit time: worst ms; the relay's longest statement ms "
                + "and its waits; longest transaction ms; dead tuples; WAL MB/s; checkpointer; the oldest xmin's age "
                + "and holder; autovacuum; GC pause ms of this JVM):\n\n");
        seconds.stream().sorted((a, b) -> Double.compare(b.worstMs, a.worstMs)).limit(10).forEach(s ->
                out.append(String.format(Locale.ROOT, "- s%d: %.0f ms; stmt %.0f ms %s; xact %.0f ms; dead %d; "
                        + "WAL %.1f MB/s; checkpointer %s; xmin age %d (%s); %s; GC %d ms%n", s.second, s.worstMs, s.statementMs,
                        s.waits, s.transactionMs, s.deadTuples, s.walMbPerSecond,
                        s.checkpointer.isEmpty() ? "-" : s.checkpointer, s.horizonAge,
                        s.horizonHolder.isEmpty() ? "-" : s.horizonHolder,
                        s.vacuums.isEmpty() ? "no autovacuum" : String.join("; ", s.vacuums), s.gcMillis)));
        return out.toString();
    }

    private static void row(StringBuilder out, String label, List<Second> slow, List<Second> fast,
                            Predicate<Second> had) {
        out.append("| ").append(label).append(" | ").append(share(slow, had)).append(" | ").append(share(fast, had))
                .append(" |\n");
    }

    private static String share(List<Second> seconds, Predicate<Second> had) {
        long n = seconds.stream().filter(had).count();
        return seconds.isEmpty() ? "–" : n + " of " + seconds.size();
    }

    /** The samples of one second of commit time, summarised. */
    private record Second(long second, double worstMs, double statementMs, TreeSet<String> waits,
                          double transactionMs, long deadTuples, double walMbPerSecond, String checkpointer,
                          boolean checkpointing, TreeSet<String> vacuums, boolean vacuumsOutbox,
                          boolean vacuumsElsewhere, int otherActive, long horizonAge, String horizonHolder,
                          long gcMillis) {

        static Second of(long second, double worstMs, List<Sample> in, long gcMillis) {
            TreeSet<String> waits = new TreeSet<>();
            TreeSet<String> vacuums = new TreeSet<>();
            TreeSet<String> checkpointer = new TreeSet<>();
            double statement = 0;
            double transaction = 0;
            long dead = 0;
            int other = 0;
            long horizon = 0;
            String holder = "";
            for (Sample s : in) {
                if (s.horizonAge() > horizon) {
                    horizon = s.horizonAge();
                    holder = s.horizonHolder();
                }
                statement = Math.max(statement, s.statementMs());
                transaction = Math.max(transaction, s.transactionMs());
                if (!s.statementWait().isEmpty() && s.statementMs() > 10) {
                    waits.add(s.statementWait());
                }
                vacuums.addAll(s.vacuums());
                if (!s.checkpointer().isEmpty() && !"CheckpointerMain".equals(s.checkpointer())) {
                    checkpointer.add(s.checkpointer());
                }
                dead = Math.max(dead, s.deadTuples());
                other = Math.max(other, s.otherActive());
            }
            Sample first = in.get(0);
            Sample last = in.get(in.size() - 1);
            double span = (last.nanos() - first.nanos()) / 1e9;
            double wal = span > 0 ? (last.walBytes() - first.walBytes()) / 1e6 / span : 0;
            boolean outbox = vacuums.stream().anyMatch(v -> v.contains("outbox_event"));
            boolean elsewhere = vacuums.stream().anyMatch(v -> !v.contains("outbox_event"));
            return new Second(second, worstMs, statement, waits, transaction, dead, wal, String.join(",", checkpointer),
                    !checkpointer.isEmpty(), vacuums, outbox, elsewhere, other, horizon, holder, gcMillis);
        }
    }

    @Override
    public void close() throws SQLException, InterruptedException {
        stopped = true;
        gc.close();
        thread.join(TimeUnit.SECONDS.toMillis(10));
        try (cluster; relayDb) {
            // closed in reverse order
        }
    }
}
