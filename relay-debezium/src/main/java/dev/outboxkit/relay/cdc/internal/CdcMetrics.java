package dev.outboxkit.relay.cdc.internal;

import dev.outboxkit.relay.RelayMetric;
import dev.outboxkit.runtime.CommonMeters;
import dev.outboxkit.runtime.FailoverSlots;
import dev.outboxkit.runtime.Meters;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The CDC relay's meters, tagged {@code relay=cdc} and {@code slot}, registered from the {@link RelayMetric} catalog:
 * those it shares with the polling relay in {@link CommonMeters}, its own here; the {@code outbox.relay.cdc.*} gauges
 * are the WAL guardrails.
 */
final class CdcMetrics extends CommonMeters {

    /** {@code outbox.relay.cdc.wal_status} values: PostgreSQL's {@code pg_replication_slots.wal_status}. */
    static final int WAL_RESERVED = 0;
    static final int WAL_EXTENDED = 1;
    static final int WAL_UNRESERVED = 2;
    static final int WAL_LOST = 3;
    static final int WAL_NO_SLOT = -1;

    final Counter duplicatesSkipped;
    final AtomicLong slotLagBytes = new AtomicLong();
    final AtomicLong retainedWalBytes = new AtomicLong();
    final AtomicLong walStatus = new AtomicLong(WAL_NO_SLOT);
    final AtomicLong oldestUnackedMicros = new AtomicLong();
    final AtomicLong active = new AtomicLong();
    final AtomicLong failoverReady = new AtomicLong(FailoverSlots.NOT_SUPPORTED);
    /** What the last look found about the slot's copies on standbys ({@link FailoverSlots}), for health. */
    volatile String failoverDetail;
    private final java.util.Map<String, Counter> slotRecreated = new java.util.concurrent.ConcurrentHashMap<>();
    /** When Kafka last answered a whole batch (System.nanoTime); readiness reads it, no meter. */
    final AtomicLong lastAckNanos = new AtomicLong(System.nanoTime());

    CdcMetrics(MeterRegistry registry, String slot) {
        super(new Meters(registry, RelayMetric.CDC, Tags.of("slot", slot)));
        duplicatesSkipped = meters.counter(RelayMetric.REPLAY_SKIPPED);
        meters.gauge(RelayMetric.SLOT_LAG, slotLagBytes, AtomicLong::get);
        meters.gauge(RelayMetric.RETAINED_WAL, retainedWalBytes, AtomicLong::get);
        meters.gauge(RelayMetric.WAL_STATUS, walStatus, AtomicLong::get);
        meters.gauge(RelayMetric.OLDEST_UNACKED_AGE, oldestUnackedMicros, m -> age(m.get()));
        meters.gauge(RelayMetric.ACTIVE, active, AtomicLong::get);
        meters.gauge(RelayMetric.SLOT_FAILOVER_READY, failoverReady, AtomicLong::get);
        for (Session.SlotLoss loss : Session.SlotLoss.values()) {
            slotRecreated.put(loss.tag, meters.counter(RelayMetric.SLOT_RECREATED, Tags.of("reason", loss.tag)));
        }
    }

    /** {@code outbox.relay.cdc.slot_recreated} with this {@code reason} (each registered at start, so it reads 0). */
    Counter slotRecreated(String reason) {
        return slotRecreated.get(reason);
    }

    private static double age(long createdMicros) {
        if (createdMicros <= 0) {
            return 0;
        }
        long nowMicros = System.currentTimeMillis() * 1000;
        return Math.max(0, (nowMicros - createdMicros) / 1_000_000.0);
    }

    static int walStatusCode(String walStatus) {
        if (walStatus == null) {
            return WAL_NO_SLOT;
        }
        return switch (walStatus) {
            case "reserved" -> WAL_RESERVED;
            case "extended" -> WAL_EXTENDED;
            case "unreserved" -> WAL_UNRESERVED;
            default -> WAL_LOST;
        };
    }
}
