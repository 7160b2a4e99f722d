package dev.outboxkit.relay.poller;

import dev.outboxkit.core.Secret;
import dev.outboxkit.core.TopicRoute;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;

/**
 * A polling relay in a child JVM, for kill -9 / SIGSTOP tests: starts from its arguments and runs
 * until SIGTERM, which closes it gracefully (the shutdown hook).
 *
 * <p>Arguments: jdbcUrl user password bootstrapServers topic instanceId leaseMillis batchSize.
 */
public final class RelayMain {

    private RelayMain() {
    }

    public static void main(String[] args) throws Exception {
        PollingRelay relay = PollingRelay.builder()
                .jdbcUrl(args[0]).user(args[1]).password(Secret.of(args[2]))
                .bootstrapServers(args[3])
                .route(TopicRoute.of(args[4]))
                .instanceId(args[5])
                .leaseDuration(Duration.ofMillis(Long.parseLong(args[6])))
                .batchSize(Integer.parseInt(args[7]))
                .build();
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            relay.close();
            System.out.println("RELAY STOPPED " + args[5]);
            stopped.countDown();
        }, "relay-main-stop"));
        relay.start();
        System.out.println("RELAY STARTED " + args[5]);
        stopped.await();
    }
}
