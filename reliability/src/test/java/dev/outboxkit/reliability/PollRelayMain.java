package dev.outboxkit.reliability;

import dev.outboxkit.core.Secret;
import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.relay.poller.PollingRelay;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;

/**
 * The polling relay in a child JVM of the reliability suite (kill -9, SIGSTOP), running as the
 * least-privileged role it is given. Runs until SIGTERM, which closes it gracefully.
 *
 * <p>Arguments: jdbcUrl user bootstrapServers topic instanceId leaseMillis. The password comes
 * from the environment variable {@code RELAY_DB_PASSWORD}, never from the command line. It prints every change of
 * its readiness: {@code READY <epoch millis> <detail>}, {@code NOT READY <epoch millis> <detail>}.
 */
public final class PollRelayMain {

    private PollRelayMain() {
    }

    public static void main(String[] args) throws Exception {
        PollingRelay relay = PollingRelay.builder()
                .jdbcUrl(args[0]).user(args[1]).password(Secret.of(System.getenv("RELAY_DB_PASSWORD")))
                .bootstrapServers(args[2])
                .route(TopicRoute.of(args[3]))
                .instanceId(args[4])
                .leaseDuration(Duration.ofMillis(Long.parseLong(args[5])))
                .batchSize(500)
                .build();
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            relay.close();
            System.out.println("RELAY STOPPED " + args[4]);
            stopped.countDown();
        }, "relay-main-stop"));
        relay.start();
        System.out.println("RELAY STARTED " + args[4]);
        boolean ready = false;
        while (!stopped.await(50, java.util.concurrent.TimeUnit.MILLISECONDS)) {
            dev.outboxkit.relay.Relay.Health health = relay.health();
            if (health.ready() != ready) {
                ready = health.ready();
                System.out.println((ready ? "READY " : "NOT READY ") + System.currentTimeMillis() + " " + health.detail());
            }
        }
    }
}
