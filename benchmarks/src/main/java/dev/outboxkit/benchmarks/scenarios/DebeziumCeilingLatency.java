package dev.outboxkit.benchmarks.scenarios;

import dev.outboxkit.benchmarks.BenchContext;
import dev.outboxkit.benchmarks.Measurements;
import dev.outboxkit.benchmarks.Metric;
import dev.outboxkit.benchmarks.MetricCatalog;
import dev.outboxkit.benchmarks.Scenario;
import dev.outboxkit.benchmarks.load.Await;
import dev.outboxkit.benchmarks.load.LatencyTracker;
import dev.outboxkit.benchmarks.load.OpenLoopDriver;
import dev.outboxkit.benchmarks.load.OutboxInsertTarget;
import dev.outboxkit.benchmarks.load.Relays;
import dev.outboxkit.core.Secret;
import dev.outboxkit.relay.cdc.spi.DebeziumCeiling;
import dev.outboxkit.testkit.TestDatabase;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

/**
 * {@code debezium_ceiling_p50_ms_at_<rate>}, {@code debezium_ceiling_p99_ms_at_<rate>}: the floor of the WAL
 * relay's latency on the database side — commit→hand-over of Debezium Embedded alone ({@link DebeziumCeiling}: the
 * relay's connector settings, a handler that only notes each row's event id), open loop at the same rates, writers
 * and inserts as {@link RelayLatency} measures the CDC relay with. No Kafka: the "ack" is the moment Debezium hands
 * the change record to the handler. What the CDC relay adds over it is its decoding, the Kafka hop
 * ({@code kafka_p99_ms_at_<rate>}) and its deletes.
 */
public final class DebeziumCeilingLatency implements Scenario {

    static final String SYSTEM = "debezium_ceiling";

    @Override
    public String name() {
        return "debezium_ceiling_latency";
    }

    @Override
    public List<Metric> metrics() {
        return MetricCatalog.latencyFloor(SYSTEM, "commit→hand-over of Debezium Embedded alone (the CDC relay's connector"
                + " settings, no Kafka)", "the database side of the CDC relay's latency floor");
    }

    @Override
    public Measurements run(BenchContext context) throws Exception {
        TestDatabase db = context.newDatabase();
        String slot = Relays.uniqueSlot("bench_dbz_latency");
        Measurements m = new Measurements();
        // One tracker per rate; Debezium's thread reports into whichever is current.
        AtomicReference<LatencyTracker> current = new AtomicReference<>(new LatencyTracker());
        try (DebeziumCeiling alone = DebeziumCeiling.start(db.jdbcUrl(), db.user(), Secret.of(db.password()), slot,
                id -> current.get().acked(id))) {
            Await.until("Debezium alone streaming", () -> alone.records() > 0, Duration.ofMinutes(2), 20, alone::failure);
            for (int rate : context.sizes().latencyRates()) {
                LatencyTracker tracker = new LatencyTracker();
                current.set(tracker);
                OpenLoopDriver.Result result = OpenLoopDriver.run(rate, context.sizes().warmup(),
                        context.sizes().latencyWindow(), context.sizes().ackTimeout(), RelayLatency.WRITERS,
                        OutboxInsertTarget.factory(db, BacklogDrain.SCHEMA, context.payloadBytes()), tracker);
                String failure = alone.failure();
                if (failure != null) {
                    throw new IllegalStateException(failure);
                }
                m.latency(result.profile(SYSTEM));
            }
        } finally {
            db.dropReplicationSlot(slot);
        }
        return m;
    }
}
