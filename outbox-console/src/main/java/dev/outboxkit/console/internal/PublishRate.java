package dev.outboxkit.console.internal;

import dev.outboxkit.ops.admin.RelayReport;
import dev.outboxkit.relay.RelayMetric;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Not API: events per second published between two readings. Where the schema keeps the relays' reports, the whole
 * fleet's rate: every instance's {@code published} count, instance by instance, so it covers relays in every process.
 * Otherwise the rate of the relays in this process, from their {@code outbox.relay.published} counters (every relay
 * and tag summed), when the console was given their registry.
 */
final class PublishRate {

    private final MeterRegistry registry;
    private Map<String, Long> lastByInstance;
    private Instant lastFleetAt;
    private double lastCount = Double.NaN;
    private Instant lastAt;
    private Instant lastPublished;

    /** @param registry the in-process relays' registry; null when no relay runs in this process */
    PublishRate(MeterRegistry registry) {
        this.registry = registry;
    }

    /**
     * The rate since the previous reading; null on the first reading of a source (nothing to compare with), when the
     * counter went back, or when there is no source.
     *
     * @param reports the relays' reports now; null when the schema keeps none (or they could not be read)
     */
    synchronized Double next(Instant now, List<RelayReport> reports) {
        Double process = processRate(now);
        if (reports == null) {
            lastByInstance = null;
            return process;
        }
        return fleetRate(now, reports);
    }

    private Double processRate(Instant now) {
        if (registry == null) {
            return null;
        }
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
     * What the instances seen at both readings published in between, per instance (keyed by id and start, so a restart
     * under the same id starts a new count), plus the count of an instance that started after the previous reading. An
     * instance that stopped in between took its last second with it: its report is gone.
     */
    private Double fleetRate(Instant now, List<RelayReport> reports) {
        Map<String, Long> byInstance = new HashMap<>();
        long published = 0;
        for (RelayReport r : reports) {
            String key = r.instanceId() + "@" + r.startedAt();
            byInstance.put(key, r.published());
            if (lastByInstance != null) {
                Long before = lastByInstance.get(key);
                if (before != null) {
                    published += Math.max(0, r.published() - before);
                } else if (r.startedAt() != null && r.startedAt().isAfter(lastFleetAt)) {
                    published += r.published();
                }
            }
        }
        Double rate = null;
        if (lastByInstance != null && now.isAfter(lastFleetAt)) {
            rate = published / ((now.toEpochMilli() - lastFleetAt.toEpochMilli()) / 1000.0);
        }
        lastByInstance = byInstance;
        lastFleetAt = now;
        return rate;
    }

    /**
     * The reading at which the relays of this process were first seen to have published more than at the one before:
     * they published within the sampling interval before it. Null until then, and without relays in this process.
     */
    synchronized Instant lastPublished() {
        return lastPublished;
    }
}
