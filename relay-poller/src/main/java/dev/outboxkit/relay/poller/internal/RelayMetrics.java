package dev.outboxkit.relay.poller.internal;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * The relay's meters, all tagged {@code relay=poll}. The names are shared with the CDC relay
 * (tag {@code relay=cdc}), so one dashboard serves both.
 */
public final class RelayMetrics {

    public static final String PUBLISHED = "outbox.relay.published";
    public static final String DEAD_LETTERED = "outbox.relay.dead_lettered";
    public static final String BATCH_SIZE = "outbox.relay.batch.size";
    public static final String COMMIT_TO_ACK = "outbox.relay.commit_to_ack";
    public static final String BACKLOG = "outbox.relay.backlog";
    public static final String OLDEST_AGE = "outbox.relay.oldest_unpublished_age_seconds";
    public static final String LEASES_HELD = "outbox.relay.leases.held";
    public static final String FENCE_REJECTIONS = "outbox.relay.fence.rejections";
    public static final String REBALANCES = "outbox.relay.rebalances";
    public static final String RETRIES = "outbox.relay.retries";

    private final Counter published;
    private final Counter deadLettered;
    private final DistributionSummary batchSize;
    private final Timer commitToAck;
    private final Counter fenceRejections;
    private final Counter rebalances;
    private final Counter retries;
    private final AtomicLong backlog = new AtomicLong(-1);
    private final AtomicLong oldestAgeMicros = new AtomicLong(0);

    public RelayMetrics(MeterRegistry registry, Supplier<Integer> leasesHeld) {
        Tags tags = Tags.of("relay", "poll");
        published = Counter.builder(PUBLISHED).tags(tags)
                .description("Outbox rows whose Kafka record was acknowledged").register(registry);
        deadLettered = Counter.builder(DEAD_LETTERED).tags(tags)
                .description("Outbox rows parked in outbox_dead_letter").register(registry);
        batchSize = DistributionSummary.builder(BATCH_SIZE).tags(tags).baseUnit("rows")
                .description("Rows per claimed batch").register(registry);
        commitToAck = Timer.builder(COMMIT_TO_ACK).tags(tags)
                .description("From the row's created_at to Kafka's acknowledgement of its record").register(registry);
        fenceRejections = Counter.builder(FENCE_REJECTIONS).tags(tags)
                .description("Claims, commits or renewals rejected because this instance no longer held the lease")
                .register(registry);
        rebalances = Counter.builder(REBALANCES).tags(tags)
                .description("Changes of the set of partitions this instance holds").register(registry);
        retries = Counter.builder(RETRIES).tags(tags)
                .description("Batches given back after a retriable Kafka or database failure").register(registry);
        Gauge.builder(BACKLOG, backlog, AtomicLong::doubleValue).tags(tags).baseUnit("rows")
                .description("Unpublished rows in outbox_event (all partitions; -1 until first measured)").register(registry);
        Gauge.builder(OLDEST_AGE, oldestAgeMicros, a -> a.get() / 1e6).tags(tags).baseUnit("seconds")
                .description("Age of the oldest unpublished row (0 when there is none)").register(registry);
        Gauge.builder(LEASES_HELD, leasesHeld, s -> s.get()).tags(tags)
                .description("Partition leases this instance holds").strongReference(true).register(registry);
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

    void retried() {
        retries.increment();
    }

    void backlog(long rows) {
        backlog.set(rows);
    }

    void oldestAge(Duration age) {
        oldestAgeMicros.set(age.toNanos() / 1000);
    }
}
