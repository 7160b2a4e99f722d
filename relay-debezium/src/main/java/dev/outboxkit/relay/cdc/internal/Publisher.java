package dev.outboxkit.relay.cdc.internal;

import dev.outboxkit.core.FencedException;
import dev.outboxkit.core.KafkaRecords;
import dev.outboxkit.core.OutboxEvent;
import dev.outboxkit.core.PublishFailure;
import dev.outboxkit.core.internal.PublishFailures;
import dev.outboxkit.core.internal.TracedRecords;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.RecordMetadata;

/**
 * Sends a batch and waits until Kafka acknowledged every record of it: the only way a row leaves the
 * relay's hands. Records are built by {@link KafkaRecords} (the same mapping as the poller) and sent in
 * stream order, so one aggregate's events keep their commit order in its partition.
 *
 * <p>Failures are classified by {@link PublishFailures}, as in the polling relay: a {@link PublishFailure#POISON}
 * event becomes a {@link DeadLetter}; {@link PublishFailure#FENCED} ends the batch as a {@link FencedException};
 * anything else ({@link PublishFailure#RETRIABLE}, {@link PublishFailure#FATAL}) fails the whole batch with a
 * {@link PublishFailedException}, nothing of it is marked done, and the relay retries from its last offset.
 */
final class Publisher {

    /** An event Kafka refused for good, with everything needed to park it. */
    record DeadLetter(OutboxRow row, PublishFailures.Classified failure) {
    }

    /** What became of a batch: acknowledged rows and rows to park. */
    record Outcome(List<OutboxRow> acked, List<DeadLetter> deadLetters) {
    }

    /** A batch failed in a way that is not the events' fault (broker down, authorization, timeout). */
    static final class PublishFailedException extends RuntimeException {
        private static final long serialVersionUID = 1L;
        private final transient PublishFailures.Classified failure;

        PublishFailedException(String message, PublishFailures.Classified failure) {
            super(message, failure.cause());
            this.failure = failure;
        }

        PublishFailure outcome() {
            return failure.outcome();
        }
    }

    private final Producer<byte[], byte[]> producer;
    private final TracedRecords records;
    private final CdcMetrics metrics;
    private final Clock clock;

    Publisher(Producer<byte[], byte[]> producer, TracedRecords records, CdcMetrics metrics, Clock clock) {
        this.producer = producer;
        this.records = records;
        this.metrics = metrics;
        this.clock = clock;
    }

    Outcome publish(List<OutboxRow> rows) throws InterruptedException {
        List<DeadLetter> dead = new ArrayList<>();
        List<OutboxRow> sentRows = new ArrayList<>(rows.size());
        List<OutboxEvent> sentEvents = new ArrayList<>(rows.size());
        List<Future<RecordMetadata>> futures = new ArrayList<>(rows.size());
        for (OutboxRow row : rows) {
            OutboxEvent event;
            Future<RecordMetadata> future;
            try {
                event = row.toEvent();
                // send() itself throws for some refusals (a serializer's), and for a closed or interrupted producer
                future = TracedRecords.send(producer, records.toRecord(event), null);
            } catch (RuntimeException e) {
                PublishFailures.Classified failure = PublishFailures.classify(e);
                if (failure.outcome() != PublishFailure.POISON) {
                    throw failed(row, failure);
                }
                dead.add(new DeadLetter(row, failure));
                continue;
            }
            sentRows.add(row);
            sentEvents.add(event);
            futures.add(future);
        }
        if (futures.isEmpty()) {
            return new Outcome(List.of(), dead);
        }
        producer.flush();
        List<OutboxRow> acked = new ArrayList<>(sentRows.size());
        Instant now = clock.instant();
        for (int i = 0; i < futures.size(); i++) {
            try {
                futures.get(i).get();
                acked.add(sentRows.get(i));
                metrics.commitToAck.record(Duration.between(sentEvents.get(i).createdAt(), now));
            } catch (ExecutionException e) {
                PublishFailures.Classified failure = PublishFailures.classify(e.getCause() == null ? e : e.getCause());
                if (failure.outcome() != PublishFailure.POISON) {
                    throw failed(sentRows.get(i), failure);
                }
                dead.add(new DeadLetter(sentRows.get(i), failure));
            }
        }
        metrics.lastAckNanos.set(System.nanoTime());
        metrics.published.increment(acked.size());
        metrics.batchSize.record(futures.size());
        return new Outcome(acked, dead);
    }

    private static RuntimeException failed(OutboxRow row, PublishFailures.Classified failure) {
        String event = row.id() == null ? "at seq " + row.seq() : row.id();
        return switch (failure.outcome()) {
            case FENCED -> new FencedException("publishing event " + event + " found the lease gone: "
                    + failure.message());
            case FATAL -> new PublishFailedException("Kafka refused event " + event + " and this "
                    + PublishFailures.OPERATOR_HINT + " (" + failure.describe() + "); the event stays unpublished and the "
                    + "batch is retried from the last stored offset with a back-off until it is fixed", failure);
            default -> new PublishFailedException("Kafka did not acknowledge event " + event + " (" + failure.describe()
                    + "); the batch is retried from the last stored offset", failure);
        };
    }
}
