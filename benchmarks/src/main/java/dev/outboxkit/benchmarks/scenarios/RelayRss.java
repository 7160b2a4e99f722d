package dev.outboxkit.benchmarks.scenarios;

import dev.outboxkit.benchmarks.BenchContext;
import dev.outboxkit.benchmarks.Measurements;
import dev.outboxkit.benchmarks.Metric;
import dev.outboxkit.benchmarks.MetricCatalog;
import dev.outboxkit.benchmarks.Scenario;
import dev.outboxkit.benchmarks.load.Await;
import dev.outboxkit.benchmarks.load.Backlog;
import dev.outboxkit.benchmarks.load.PollerRelayMain;
import dev.outboxkit.benchmarks.load.ProcessMemory;
import dev.outboxkit.benchmarks.load.Relays;
import dev.outboxkit.testkit.JavaProcess;
import dev.outboxkit.testkit.TestDatabase;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * {@code relay_rss_mb}: peak resident memory ({@code VmHWM}) of the polling relay running alone in
 * its own JVM ({@link PollerRelayMain} through the testkit's {@link JavaProcess} with the sidecar's JVM
 * options, default relay settings) while it drains the backlog, read from
 * {@code /proc/<pid>/status} just before the child is stopped.
 */
public final class RelayRss implements Scenario {

    /**
     * The JVM options {@code bin/outbox} runs the sidecar with (its {@code default_java_opts}; a test
     * keeps the two equal). {@link JavaProcess} adds {@code -Xmx512m}.
     */
    public static final List<String> SIDECAR_JVM_OPTIONS = List.of("-XX:+UseSerialGC", "-Xms32m");

    @Override
    public String name() {
        return "relay_rss";
    }

    @Override
    public List<Metric> metrics() {
        return List.of(MetricCatalog.RELAY_RSS_MB);
    }

    @Override
    public Measurements run(BenchContext context) throws Exception {
        TestDatabase db = context.newDatabase();
        int backlog = context.sizes().backlogEvents();
        String topic = context.uniqueTopic("relay-rss");
        context.kafka().createTopic(topic, BacklogDrain.PARTITIONS);
        Backlog.fill(db, BacklogDrain.SCHEMA, backlog, context.payloadBytes());
        double peak;
        try (JavaProcess child = JavaProcess.start("bench-poller-rss", PollerRelayMain.class,
                List.of("jdbcUrl=" + db.jdbcUrl(), "user=" + db.user(), "password=" + db.password(),
                        "bootstrap=" + context.kafka().bootstrapServers(), "topic=" + topic),
                SIDECAR_JVM_OPTIONS, Map.of());
             Connection c = db.connect()) {
            Await.until("child relay drains " + backlog + " rows", () -> Relays.tableEmpty(c, BacklogDrain.SCHEMA),
                    BacklogDrain.drainTimeout(backlog).plusMinutes(1), 20,
                    () -> child.isAlive() ? null : "the child relay exited:\n" + child.output());
            peak = ProcessMemory.peakRssMb(child.pid());
            child.terminate(Duration.ofSeconds(60));
        }
        return new Measurements().put(MetricCatalog.RELAY_RSS_MB.key(), peak);
    }
}
