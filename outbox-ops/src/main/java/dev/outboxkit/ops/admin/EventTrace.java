package dev.outboxkit.ops.admin;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

/**
 * Where one event is ({@link OutboxAdmin#traceEvent}): waiting in (or kept by) {@code outbox_event}, parked in
 * {@code outbox_dead_letter}, applied by consumer groups ({@code processed_event}), recorded in the intent ledger
 * ({@code outbox_intent}). Each part is empty when the event is not there, or when the deployment has no such table.
 * Everything empty ({@link #found()} false): the event was never written, or a relay deleted it after publishing and no
 * consumer group that keeps an inbox in this database applied it, and no intent ledger remembers it.
 *
 * @param id           the event id asked for
 * @param inOutbox     its {@code outbox_event} row
 * @param deadLetter   its parked row
 * @param applications the consumer groups that applied it, earliest first
 * @param intent       its row in the intent ledger
 */
public record EventTrace(UUID id, Optional<Pending> inOutbox, Optional<DeadLetter> deadLetter,
                         List<Application> applications, Optional<Intent> intent) {

    public EventTrace {
        applications = List.copyOf(applications);
    }

    /** True when any part holds the event. */
    public boolean found() {
        return inOutbox.isPresent() || deadLetter.isPresent() || !applications.isEmpty() || intent.isPresent();
    }

    /**
     * The event's row in {@code outbox_event}.
     *
     * @param seq         its place in publication order
     * @param topic       its explicit topic; null when the relay's route template decides
     * @param attempts    failed publication attempts so far
     * @param publishedAt when a relay in {@code MARK} mode (or a {@code KEEP} writer) marked it published; null: waiting
     * @param age         how long ago it was created, by the database clock
     * @param leaseKey    the polling relay's lease its partition is worked under ({@code poll/<n>}), computed with the
     *                    partition count of the live relay instances ({@code outbox_relay_member}); null when no
     *                    polling relay instance is alive (or the CDC relay publishes this outbox)
     * @param leaseHolder the instance holding that lease now; null when nobody holds it unexpired
     */
    public record Pending(long seq, String aggregateType, String aggregateId, String eventType, String topic,
                          Instant createdAt, int attempts, Instant publishedAt, Duration age, String leaseKey,
                          String leaseHolder) {

        /** True when a relay marked the row published and kept it. */
        public boolean published() {
            return publishedAt != null;
        }
    }

    /**
     * A consumer group applied the event: its row in {@code processed_event}, which also says where the event was
     * read from (so where it was published to).
     *
     * @param topic          the topic it was read from; null when the consumer did not record it
     * @param kafkaPartition the partition; null when not recorded
     * @param kafkaOffset    the offset; null when not recorded
     */
    public record Application(String consumerGroup, Instant processedAt, String topic, Integer kafkaPartition,
                              Long kafkaOffset) {
    }

    /**
     * The event's row in the intent ledger, kept for the retention period after the outbox row is gone.
     *
     * @param createdAt   copied from the outbox row (the ledger's partition key)
     * @param publishedAt when a relay published it (deleted or marked its row); null: not published yet, parked, written
     *                    and deleted in one transaction by an {@code INSERT_AND_DELETE} writer, or forgotten while the
     *                    ledger's triggers were off
     * @param payloadHash SHA-256 of the published value, in lower-case hex
     */
    public record Intent(String aggregateType, String aggregateId, String eventType, Instant createdAt,
                         Instant publishedAt, String payloadHash) {
    }
}
