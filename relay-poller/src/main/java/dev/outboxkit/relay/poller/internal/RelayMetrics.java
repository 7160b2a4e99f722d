package dev.outboxkit.relay.poller.internal;

import dev.outboxkit.core.RelayMetric;
import dev.outboxkit.core.internal.LeaseTable;
import dev.outboxkit.core.internal.Meters;
import dev.outboxkit.core.internal.Takeovers;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * Not API: public for {@code dev.outboxkit.relay.poller.PollingRelay}.
 *
 * <p>The polling relay's meters, tagged {@code relay=poll}, registered from the {@link RelayMetric} catalog (the WAL
 * relay registers the same names where they mean the same, so one dashboard serves both).
 */
public final class RelayMetrics {

    private final Counter published;
    private final Counter deadLettered;
    private final DistributionSummary batchSize;
    private final Timer commitToAck;
    private final Counter fenceRejections;
    private final Counter rebalances;
    private final Counter retries;
    private final Takeovers takeovers;
    private final AtomicLong backlog = new AtomicLong(-1);
    private final AtomicLong oldestAgeMicros = new AtomicLong(0);
    private final AtomicLong kafkaReachable = new AtomicLong(0);

    public RelayMetrics(MeterRegistry registry, Supplier<Integer> leasesHeld) {
        Meters meters = new Meters(registry, RelayMetric.POLL, Tags.empty());
        published = meters.counter(RelayMetric.PUBLISHED);
        deadLettered = meters.counter(RelayMetric.DEAD_LETTERED);
        batchSize = meters.summary(RelayMetric.BATCH_SIZE);
        commitToAck = meters.timer(RelayMetric.COMMIT_TO_ACK);
        fenceRejections = meters.counter(RelayMetric.FENCE_REJECTIONS);
        rebalances = meters.counter(RelayMetric.REBALANCES);
        retries = meters.counter(RelayMetric.RETRIES);
        takeovers = new Takeovers(meters);
        meters.gauge(RelayMetric.BACKLOG, backlog, AtomicLong::doubleValue);
        meters.gauge(RelayMetric.OLDEST_UNPUBLISHED_AGE, oldestAgeMicros, a -> a.get() / 1e6);
        meters.gauge(RelayMetric.LEASES_HELD, leasesHeld, s -> s.get());
        meters.gauge(RelayMetric.KAFKA_REACHABLE, kafkaReachable, AtomicLong::get);
    }
    void published(int n) {
        published.increment(n);
    }

    void deadLettered(int n) {
        deadLettered.increment(n);
    }

    void batch(int rows) {
        batchSize.record(rows);
    }

    void commitToAck(long micros) {
        commitToAck.record(Math.max(0, micros), TimeUnit.MICROSECONDS);
    }

    void fenceRejected() {
        fenceRejections.increment();
    }

    void rebalanced() {
        rebalances.increment();
    }

    void tookOver(LeaseTable.Taken taken) {
        takeovers.count(taken);
    }

    void retried() {
        retries.increment();
    }

    void backlog(long rows) {
        backlog.set(rows);
    }

    void oldestAge(Duration age) {
        oldestAgeMicros.set(age.toNanos() / 1000);
    }

    /** The {@code outbox.relay.kafka.reachable} value, which the relay's Kafka probe sets. */
    public AtomicLong kafkaReachable() {
        return kafkaReachable;
    }
}
