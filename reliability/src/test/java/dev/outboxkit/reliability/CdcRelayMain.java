package dev.outboxkit.reliability;

import dev.outboxkit.core.Secret;
import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.relay.cdc.CdcRelay;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;

/**
 * The CDC relay ({@link CdcRelay}) in a child JVM of the reliability suite (kill -9, SIGSTOP), running
 * as the least-privileged replication role it is given. Runs until SIGTERM, which closes it gracefully.
 *
 * <p>Arguments: jdbcUrl user bootstrapServers topic instanceId leaseMillis slot deleteAfterPublish.
 * The password comes from the environment variable {@code RELAY_DB_PASSWORD}, never from the command
 * line. It prints {@code RELAY STARTED <instance>} once {@code start()} returned, then every change of
 * its state: {@code ROLE ACTIVE|STANDBY|...}, {@code READY <epoch millis> <detail>} (streaming) and
 * {@code NOT READY <epoch millis> <detail>}, {@code FENCE_REJECTIONS <n>};
 * {@code FAILED <detail>} and exit status 3 when the relay stopped for good.
 */
public final class CdcRelayMain {

    private CdcRelayMain() {
    }

    public static void main(String[] args) throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        CdcRelay relay = CdcRelay.builder()
                .jdbcUrl(args[0]).user(args[1]).password(Secret.of(System.getenv("RELAY_DB_PASSWORD")))
                .bootstrapServers(args[2])
                .route(TopicRoute.of(args[3]))
                .instanceId(args[4])
                .leaseDuration(Duration.ofMillis(Long.parseLong(args[5])))
                .slotName(args[6])
                .deleteAfterPublish(Boolean.parseBoolean(args[7]))
                .heartbeatInterval(Duration.ofSeconds(1))
                .offsetFlushInterval(Duration.ofMillis(200))
                .shutdownTimeout(Duration.ofSeconds(15))
                .meterRegistry(registry)
                .build();
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            relay.close();
            System.out.println("RELAY STOPPED " + args[4]);
            System.out.flush();
            stopped.countDown();
        }, "relay-main-stop"));
        relay.start();
        System.out.println("RELAY STARTED " + args[4]);
        String role = "";
        boolean ready = false;
        long rejections = 0;
        while (!stopped.await(50, java.util.concurrent.TimeUnit.MILLISECONDS)) {
            CdcRelay.Role now = relay.role();
            if (!now.name().equals(role)) {
                role = now.name();
                System.out.println("ROLE " + role);
            }
            dev.outboxkit.relay.Relay.Health health = relay.health();
            boolean streaming = now == CdcRelay.Role.ACTIVE && health.ready();
            if (streaming != ready) {
                ready = streaming;
                System.out.println((ready ? "READY " : "NOT READY ") + System.currentTimeMillis() + " " + health.detail());
            }
            Counter fenced = registry.find("outbox.relay.fence.rejections").counter();
            long n = fenced == null ? 0 : (long) fenced.count();
            if (n != rejections) {
                rejections = n;
                System.out.println("FENCE_REJECTIONS " + n);
            }
            if (now == CdcRelay.Role.FAILED) {
                System.out.println("FAILED " + relay.health().detail());
                System.out.flush();
                Runtime.getRuntime().halt(3);
            }
        }
    }
}
