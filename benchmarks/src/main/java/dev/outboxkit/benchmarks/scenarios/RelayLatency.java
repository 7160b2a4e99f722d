package dev.outboxkit.benchmarks.scenarios;

import dev.outboxkit.benchmarks.BenchContext;
import dev.outboxkit.benchmarks.LatencyProfile;
import dev.outboxkit.benchmarks.Measurements;
import dev.outboxkit.benchmarks.Metric;
import dev.outboxkit.benchmarks.MetricCatalog;
import dev.outboxkit.benchmarks.Scenario;
import dev.outboxkit.benchmarks.load.Await;
import dev.outboxkit.benchmarks.load.KafkaAckObserver;
import dev.outboxkit.benchmarks.load.LatencyTracker;
import dev.outboxkit.benchmarks.load.OpenLoopDriver;
import dev.outboxkit.benchmarks.load.OutboxInsertTarget;
import dev.outboxkit.benchmarks.load.Relays;
import dev.outboxkit.core.Relay;
import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.relay.cdc.CdcRelay;
import dev.outboxkit.testkit.TestDatabase;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;

/**
 * {@code <relay>_p50_ms_at_<rate>}, {@code <relay>_p99_ms_at_<rate>}: commit→ack through a relay
 * with its default settings, open loop at each rate of the mode (200 and 5,000 events/s): writer
 * threads insert one event per transaction at fixed times ({@link OpenLoopDriver}), a consumer in
 * this JVM sees each record ({@link KafkaAckObserver}); both instants on one clock. One relay,
 * started on an empty table and ready before the load begins, serves the rates one after the other
 * (each with its own warm-up, excluded).
 */
public final class RelayLatency implements Scenario {

    /** Which relay. */
    public enum Kind {
        POLLER("poller"), CDC("cdc");

        final String key;

        Kind(String key) {
            this.key = key;
        }
    }

    static final int WRITERS = 4;
    private final Kind system;

    public RelayLatency(Kind system) {
        this.system = system;
    }

    @Override
    public String name() {
        return system.key + "_latency";
    }

    @Override
    public List<Metric> metrics() {
        return system == Kind.POLLER
                ? List.of(MetricCatalog.POLLER_P50_MS_AT_200, MetricCatalog.POLLER_P99_MS_AT_200, p50At5000(),
                        MetricCatalog.POLLER_P99_MS_AT_5000)
                : List.of(MetricCatalog.CDC_P50_MS_AT_200, MetricCatalog.CDC_P99_MS_AT_200, p50At5000(),
                        MetricCatalog.CDC_P99_MS_AT_5000);
    }

    private Metric p50At5000() {
        return Metric.of(LatencyProfile.key(system.key, "p50", 5000), "ms",
                "p50 commit→ack through the " + system.key + " relay at 5000 events/s offered (open loop)");
    }

    @Override
    public Measurements run(BenchContext context) throws Exception {
        TestDatabase db = context.newDatabase();
        String topic = context.uniqueTopic(system.key + "-latency");
        context.kafka().createTopic(topic, BacklogDrain.PARTITIONS);
        String bootstrap = context.kafka().bootstrapServers();
        Relay relay = system == Kind.POLLER
                ? Relays.poller(db, bootstrap, TopicRoute.of(topic), new SimpleMeterRegistry())
                : Relays.cdc(db, bootstrap, TopicRoute.of(topic), new SimpleMeterRegistry());
        Measurements m = new Measurements();
        try {
            relay.start();
            Await.until(name() + " relay ready", () -> relay.health().ready(), Duration.ofMinutes(2), 20,
                    () -> relay.health().live() ? null : "relay down: " + relay.health().detail());
            for (int rate : context.sizes().latencyRates()) {
                m.latency(measure(context, db, topic, rate));
            }
        } finally {
            relay.close();
            if (relay instanceof CdcRelay cdc) {
                db.dropReplicationSlot(cdc.slotName());
            }
        }
        return m;
    }

    private LatencyProfile measure(BenchContext context, TestDatabase db, String topic, int rate) throws Exception {
        LatencyTracker tracker = new LatencyTracker();
        try (KafkaAckObserver acks = KafkaAckObserver.start(context.kafka().bootstrapServers(), List.of(topic), tracker)) {
            OpenLoopDriver.Result result = OpenLoopDriver.run(rate, context.sizes().warmup(),
                    context.sizes().latencyWindow(), Duration.ofSeconds(30), WRITERS,
                    OutboxInsertTarget.factory(db, BacklogDrain.SCHEMA, context.payloadBytes()), tracker);
            if (acks.failure() != null) {
                throw new IllegalStateException("the ack observer failed: " + acks.failure(), acks.failure());
            }
            return result.profile(system.key);
        }
    }
}
