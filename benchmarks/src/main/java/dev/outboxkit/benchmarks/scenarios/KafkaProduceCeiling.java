package dev.outboxkit.benchmarks.scenarios;

import dev.outboxkit.benchmarks.BenchContext;
import dev.outboxkit.benchmarks.Measurements;
import dev.outboxkit.benchmarks.Metric;
import dev.outboxkit.benchmarks.MetricCatalog;
import dev.outboxkit.benchmarks.Scenario;
import dev.outboxkit.benchmarks.load.SyntheticEvents;
import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.relay.KafkaRecords;
import dev.outboxkit.relay.ProducerSafety;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * {@code kafka_produce_ceiling_eps}: how fast Kafka alone takes the relays' records. One
 * producer with the relays' settings ({@link ProducerSafety#producerConfig}) sends, as fast as
 * it accepts them, the records {@link KafkaRecords} makes from backlog-like rows (built before
 * the clock starts, then cycled); acknowledgements are counted over a timed window after a
 * warm-up. No database.
 */
public final class KafkaProduceCeiling implements Scenario {

    /** Distinct records cycled through (built before timing starts). */
    static final int RECORD_POOL = 50_000;
    static final int PARTITIONS = 4;

    @Override
    public String name() {
        return "kafka_produce_ceiling";
    }

    @Override
    public List<Metric> metrics() {
        return List.of(MetricCatalog.KAFKA_PRODUCE_CEILING_EPS);
    }

    @Override
    public boolean payloadSensitive() {
        return true;
    }

    @Override
    public Measurements run(BenchContext context) throws Exception {
        String prefix = context.uniqueTopic("produce-ceiling");
        KafkaRecords mapping = new KafkaRecords(TopicRoute.of(prefix + ".${aggregateType}"));
        List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>(RECORD_POOL);
        for (int i = 0; i < RECORD_POOL; i++) {
            records.add(mapping.toRecord(SyntheticEvents.event(i, context.payloadBytes())));
        }
        String topic = records.get(0).topic();
        context.kafka().createTopic(topic, PARTITIONS);
        try {
            return new Measurements().put(MetricCatalog.KAFKA_PRODUCE_CEILING_EPS.key(),
                    produce(context.kafka().bootstrapServers(), records, context.sizes().warmup(),
                            context.sizes().window()));
        } finally {
            try (var admin = context.kafka().admin()) {
                admin.deleteTopics(List.of(topic)).all().get();
            }
        }
    }

    private static double produce(String bootstrap, List<ProducerRecord<byte[], byte[]>> records, Duration warmup,
                                  Duration window) throws Exception {
        LongAdder acks = new LongAdder();
        AtomicReference<Exception> failure = new AtomicReference<>();
        Callback callback = (metadata, e) -> {
            if (e == null) {
                acks.increment();
            } else {
                failure.compareAndSet(null, e);
            }
        };
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(ProducerSafety.producerConfig(bootstrap, Map.of()))) {
            long warmEnd = System.nanoTime() + warmup.toNanos();
            long end = warmEnd + window.toNanos();
            long a0 = -1;
            long t0 = 0;
            for (long i = 0; ; i++) {
                producer.send(records.get((int) (i % records.size())), callback);
                if ((i & 1023) == 0) {
                    long now = System.nanoTime();
                    if (failure.get() != null) {
                        throw new IllegalStateException("the broker refused a record: " + failure.get(), failure.get());
                    }
                    if (a0 < 0 && now >= warmEnd) {
                        a0 = acks.sum();
                        t0 = now;
                    } else if (now >= end) {
                        double eps = (acks.sum() - a0) / ((now - t0) / 1e9);
                        producer.flush();
                        if (failure.get() != null) {
                            throw new IllegalStateException("the broker refused a record: " + failure.get(), failure.get());
                        }
                        return eps;
                    }
                }
            }
        }
    }
}
