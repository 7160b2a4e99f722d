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

    private final JavaProcess process;

    private ChildRelay(JavaProcess process) {
        this.process = process;
    }

    static ChildRelay start(String name, TestDatabase db, TestKafka kafka, String route, boolean deleteAfterPublish,
                            String... extra) {
        List<String> args = new ArrayList<>(List.of("jdbcUrl=" + db.jdbcUrl(), "user=" + db.user(), "password=" + db.password(),
                "bootstrap=" + kafka.bootstrapServers(), "slot=" + CdcTestSupport.slotFor(db), "route=" + route,
                "deleteAfterPublish=" + deleteAfterPublish, "lease=5000", "flush=200", "heartbeat=1000", "instance=" + name));
        args.addAll(List.of(extra));
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
