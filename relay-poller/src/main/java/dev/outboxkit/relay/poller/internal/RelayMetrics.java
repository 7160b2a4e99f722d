package dev.outboxkit.relay.poller.internal;

import dev.outboxkit.relay.RelayMetric;
import dev.outboxkit.runtime.CommonMeters;
import dev.outboxkit.runtime.LeaseTable;
import dev.outboxkit.runtime.Meters;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * Not API: public for {@code dev.outboxkit.relay.poller.PollingRelay}.
 *
 * <p>The polling relay's meters, tagged {@code relay=poll}, registered from the {@link RelayMetric} catalog: those the
 * CDC relay registers too, with the same meaning, in {@link CommonMeters}, the polling relay's own here.
 */
public final class RelayMetrics extends CommonMeters {

    private final Counter rebalances;
    private final Counter retries;
    private final AtomicLong backlog = new AtomicLong(-1);
    private final AtomicLong oldestAgeMicros = new AtomicLong(0);

    public RelayMetrics(MeterRegistry registry, Supplier<Integer> leasesHeld) {
        super(new Meters(registry, RelayMetric.POLL, Tags.empty()));
        rebalances = meters.counter(RelayMetric.REBALANCES);
        retries = meters.counter(RelayMetric.RETRIES);
        meters.gauge(RelayMetric.BACKLOG, backlog, AtomicLong::doubleValue);
        meters.gauge(RelayMetric.OLDEST_UNPUBLISHED_AGE, oldestAgeMicros, a -> a.get() / 1e6);
        meters.gauge(RelayMetric.LEASES_HELD, leasesHeld, s -> s.get());
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

}
