package dev.outboxkit.ops.admin;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

/**
 * Where one event is ({@link OutboxAdmin#traceEvent}): waiting in (or kept by) {@code outbox_event}, parked in
 * {@code outbox_dead_letter}, applied by consumer groups ({@code processed_event}), recorded in the intent ledger
 * ({@code outbox_intent}), looked at by reconciliation (the operations journal, {@code outbox_ops_journal}). Each part is
 * empty when the event is not there, or when the deployment has no such table.
 * Everything empty ({@link #found()} false): the event was never written, or a relay deleted it after publishing and no
 * consumer group that keeps an inbox in this database applied it, and no intent ledger remembers it.
 *
 * @param id           the event id asked for
 * @param inOutbox     its {@code outbox_event} row
 * @param deadLetter   its parked row
 * @param applications the consumer groups that applied it, earliest first
 * @param intent       its row in the intent ledger
 * @param reconciled   what the newest reconciliation run that looked at it said, among the latest runs the journal holds
 * @param traceId      the W3C trace id (32 lower-case hex digits) of the span that wrote it, from the {@code traceparent}
 *                     the writer stored in its row's {@code headers} ({@code outbox_event}'s, else the dead letter's);
 *                     null when the row has none or a malformed one, or when the event is in neither table
 */
public record EventTrace(UUID id, Optional<Pending> inOutbox, Optional<DeadLetter> deadLetter,
                         List<Application> applications, Optional<Intent> intent, Optional<Reconciliation> reconciled,
                         String traceId) {

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

    /**
     * What a reconciliation run said of the event, from its entry in the operations journal.
     *
     * @param journalId the run's entry
     * @param ranAt     when the run finished
     * @param actor     who ran it
     * @param since     the start of the window of intents it compared with the consumers' effects
     * @param until     the end of that window
     * @param verdict   what it found
     * @param findings  the kinds of its findings that name the event ({@code lost}, {@code duplicate_effect}, …); empty
     *                  unless the verdict is {@link Verdict#FINDING}
     */
    public record Reconciliation(long journalId, Instant ranAt, String actor, Instant since, Instant until, Verdict verdict,
                                 List<String> findings) {

        public Reconciliation {
            findings = List.copyOf(findings);
        }

        /** What the run found of the event. */
        public enum Verdict {
            /** Its findings name the event: {@link #findings} says how. */
            FINDING,
            /** Its window covers the event, and it found nothing it did not list: nothing was wrong with the event. */
            CLEAN,
            /**
             * Its window covers the event, but it found more than the journal lists (the first 20), and the listed ones
             * do not name the event: run {@code outbox reconcile} for the whole report.
             */
            NOT_LISTED
        }
    }
}
