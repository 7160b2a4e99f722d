package dev.outboxkit.runtime;

import dev.outboxkit.relay.RelayMetric;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Timer;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Not API: the meters both relays register with the same meaning (published, dead-lettered, batch size, commit to
 * acknowledgement, fence rejections, takeovers, Kafka reachable, Kafka's acknowledgement silence), registered once here from the {@link RelayMetric}
 * catalog; each relay's meter class extends it with its own ({@code RelayMetrics}, {@code CdcMetrics}), so one
 * dashboard serves both.
 */
public abstract class CommonMeters {

    /** Records Kafka acknowledged. */
    public final Counter published;
    /** Rows parked in {@code outbox_dead_letter}. */
    public final Counter deadLettered;
    /** Rows per batch. */
    public final DistributionSummary batchSize;
    /** From the row's commit to Kafka's acknowledgement. */
    public final Timer commitToAck;
    /** Writes refused because another instance took the lease. */
    public final Counter fenceRejections;
    /** Leases taken from another holder, by reason. */
    public final Takeovers takeovers;
    /** The {@code outbox.relay.kafka.reachable} value, which the relay's Kafka probe ({@link KafkaReachability}) sets. */
    public final AtomicLong kafkaReachable = new AtomicLong();
    /**
     * The relay's records on their way to Kafka (every producer of the relay counts here, {@link StopOnFailure}):
     * its readiness rule for writes, read by {@link KafkaReachability}, and the {@code outbox.relay.kafka.ack_silence}
     * gauge.
     */
    public final KafkaWrites kafkaWrites = new KafkaWrites("records");
    /** Where the subclass registers its own meters (same tags). */
    protected final Meters meters;
    /**
     * Records this instance published since it started, for its {@link RelayReports report}: {@link #published} cannot
     * tell, since relays in one process that share a registry share that counter.
     */
    private final AtomicLong publishedHere = new AtomicLong();
    /** When Kafka last acknowledged a record of this instance (System.nanoTime), 0 before the first. */
    private volatile long lastPublishedNanos;

    protected CommonMeters(Meters meters) {
        this.meters = meters;
        published = meters.counter(RelayMetric.PUBLISHED);
        deadLettered = meters.counter(RelayMetric.DEAD_LETTERED);
        batchSize = meters.summary(RelayMetric.BATCH_SIZE);
        commitToAck = meters.timer(RelayMetric.COMMIT_TO_ACK);
        fenceRejections = meters.counter(RelayMetric.FENCE_REJECTIONS);
        takeovers = new Takeovers(meters);
        meters.gauge(RelayMetric.KAFKA_REACHABLE, kafkaReachable, AtomicLong::get);
        meters.gauge(RelayMetric.KAFKA_ACK_SILENCE, kafkaWrites, KafkaWrites::silenceSeconds);
    }

    /**
     * {@code n} records of this instance were acknowledged: counts them in {@link #published} and in this instance's
     * own tally, and notes when (one volatile write; nothing when {@code n} is 0).
     */
    public void countPublished(long n) {
        if (n <= 0) {
            return;
        }
        published.increment(n);
        publishedHere.addAndGet(n);
        lastPublishedNanos = System.nanoTime();
    }

    /** Records this instance published since it started (whatever else counts in a shared registry). */
    public long publishedHere() {
        return publishedHere.get();
    }

    /** When this instance last published (System.nanoTime), 0 before its first. */
    public long lastPublishedNanos() {
        return lastPublishedNanos;
    }
}
