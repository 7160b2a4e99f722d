package dev.outboxkit.console.internal;

import dev.outboxkit.relay.RelayMetric;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Instant;

/**
 * Not API: events per second the relays of this process published between two readings, from their
 * {@code outbox.relay.published} counters (every relay and tag summed). Relays in other processes are not counted: the
 * database keeps no record of when an event was published once its row is gone.
 */
final class PublishRate {

    private final MeterRegistry registry;
    private double lastCount = Double.NaN;
    private Instant lastAt;
    private Instant lastPublished;

    PublishRate(MeterRegistry registry) {
        this.registry = registry;
    }

    /** The rate since the previous call; null on the first call (nothing to compare with) or when the counter went back. */
    synchronized Double next(Instant now) {
        double count = registry.find(RelayMetric.PUBLISHED.meterName()).counters().stream().mapToDouble(Counter::count).sum();
        Double rate = null;
        if (lastAt != null && now.isAfter(lastAt) && count >= lastCount) {
            rate = (count - lastCount) / ((now.toEpochMilli() - lastAt.toEpochMilli()) / 1000.0);
            if (count > lastCount) {
                lastPublished = now;
            }
        }
        lastCount = count;
        lastAt = now;
        return rate;
    }

    /**
     * The reading at which the counters were first seen higher than at the one before: the relays published within the
     * sampling interval before it. Null until then.
     */
    synchronized Instant lastPublished() {
        return lastPublished;
    }
}
