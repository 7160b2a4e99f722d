package dev.outboxkit.benchmarks.scenarios;

import dev.outboxkit.benchmarks.BenchContext;
import dev.outboxkit.benchmarks.Measurements;
import dev.outboxkit.benchmarks.Metric;
import dev.outboxkit.benchmarks.MetricCatalog;
import dev.outboxkit.benchmarks.Scenario;
import dev.outboxkit.benchmarks.load.KafkaAckObserver;
import dev.outboxkit.benchmarks.load.LatencyTracker;
import dev.outboxkit.benchmarks.load.OpenLoopDriver;
import dev.outboxkit.benchmarks.load.OutboxInsertTarget;
import dev.outboxkit.benchmarks.load.PhaseCpu;
import dev.outboxkit.benchmarks.load.SyntheticEvents;
import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.relay.KafkaRecords;
import dev.outboxkit.relay.ProducerSafety;
import dev.outboxkit.testkit.TestDatabase;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.producer.KafkaProducer;

/**
 * {@code dual_write_p50_ms_at_<rate>}, {@code dual_write_p99_ms_at_<rate>}: the floor of a relay's latency under the
 * relay scenarios' own database write load. The same open-loop writers ({@link RelayLatency#WRITERS} threads, one
 * insert per transaction into {@code outbox_event}) commit at the same rates, and each writer sends its event's record
 * itself right after the commit (a dual write: no relay, the relays' producer settings), seen by the same in-JVM
 * consumer. What a relay adds over it is its own work (claims, deletes or decoding, and waiting for its turn), where
 * {@code kafka_…} leaves out the writers' commits that compete with the relay for this machine's CPU.
 */
public final class DualWriteLatencyFloor implements Scenario {

    static final String SYSTEM = MetricCatalog.DUAL_WRITE;

    @Override
    public String name() {
        return "dual_write_latency_floor";
    }

    @Override
    public List<Metric> metrics() {
        return MetricCatalog.latencyFloor(SYSTEM, "commit→ack when each writer sends its record itself right after its"
                + " commit (no relay; the relay scenarios' writers and inserts)", "the floor of relay latency under the"
                + " same database write load");
    }

    @Override
    public Measurements run(BenchContext context) throws Exception {
        TestDatabase db = context.newDatabase();
        String topic = context.uniqueTopic("dual-write-latency");
        context.kafka().createTopic(topic, BacklogDrain.PARTITIONS);
        String bootstrap = context.kafka().bootstrapServers();
        KafkaRecords mapping = new KafkaRecords(TopicRoute.of(topic));
        int bytes = context.payloadBytes();
        Measurements m = new Measurements();
        AtomicReference<Exception> refused = new AtomicReference<>();
        try (KafkaProducer<byte[], byte[]> producer =
                     new KafkaProducer<>(ProducerSafety.producerConfig(bootstrap, Map.of()))) {
            OpenLoopDriver.TargetFactory targets = () -> {
                OpenLoopDriver.Target insert = OutboxInsertTarget.factory(db, BacklogDrain.SCHEMA, bytes).open();
                return new OpenLoopDriver.Target() {
                    @Override
                    public void send(long n, OpenLoopDriver.Commit commit) throws Exception {
                        insert.send(n, id -> {
                            commit.done(id);
                            producer.send(mapping.toRecord(SyntheticEvents.event(id, n, bytes, Instant.now())),
                                    (metadata, e) -> {
                                        if (e != null) {
                                            refused.compareAndSet(null, e);
                                        }
                                    });
                        });
                    }

                    @Override
                    public void close() throws Exception {
                        insert.close();
                    }
                };
            };
            for (int rate : context.sizes().latencyRates()) {
                LatencyTracker tracker = new LatencyTracker();
                try (KafkaAckObserver acks = KafkaAckObserver.start(bootstrap, List.of(topic), tracker)) {
                    PhaseCpu cpu = PhaseCpu.start(db);
                    OpenLoopDriver.Result result = OpenLoopDriver.run(rate, context.sizes().warmup(),
                            context.sizes().latencyWindow(), context.sizes().ackTimeout(), RelayLatency.WRITERS, targets,
                            tracker, cpu::stop);
                    String machine = cpu.report(RelayLatency.PHASE);
                    if (refused.get() != null) {
                        throw new IllegalStateException("the broker refused a record: " + refused.get(), refused.get());
                    }
                    if (acks.failure() != null) {
                        throw new IllegalStateException("the ack observer failed: " + acks.failure(), acks.failure());
                    }
                    RelayLatency.writeEvidence(context, name(), rate, "### " + name() + " at " + rate
                            + " events/s (repeat " + context.repeat() + ")\n\n" + RelayLatency.writers(rate, result)
                            + "\n" + machine);
                    m.latency(result.profile(SYSTEM));
                }
            }
        }
        return m;
    }
}
