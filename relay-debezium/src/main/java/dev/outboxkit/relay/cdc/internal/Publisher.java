package dev.outboxkit.relay.cdc.internal;

import dev.outboxkit.core.InvalidEventException;
import dev.outboxkit.core.KafkaRecords;
import dev.outboxkit.core.OutboxEvent;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.errors.RecordTooLargeException;

/**
 * Sends a batch and waits until Kafka acknowledged every record of it: the only way a row leaves the
 * relay's hands. Records are built by {@link KafkaRecords} (the same mapping as the poller) and sent in
 * stream order, so one aggregate's events keep their commit order in its partition.
 *
 * <p>Failure policy (the poller's): an event that can never be published (not mappable, too large, an
 * illegal topic) becomes a {@link DeadLetter}; any other failure fails the whole batch, nothing of it is
 * marked done, and the relay retries from its last offset.
 */
final class Publisher {

    /** An event Kafka refused for good, with everything needed to park it. */
    record DeadLetter(OutboxRow row, String errorClass, String errorMessage) {
    }

    /** What became of a batch: acknowledged rows and rows to park. */
    record Outcome(List<OutboxRow> acked, List<DeadLetter> deadLetters) {
    }

    /** A batch failed in a way that is not the events' fault (broker down, authorization, timeout). */
    static final class PublishFailedException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        PublishFailedException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    private final Producer<byte[], byte[]> producer;
    private final KafkaRecords records;
    private final CdcMetrics metrics;
    private final Clock clock;

    Publisher(Producer<byte[], byte[]> producer, KafkaRecords records, CdcMetrics metrics, Clock clock) {
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
            ProducerRecord<byte[], byte[]> record;
            OutboxEvent event;
            try {
                event = row.toEvent();
                record = records.toRecord(event);
            } catch (InvalidEventException e) {
                dead.add(new DeadLetter(row, e.getClass().getName(), e.getMessage()));
                continue;
            }
            sentRows.add(row);
            sentEvents.add(event);
            futures.add(producer.send(record));
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
                Throwable cause = e.getCause();
                if (cause instanceof RecordTooLargeException || cause instanceof InvalidTopicException) {
                    dead.add(new DeadLetter(sentRows.get(i), cause.getClass().getName(), String.valueOf(cause.getMessage())));
                } else {
                    throw new PublishFailedException("Kafka did not acknowledge event " + sentEvents.get(i).id() + " ("
                            + cause + "); the batch is retried from the last stored offset", cause);
                }
            }
        }
        metrics.lastAckNanos.set(System.nanoTime());
        metrics.published.increment(acked.size());
        metrics.batchSize.record(futures.size());
        return new Outcome(acked, dead);
    }
}
