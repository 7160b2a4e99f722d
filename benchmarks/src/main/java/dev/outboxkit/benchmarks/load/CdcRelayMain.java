package dev.outboxkit.benchmarks.load;

import dev.outboxkit.core.TopicRoute;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.Map;

/**
 * The CDC relay alone in a JVM, like {@link PollerRelayMain} for the polling relay: its defaults, on the replication
 * slot {@code slot}, until SIGTERM. Arguments {@code key=value}: jdbcUrl, user, password, bootstrap, topic, slot, and
 * optionally startFile ({@link PollerRelayMain#WAITING} until it exists). Prints {@code READY} once started.
 */
public final class CdcRelayMain {

    private CdcRelayMain() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> a = PollerRelayMain.arguments(args);
        PollerRelayMain.runUntilStopped(Relays.cdc(a.get("jdbcUrl"), a.get("user"), a.get("password"),
                a.get("bootstrap"), TopicRoute.of(a.get("topic")), a.get("slot"), new SimpleMeterRegistry()).build(), a);
    }
}
