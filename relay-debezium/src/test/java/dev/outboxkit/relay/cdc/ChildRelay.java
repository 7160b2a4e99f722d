package dev.outboxkit.relay.cdc;

import dev.outboxkit.testkit.JavaProcess;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** A {@link CdcRelayMain} child process for one test database, with what tests ask of it. */
final class ChildRelay implements AutoCloseable {

    private static final Pattern PUBLISHED = Pattern.compile("PUBLISHED (\\d+) ");
    private static final Pattern PUBLISHED_AT = Pattern.compile("PUBLISHED (\\d+) (\\d+)");

    private final JavaProcess process;

    private ChildRelay(JavaProcess process) {
        this.process = process;
    }

    static ChildRelay start(String name, TestDatabase db, TestKafka kafka, String route, boolean deleteAfterPublish,
                            String... extra) {
        List<String> args = new ArrayList<>(List.of("jdbcUrl=" + db.jdbcUrl(), "user=" + db.user(), "password=" + db.password(),
                "bootstrap=" + kafka.bootstrapServers(), "slot=" + CdcTestSupport.slotFor(db), "route=" + route,
                "deleteAfterPublish=" + deleteAfterPublish, "lease=5000", "flush=200", "heartbeat=1000", "instance=" + name));
        for (String e : extra) {
            args.removeIf(a -> a.startsWith(e.substring(0, e.indexOf('=') + 1)));
            args.add(e);
        }
        return new ChildRelay(JavaProcess.start(name, CdcRelayMain.class, args, List.of(), Map.of()));
    }

    JavaProcess process() {
        return process;
    }

    /** Waits for READY; fails the test with the child's output otherwise. */
    ChildRelay awaitReady(Duration timeout) {
        if (!process.awaitOutput("READY", timeout)) {
            throw new AssertionError(process.name() + " did not become ready within " + timeout + ":\n" + process.output());
        }
        return this;
    }

    /** The last published count the child printed. */
    long published() {
        Matcher m = PUBLISHED.matcher(process.output());
        long n = 0;
        while (m.find()) {
            n = Long.parseLong(m.group(1));
        }
        return n;
    }

    /** The wall-clock millis of the first published count above {@code n} the child printed, or -1. */
    long firstPublishedAfter(long n) {
        Matcher m = PUBLISHED_AT.matcher(process.output());
        while (m.find()) {
            if (Long.parseLong(m.group(1)) > n) {
                return Long.parseLong(m.group(2));
            }
        }
        return -1;
    }

    /** Waits until the child printed a published count of at least {@code n}. */
    boolean awaitPublished(long n, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            if (published() >= n) {
                return true;
            }
            if (!process.isAlive()) {
                return false;
            }
            Thread.sleep(20);
        }
        return false;
    }

    /** The child's threads (jstack), for a test that timed out waiting for it. */
    String threadDump() {
        return process.threadDump();
    }

    /** Waits for {@code condition}; on timeout fails with the child's output, threads and the server's view. */
    void await(String what, Duration timeout, TestDatabase db, java.util.concurrent.Callable<Boolean> condition) {
        try {
            org.awaitility.Awaitility.await().atMost(timeout).pollInterval(Duration.ofSeconds(1)).until(condition);
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            throw new AssertionError(what + " did not happen within " + timeout + "; server:\n" + serverView(db) + "\n"
                    + process.name() + " output:\n" + process.output() + "\nthreads:\n" + threadDump(), e);
        }
    }

    private static String serverView(TestDatabase db) {
        StringBuilder out = new StringBuilder();
        for (String sql : new String[] {
                "SELECT slot_name, active, active_pid, confirmed_flush_lsn, restart_lsn, pg_current_wal_lsn() FROM pg_replication_slots",
                "SELECT pid, backend_type, application_name, state, wait_event_type, wait_event, left(query, 80) FROM pg_stat_activity "
                        + "WHERE datname = current_database() OR backend_type = 'walsender'",
                "SELECT pid, state, sent_lsn, write_lsn, flush_lsn, replay_lsn FROM pg_stat_replication"}) {
            try (java.sql.Connection c = db.connect(); java.sql.Statement s = c.createStatement(); java.sql.ResultSet rs = s.executeQuery(sql)) {
                int n = rs.getMetaData().getColumnCount();
                while (rs.next()) {
                    for (int i = 1; i <= n; i++) {
                        out.append(rs.getMetaData().getColumnName(i)).append('=').append(rs.getString(i)).append(' ');
                    }
                    out.append('\n');
                }
            } catch (Exception e) {
                out.append(sql).append(": ").append(e).append('\n');
            }
        }
        return out.toString();
    }

    void kill9() {
        process.kill9();
    }

    /** SIGTERM: graceful stop; returns the exit code. */
    int terminate() {
        return process.terminate(Duration.ofSeconds(120));
    }

    String output() {
        return process.output();
    }

    @Override
    public void close() {
        process.close();
    }
}
