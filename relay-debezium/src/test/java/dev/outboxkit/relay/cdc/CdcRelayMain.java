package dev.outboxkit.relay.cdc;

import dev.outboxkit.core.Secret;
import dev.outboxkit.core.TopicRoute;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.distribution.DistributionStatisticConfig;
import io.micrometer.core.instrument.distribution.ValueAtPercentile;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A CDC relay in a process of its own, for the tests that kill it (and for the benchmark). Arguments
 * are {@code key=value}: jdbcUrl, user, password, bootstrap, slot, instance, deleteAfterPublish, lease
 * (ms), flush (ms), heartbeat (ms), route. It prints {@code READY} once streaming (or {@code STANDBY}),
 * {@code PUBLISHED <n>} every 100 ms when the count changed, and {@code CLOSED} after a graceful stop
 * (SIGTERM).
 */
public final class CdcRelayMain {

    private CdcRelayMain() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> a = new HashMap<>();
        for (String arg : args) {
            int eq = arg.indexOf('=');
            a.put(arg.substring(0, eq), arg.substring(eq + 1));
        }
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        registry.config().meterFilter(new MeterFilter() {
            @Override
            public DistributionStatisticConfig configure(Meter.Id id, DistributionStatisticConfig config) {
                if (id.getName().equals("outbox.relay.commit_to_ack")) {
                    return DistributionStatisticConfig.builder().percentiles(0.5, 0.99, 0.999)
                            .expiry(Duration.ofMinutes(10)).bufferLength(1).build().merge(config);
                }
                return config;
            }
        });
        CdcRelay.Builder builder = CdcRelay.builder()
                .jdbcUrl(a.get("jdbcUrl"))
                .user(a.get("user"))
                .password(Secret.of(a.getOrDefault("password", "")))
                .bootstrapServers(a.get("bootstrap"))
                .slotName(a.get("slot"))
                .instanceId(a.getOrDefault("instance", "child-" + ProcessHandle.current().pid()))
                .deleteAfterPublish(Boolean.parseBoolean(a.getOrDefault("deleteAfterPublish", "true")))
                .leaseDuration(Duration.ofMillis(Long.parseLong(a.getOrDefault("lease", "10000"))))
                .offsetFlushInterval(Duration.ofMillis(Long.parseLong(a.getOrDefault("flush", "200"))))
                .heartbeatInterval(Duration.ofMillis(Long.parseLong(a.getOrDefault("heartbeat", "1000"))))
                .maxBatchSize(Integer.parseInt(a.getOrDefault("batch", "4096")))
                .maxInFlight(Integer.parseInt(a.getOrDefault("maxInFlight", CdcOptions.MAX_IN_FLIGHT.defaultText())))
                .meterRegistry(registry);
        if (a.containsKey("route")) {
            builder.route(TopicRoute.of(a.get("route")));
        }
        CdcRelay relay = builder.build();
        CountDownLatch closed = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            relay.close();
            Timer timer = registry.find("outbox.relay.commit_to_ack").timer();
            if (timer != null && timer.count() > 0) {
                StringBuilder line = new StringBuilder("COMMIT_TO_ACK count=" + timer.count());
                for (ValueAtPercentile p : timer.takeSnapshot().percentileValues()) {
                    line.append(String.format(" p%s=%.2fms", p.percentile() * 100, p.value(TimeUnit.MILLISECONDS)));
                }
                line.append(String.format(" max=%.2fms", timer.max(TimeUnit.MILLISECONDS)));
                System.out.println(line);
            }
            System.out.println("CLOSED");
            System.out.flush();
            closed.countDown();
        }));
        relay.start();
        String announced = "";
        String lastDetail = "";
        long last = -1;
        while (closed.getCount() > 0) {
            String state = relay.role() == CdcRelay.Role.ACTIVE && relay.health().ready() ? "READY"
                    : relay.role() == CdcRelay.Role.STANDBY ? "STANDBY" : announced;
            if (!state.equals(announced)) {
                System.out.println(state);
                announced = state;
            }
            // What the relay is doing while not ready, so a test that waits in vain for READY shows where it stood;
            // lower case, so that it can never read as one of the markers above (READY, STANDBY, PUBLISHED, ...).
            String detail = relay.health().ready() ? "" : String.valueOf(relay.health().detail()).toLowerCase(Locale.ROOT);
            if (!detail.equals(lastDetail)) {
                System.out.println("DETAIL " + detail);
                lastDetail = detail;
            }
            Counter published = registry.find("outbox.relay.published").counter();
            long n = published == null ? 0 : (long) published.count();
            if (n != last) {
                System.out.println("PUBLISHED " + n + " " + System.currentTimeMillis());
                last = n;
            }
            if (!relay.health().live() && relay.role() == CdcRelay.Role.FAILED) {
                System.out.println("FAILED " + relay.health().detail());
                System.exit(3);
            }
            Thread.sleep(25); // pacing: how often the child reports its count to the test
        }
    }
}
