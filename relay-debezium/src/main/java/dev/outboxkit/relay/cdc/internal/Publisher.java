package dev.outboxkit.relay.cdc.internal;

import dev.outboxkit.core.FencedException;
import dev.outboxkit.core.OutboxEvent;
import dev.outboxkit.relay.KafkaRecords;
import dev.outboxkit.relay.PublishFailure;
import dev.outboxkit.runtime.OperatorActions;
import dev.outboxkit.runtime.PublishFailures;
import dev.outboxkit.runtime.StopOnFailure;
import dev.outboxkit.runtime.TracedRecords;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.RecordMetadata;

/**
 * Hands a batch's records to the producer without waiting ({@link #send}) and, later, reads what became of
 * them ({@link #settle}): the only way a row leaves the relay's hands. Records are built by {@link KafkaRecords}
 * (the same mapping as the poller) and sent in stream order, so one aggregate's events keep their commit order
 * in its partition.
 *
 * <p>Failures are classified by {@link PublishFailures}, as in the polling relay: a {@link PublishFailure#POISON}
 * event becomes a {@link DeadLetter}; {@link PublishFailure#FENCED} ends the batch as a {@link FencedException};
 * anything else ({@link PublishFailure#RETRIABLE}, {@link PublishFailure#FATAL}) fails the whole batch with a
 * {@link PublishFailedException}, nothing of it is marked done, and the relay retries from its last offset.
 * Such a failure also stops the producer at once ({@link StopOnFailure}), so no later record of the same
 * partition is written before the failed one is published again. A row whose own record failed
 * {@code maxAttempts} times in a way that {@link PublishFailures#isAttempt counts} ({@link RowAttempts}) is parked
 * instead of being sent again, with its last failure, as the polling relay does.
 */
final class Publisher {

    /** An event Kafka refused for good (or {@code attempts} times), with everything needed to park it. */
    record DeadLetter(OutboxRow row, PublishFailures.Classified failure, int attempts) {
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

    /** A batch handed to the producer: its records may still be on their way. */
    static final class Sent {
        private final List<OutboxRow> rows;
        /** The topic of each of {@link #rows}' records. */
        private final List<String> topics;
        private final List<Future<RecordMetadata>> futures;
        private final List<DeadLetter> refused;
        private int firstPending;

        private Sent(List<OutboxRow> rows, List<String> topics, List<Future<RecordMetadata>> futures,
                List<DeadLetter> refused) {
            this.rows = rows;
            this.topics = topics;
            this.futures = futures;
            this.refused = refused;
        }

        /** Records handed to the producer. */
        int size() {
            return futures.size();
        }

        /** True once Kafka answered every record (never blocks). */
        boolean answered() {
            while (firstPending < futures.size() && futures.get(firstPending).isDone()) {
                firstPending++;
            }
            return firstPending == futures.size();
        }

        /** The first row, for the age of the oldest unacknowledged event. */
        OutboxRow first() {
            return rows.isEmpty() ? null : rows.get(0);
        }
    }

    private final StopOnFailure producers;
    private final RowAttempts attempts;
    private final TracedRecords records;
    private final CdcMetrics metrics;
    private final Clock clock;
    private final Runnable flush;
    /** The producer's settings, for naming the principal of an ACL or login failure ({@link OperatorActions}). */
    private final Map<String, ?> clientConfig;

    /** @param flush asks for the producer's buffer to be sent now, without waiting (the producer lingers 5 ms) */
    Publisher(StopOnFailure producers, RowAttempts attempts, TracedRecords records, CdcMetrics metrics, Clock clock,
              Runnable flush) {
        this(producers, attempts, records, metrics, clock, flush, Map.of());
    }

    /** @param clientConfig the producer's settings (named in the operator's message when Kafka refuses the principal) */
    Publisher(StopOnFailure producers, RowAttempts attempts, TracedRecords records, CdcMetrics metrics, Clock clock,
              Runnable flush, Map<String, ?> clientConfig) {
        this.clientConfig = clientConfig;
        this.producers = producers;
        this.attempts = attempts;
        this.records = records;
        this.metrics = metrics;
        this.clock = clock;
        this.flush = flush;
    }

    /** Sends and waits: {@link #send}, then {@link #settle}. */
    Outcome publish(List<OutboxRow> rows) throws InterruptedException {
        metrics.batchSize.record(rows.size());
        return settle(send(rows));
    }

    /**
     * Hands every row's record to the producer and returns at once. A row whose record cannot even be built or
     * sent for good (poison) is set aside to be parked; any other refusal at send time throws.
     */
    Sent send(List<OutboxRow> rows) {
        Throwable stopped = producers.stoppedBy();
        if (stopped != null && !rows.isEmpty()) {
            // an earlier record failed: nothing may be sent after it before it is published again
            PublishFailures.Classified failure = PublishFailures.classify(stopped);
            throw new PublishFailedException("Kafka failed an earlier record (" + failure.describe() + "), so event "
                    + describe(rows.get(0)) + " and the rest are not sent before it; the relay publishes them again, in "
                    + "order, from the last stored offset", failure);
        }
        Producer<byte[], byte[]> producer = producers.producer();
        List<DeadLetter> refused = new ArrayList<>();
        List<OutboxRow> sentRows = new ArrayList<>(rows.size());
        List<String> sentTopics = new ArrayList<>(rows.size());
        List<Future<RecordMetadata>> futures = new ArrayList<>(rows.size());
        for (OutboxRow row : rows) {
            RowAttempts.Exhausted exhausted = attempts.exhausted(row);
            if (exhausted != null) {
                refused.add(new DeadLetter(row, exhausted.lastFailure(), exhausted.attempts()));
                continue;
            }
            String topic = null;
            try {
                OutboxEvent event = row.toEvent();
                Instant createdAt = event.createdAt();
                TracedRecords.Traced traced = records.toRecord(event);
                topic = traced.record().topic();
                // send() itself throws for some refusals (a serializer's), and for a closed or interrupted producer
                futures.add(producers.send(producer, traced, true, (metadata, error) -> {
                    if (error == null) {
                        acknowledged(createdAt);
                        attempts.forget(row);
                    } else {
                        counted(row, error); // here, not in settle: a stopped producer may fail the batch before that
                    }
                }));
            } catch (RuntimeException e) {
                PublishFailures.Classified failure = PublishFailures.classify(e);
                if (failure.outcome() != PublishFailure.POISON) {
                    counted(row, e);
                    throw failed(row, topic, failure);
                }
                refused.add(new DeadLetter(row, failure, 1));
                continue;
            }
            sentRows.add(row);
            sentTopics.add(topic);
        }
        if (!futures.isEmpty()) {
            flush.run();
        }
        return new Sent(sentRows, sentTopics, futures, refused);
    }

    /** One attempt of {@code row}'s towards maxAttempts, when the failure {@link PublishFailures#isAttempt counts}. */
    private void counted(OutboxRow row, Throwable error) {
        if (PublishFailures.isAttempt(error, producers::consequenceOfStop)) {
            attempts.failed(row, PublishFailures.classify(error));
        }
    }

    /** On the producer's thread, as each acknowledgement arrives: the latency is measured at the ack itself. */
    private void acknowledged(Instant createdAt) {
        metrics.commitToAck.record(Duration.between(createdAt, clock.instant()));
        metrics.countPublished(1);
    }

    /** Waits until Kafka answered every record of {@code sent}; classifies the refusals. */
    Outcome settle(Sent sent) throws InterruptedException {
        List<DeadLetter> dead = new ArrayList<>(sent.refused);
        List<OutboxRow> acked = new ArrayList<>(sent.rows.size());
        for (int i = 0; i < sent.futures.size(); i++) {
            try {
                sent.futures.get(i).get();
                acked.add(sent.rows.get(i));
            } catch (ExecutionException e) {
                PublishFailures.Classified failure = PublishFailures.classify(e.getCause() == null ? e : e.getCause());
                if (failure.outcome() != PublishFailure.POISON) {
                    throw failed(sent.rows.get(i), sent.topics.get(i), failure);
                }
                dead.add(new DeadLetter(sent.rows.get(i), failure, 1));
            }
        }
        if (!sent.futures.isEmpty()) {
            // a whole batch answered: readiness and the health detail's last failure go by this, not by single acks
            metrics.lastAckNanos.set(System.nanoTime());
        }
        return new Outcome(acked, dead);
    }

    private static String describe(OutboxRow row) {
        return row.id() == null ? "at seq " + row.seq() : row.id();
    }

    private RuntimeException failed(OutboxRow row, String topic, PublishFailures.Classified failure) {
        String event = describe(row);
        String action = failure.outcome() == PublishFailure.FATAL
                ? OperatorActions.of(failure.cause(), clientConfig, "WRITE", topic == null ? null : List.of(topic)) : null;
        return switch (failure.outcome()) {
            case FENCED -> new FencedException("publishing event " + event + " found the lease gone: "
                    + failure.message());
            case FATAL -> new PublishFailedException("Kafka refused event " + event + " and this "
                    + PublishFailures.OPERATOR_HINT + " (" + (action == null ? "" : action + "; ") + failure.describe()
                    + "); the event stays unpublished and the "
                    + "batch is retried from the last stored offset with a back-off until it is fixed", failure);
            default -> new PublishFailedException("Kafka did not acknowledge event " + event + " (" + failure.describe()
                    + "); the batch is retried from the last stored offset", failure);
        };
    }
}
