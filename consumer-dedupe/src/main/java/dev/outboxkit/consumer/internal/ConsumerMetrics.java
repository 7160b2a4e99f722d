package dev.outboxkit.consumer.internal;

import dev.outboxkit.runtime.KafkaWrites;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.Collections;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Not API: public for {@code dev.outboxkit.consumer.DedupeConsumer}.
 *
 * <p>The consumer's meters, all tagged with {@code group}. Instances of one group that share a
 * registry share the counters (they add up), one lag gauge that sums the lag of every running
 * instance, and one acknowledgement-silence gauge that shows the longest of theirs.
 */
public final class ConsumerMetrics implements AutoCloseable {

    private static final Map<MeterRegistry, Map<String, Set<AtomicLong>>> LAGS =
            Collections.synchronizedMap(new WeakHashMap<>());
    private static final Map<MeterRegistry, Map<String, Set<KafkaWrites>>> SILENCES =
            Collections.synchronizedMap(new WeakHashMap<>());

    public final Counter applied;
    public final Counter duplicates;
    public final Counter deadLettered;
    public final Counter lateArrivals;
    public final Counter retries;
    public final Timer handler;
    public final Timer inbox;
    public final AtomicLong lag = new AtomicLong();
    /**
     * The consumer's writes to Kafka (offset commits, dead-letter and late-arrival records) until answered: its
     * readiness rule for writes ({@link KafkaWrites}) and the {@code outbox.consumer.kafka.ack_silence} gauge.
     */
    public final KafkaWrites kafkaWrites = new KafkaWrites("offset commits and forwarded records");
    private final Set<AtomicLong> groupLags;
    private final Set<KafkaWrites> groupSilences;

    public ConsumerMetrics(MeterRegistry registry, String group) {
        applied = Counter.builder("outbox.consumer.applied").tag("group", group)
                .description("Events applied (new ids, handler committed)").register(registry);
        duplicates = Counter.builder("outbox.consumer.duplicates").tag("group", group)
                .description("Deliveries skipped because the group had already applied the event id").register(registry);
        deadLettered = Counter.builder("outbox.consumer.dead_lettered").tag("group", group)
                .description("Records sent to the dead-letter topic (undecodable, or the handler kept failing)").register(registry);
        lateArrivals = Counter.builder("outbox.consumer.late_arrivals").tag("group", group)
                .description("New events older than the retention window").register(registry);
        retries = Counter.builder("outbox.consumer.retries").tag("group", group)
                .description("Transactions rolled back and tried again (transient database errors and handler failures)")
                .register(registry);
        handler = Timer.builder("outbox.consumer.handler").tag("group", group)
                .description("Time in the handler per transaction (one poll batch, or one event while isolating a failure)")
                .register(registry);
        inbox = Timer.builder("outbox.consumer.inbox").tag("group", group)
                .description("Time recording a transaction's event ids in processed_event (the inbox's own cost)")
                .register(registry);
        synchronized (LAGS) {
            Map<String, Set<AtomicLong>> byGroup = LAGS.computeIfAbsent(registry, r -> new ConcurrentHashMap<>());
            groupLags = byGroup.computeIfAbsent(group, g -> {
                Set<AtomicLong> lags = ConcurrentHashMap.newKeySet();
                Gauge.builder("outbox.consumer.lag", lags, l -> l.stream().mapToLong(AtomicLong::get).sum())
                        .tag("group", group).strongReference(true)
                        .description("Records behind the end of the assigned partitions, after the last poll, summed over "
                                + "this group's running instances").register(registry);
                return lags;
            });
            groupLags.add(lag);
        }
        synchronized (SILENCES) {
            Map<String, Set<KafkaWrites>> byGroup = SILENCES.computeIfAbsent(registry, r -> new ConcurrentHashMap<>());
            groupSilences = byGroup.computeIfAbsent(group, g -> {
                Set<KafkaWrites> writes = ConcurrentHashMap.newKeySet();
                Gauge.builder("outbox.consumer.kafka.ack_silence", writes,
                                w -> w.stream().mapToDouble(KafkaWrites::silenceSeconds).max().orElse(0))
                        .tag("group", group).baseUnit("seconds").strongReference(true)
                        .description("How long Kafka has acknowledged none of the consumer's waiting writes (offset "
                                + "commits, forwarded records), longest of this group's running instances; 0 while "
                                + "acknowledgements flow or nothing waits; from 5 s the instance is not ready")
                        .register(registry);
                return writes;
            });
            groupSilences.add(kafkaWrites);
        }
    }

    /** This instance stopped: its lag no longer counts. */
    @Override
    public void close() {
        lag.set(0);
        groupLags.remove(lag);
        groupSilences.remove(kafkaWrites);
    }
}
