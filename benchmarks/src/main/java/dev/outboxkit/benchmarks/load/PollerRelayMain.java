package dev.outboxkit.benchmarks.load;

import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.relay.Relay;
import dev.outboxkit.relay.poller.PollingRelay;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

/**
 * A polling relay alone in a JVM, for {@code relay_rss_mb}: started by the benchmark as a child
 * process ({@code JavaProcess}), it runs {@link PollingRelay} with its defaults until SIGTERM.
 * Arguments {@code key=value}: jdbcUrl, user, password, bootstrap, topic, and optionally startFile: then it
 * builds the relay, prints {@link #WAITING} and starts it only once that file exists, so that the benchmark can
 * time a drain from the start of the relay, not of the JVM. Prints {@code READY} once started.
 */
public final class PollerRelayMain {

    /** Printed when the relay is built and waits for its startFile. */
    public static final String WAITING = "WAITING";

    private PollerRelayMain() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> a = arguments(args);
        PollingRelay relay = Relays.poller(a.get("jdbcUrl"), a.get("user"), a.get("password"), a.get("bootstrap"), TopicRoute.of(a.get("topic")), new SimpleMeterRegistry());
        runUntilStopped(relay, a);
    }

    /**
     * Runs {@code relay} until SIGTERM: with a {@code startFile} argument it prints {@link #WAITING} and starts the
     * relay once that file exists; prints {@code READY} once started.
     */
    static void runUntilStopped(Relay relay, Map<String, String> a) throws Exception {
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            relay.close();
            stopped.countDown();
        }));
        String startFile = a.get("startFile");
        if (startFile != null) {
            System.out.println(WAITING);
            Path go = Path.of(startFile);
            Await.until("the start file " + go, () -> Files.exists(go), Duration.ofMinutes(30), 2, () -> null);
        }
        relay.start();
        System.out.println("READY");
        stopped.await();
    }

    /** A child main's {@code key=value} arguments. */
    static Map<String, String> arguments(String[] args) {
        Map<String, String> a = new HashMap<>();
        for (String arg : args) {
            int eq = arg.indexOf('=');
            if (eq < 1) {
                throw new IllegalArgumentException("arguments are key=value, got '" + arg + "'");
            }
            a.put(arg.substring(0, eq), arg.substring(eq + 1));
        }
        return a;
    }
}
