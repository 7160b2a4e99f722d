package dev.outboxkit.relay.cdc.internal;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The relay's meters. Shared names with the polling relay where they mean the same thing (tag
 * {@code relay=cdc}, plus {@code slot}); the {@code outbox.relay.cdc.*} gauges are the WAL guardrails.
 */
final class CdcMetrics {

    /** {@code outbox.relay.cdc.wal_status} values: PostgreSQL's {@code pg_replication_slots.wal_status}. */
    static final int WAL_RESERVED = 0;
    static final int WAL_EXTENDED = 1;
    static final int WAL_UNRESERVED = 2;
    static final int WAL_LOST = 3;
    static final int WAL_NO_SLOT = -1;

    final Counter published;
    final Counter deadLettered;
    final DistributionSummary batchSize;
    final Timer commitToAck;
    final Counter fenceRejections;
    final Counter duplicatesSkipped;
    final AtomicLong slotLagBytes = new AtomicLong();
    final AtomicLong retainedWalBytes = new AtomicLong();
    final AtomicLong walStatus = new AtomicLong(WAL_NO_SLOT);
    final AtomicLong oldestUnackedMicros = new AtomicLong();
    final AtomicLong active = new AtomicLong();
    /** When Kafka last answered a whole batch (System.nanoTime); readiness reads it, no meter. */
    final AtomicLong lastAckNanos = new AtomicLong(System.nanoTime());

    CdcMetrics(MeterRegistry registry, String slot) {
        Tags tags = Tags.of("relay", "cdc", "slot", slot);
        published = Counter.builder("outbox.relay.published").tags(tags)
                .description("Events Kafka acknowledged").register(registry);
        deadLettered = Counter.builder("outbox.relay.dead_lettered").tags(tags)
                .description("Events parked in outbox_dead_letter (Kafka refused them for good)").register(registry);
        batchSize = DistributionSummary.builder("outbox.relay.batch.size").tags(tags)
                .description("Events per published batch").register(registry);
        commitToAck = Timer.builder("outbox.relay.commit_to_ack").tags(tags)
                .description("From the event's created_at to Kafka's acknowledgement").register(registry);
        fenceRejections = Counter.builder("outbox.relay.fence.rejections").tags(tags)
                .description("Writes refused because another instance holds the lease").register(registry);
        duplicatesSkipped = Counter.builder("outbox.relay.cdc.replay_skipped").tags(tags)
                .description("WAL events not published again because the start-up drain already did").register(registry);
        Gauge.builder("outbox.relay.cdc.slot_lag_bytes", slotLagBytes, AtomicLong::get).tags(tags)
                .description("WAL between the server's current position and the slot's confirmed_flush_lsn").register(registry);
        Gauge.builder("outbox.relay.cdc.retained_wal_bytes", retainedWalBytes, AtomicLong::get).tags(tags)
                .description("WAL the slot keeps on disk (current position minus restart_lsn)").register(registry);
        Gauge.builder("outbox.relay.cdc.wal_status", walStatus, AtomicLong::get).tags(tags)
                .description("Slot wal_status: 0 reserved, 1 extended, 2 unreserved, 3 lost, -1 no slot").register(registry);
        Gauge.builder("outbox.relay.cdc.oldest_unacked_age_seconds", oldestUnackedMicros, m -> age(m.get())).tags(tags)
                .description("Age of the oldest event not yet acknowledged by Kafka (0 when none)").register(registry);
        Gauge.builder("outbox.relay.cdc.active", active, AtomicLong::get).tags(tags)
                .description("1 while this instance holds the lease and streams, 0 as standby").register(registry);
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
