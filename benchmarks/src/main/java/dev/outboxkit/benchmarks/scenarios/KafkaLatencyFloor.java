package dev.outboxkit.benchmarks.scenarios;

import dev.outboxkit.benchmarks.BenchContext;
import dev.outboxkit.benchmarks.LatencyProfile;
import dev.outboxkit.benchmarks.Measurements;
import dev.outboxkit.benchmarks.Metric;
import dev.outboxkit.benchmarks.MetricCatalog;
import dev.outboxkit.benchmarks.Scenario;
import dev.outboxkit.benchmarks.load.KafkaAckObserver;
import dev.outboxkit.benchmarks.load.LatencyTracker;
import dev.outboxkit.benchmarks.load.OpenLoopDriver;
import dev.outboxkit.benchmarks.load.SyntheticEvents;
import dev.outboxkit.core.OutboxEvent;
import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.relay.KafkaRecords;
import dev.outboxkit.relay.ProducerSafety;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.producer.KafkaProducer;

/**
 * {@code kafka_p50_ms_at_<rate>}, {@code kafka_p99_ms_at_<rate>}: the floor under every relay's
 * latency — the Kafka hop alone, measured exactly as the relays are (open loop at 200 and 5,000
 * events/s, acknowledgement seen by the same in-JVM consumer), but with the producer's send in
 * place of a database commit. A relay's latency minus this floor is what the relay itself adds.
 */
public final class KafkaLatencyFloor implements Scenario {

    static final String SYSTEM = "kafka";
    static final int PARTITIONS = 4;

    @Override
    public String name() {
        return "kafka_latency_floor";
    }

    @Override
    public List<Metric> metrics() {
        return MetricCatalog.latencyFloor(SYSTEM, "send→ack of the Kafka producer alone", "the floor of relay latency");
    }

    @Override
    public Measurements run(BenchContext context) throws Exception {
        Measurements m = new Measurements();
        for (int rate : context.sizes().latencyRates()) {
            m.latency(measure(context, rate));
        }
        return m;
    }

    private static LatencyProfile measure(BenchContext context, int rate) throws Exception {
        String prefix = context.uniqueTopic("latency-floor");
        KafkaRecords mapping = new KafkaRecords(TopicRoute.of(prefix + ".${aggregateType}"));
        String topic = mapping.route().topicFor(SyntheticEvents.event(0, 1));
        context.kafka().createTopic(topic, PARTITIONS);
        String bootstrap = context.kafka().bootstrapServers();
        LatencyTracker tracker = new LatencyTracker();
        AtomicReference<Exception> refused = new AtomicReference<>();
        Duration latencyWindow = context.sizes().latencyWindow();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(ProducerSafety.producerConfig(bootstrap, Map.of()));
             KafkaAckObserver observer = KafkaAckObserver.start(bootstrap, List.of(topic), tracker)) {
            OpenLoopDriver.Result result = OpenLoopDriver.run(rate, context.sizes().warmup(), latencyWindow,
                    Duration.ofSeconds(30), 1, () -> (n, commit) -> {
                        OutboxEvent event = SyntheticEvents.event(n, context.payloadBytes());
                        commit.done(event.id());
                        producer.send(mapping.toRecord(event), (metadata, e) -> {
                            if (e != null) {
                                refused.compareAndSet(null, e);
                            }
                        });
                    }, tracker);
            if (refused.get() != null) {
                throw new IllegalStateException("the broker refused a record: " + refused.get(), refused.get());
            }
            if (observer.failure() != null) {
                throw new IllegalStateException("the ack observer failed: " + observer.failure(), observer.failure());
            }
            return result.profile(SYSTEM);
        } finally {
            try (var admin = context.kafka().admin()) {
                admin.deleteTopics(List.of(topic)).all().get();
            }
        }
    }
}
