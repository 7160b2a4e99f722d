package dev.outboxkit.consumer.internal;

import dev.outboxkit.consumer.DeadLetterHeaders;
import dev.outboxkit.core.Topics;
import dev.outboxkit.relay.ProducerSafety;
import dev.outboxkit.relay.PublishFailure;
import dev.outboxkit.runtime.KafkaWrites;
import dev.outboxkit.runtime.OperatorActions;
import dev.outboxkit.runtime.PublishFailures;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.header.internals.RecordHeaders;

/**
 * Sends records the consumer will not apply (poison, late arrivals) to another topic: original
 * key, value, headers and timestamp, plus {@link DeadLetterHeaders}. Waits for Kafka's ack before
 * the caller may commit the original offset. The producer is made on first use.
 */
final class Forwarder implements AutoCloseable {

    /** One record to forward and why. */
    public record Forward(ConsumerRecord<byte[], byte[]> record, String topic, String reason, Throwable error, int attempts) {
    }

    private final Map<String, Object> producerConfig;
    private final String group;
    private final Clock clock;
    private final Duration ackTimeout;
    private final KafkaWrites writes;
    private KafkaProducer<byte[], byte[]> producer;

    /** @param writes where each forwarded record is counted until Kafka answers it (the consumer's readiness) */
    public Forwarder(String bootstrapServers, Map<String, ?> kafkaProperties, String group, String clientId, Clock clock,
                     KafkaWrites writes) {
        this.writes = writes;
        Map<String, Object> overrides = new HashMap<>();
        kafkaProperties.forEach((k, v) -> {
            if (ProducerConfig.configNames().contains(k) && !k.equals(ProducerConfig.CLIENT_ID_CONFIG)
                    && !k.equals(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG)
                    && !k.equals(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG)
                    && !k.equals(ProducerConfig.TRANSACTIONAL_ID_CONFIG)) {
                overrides.put(k, v);
            }
        });
        overrides.put(ProducerConfig.CLIENT_ID_CONFIG, clientId + "-forwarder");
        overrides.put(ProducerConfig.LINGER_MS_CONFIG, "0");
        this.producerConfig = ProducerSafety.producerConfig(bootstrapServers, overrides);
        this.group = group;
        this.clock = clock;
        Object delivery = producerConfig.get(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG);
        this.ackTimeout = Duration.ofMillis(Long.parseLong(delivery.toString()) + 5_000);
    }

    /**
     * Sends all, then waits for every ack.
     *
     * @throws ForwardingException when any send failed or timed out (retry later: nothing was lost)
     */
    public void forwardAll(List<Forward> forwards) {
        if (forwards.isEmpty()) {
            return;
        }
        List<Future<RecordMetadata>> acks = new ArrayList<>(forwards.size());
        try {
            for (Forward f : forwards) {
                String problem = Topics.problem(f.topic());
                if (problem != null) {
                    throw new IllegalStateException("cannot forward a record of " + f.record().topic() + " to '" + f.topic()
                            + "': " + problem + "; fix the consumer's deadLetterTopic / lateArrivalPolicy function");
                }
                acks.add(send(toRecord(f)));
            }
            long deadline = System.nanoTime() + ackTimeout.toNanos();
            for (Future<RecordMetadata> ack : acks) {
                ack.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            }
        } catch (ExecutionException e) {
            throw refused("Kafka refused a forwarded record", e.getCause() == null ? e : e.getCause(), forwards);
        } catch (TimeoutException e) {
            throw new ForwardingException("no ack for forwarded records within " + ackTimeout, e, PublishFailure.RETRIABLE);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ForwardingException("interrupted while waiting for forwarded records' acks", e, PublishFailure.RETRIABLE);
        } catch (org.apache.kafka.common.KafkaException e) {
            throw refused("cannot forward records", e, forwards);
        }
    }

    private Future<RecordMetadata> send(ProducerRecord<byte[], byte[]> record) {
        KafkaWrites.Pending pending = writes.handedOver(record.topic());
        try {
            return producer().send(record, (metadata, error) -> pending.answered(error));
        } catch (RuntimeException e) {
            pending.abandoned(); // never sent
            throw e;
        }
    }

    private ProducerRecord<byte[], byte[]> toRecord(Forward f) {
        ConsumerRecord<byte[], byte[]> original = f.record();
        RecordHeaders headers = DeadLetterHeaders.of(original, f.reason(), f.error(), f.attempts(), group, clock.instant());
        Long timestamp = original.timestamp() >= 0 ? original.timestamp() : null;
        return new ProducerRecord<>(f.topic(), null, timestamp, original.key(), original.value(), headers);
    }

    private KafkaProducer<byte[], byte[]> producer() {
        if (producer == null) {
            producer = new KafkaProducer<>(producerConfig);
        }
        return producer;
    }

    @Override
    public void close() {
        if (producer != null) {
            producer.close(Duration.ofSeconds(10));
            producer = null;
        }
    }

    /**
     * Classified as the relays classify a send failure. Whatever the outcome, the original offset is not
     * committed, so the caller retries: a dead letter is never dropped. POISON and FATAL say why retrying alone
     * will not help.
     */
    private ForwardingException refused(String what, Throwable error, List<Forward> forwards) {
        PublishFailures.Classified failure = PublishFailures.classify(error);
        String action = failure.outcome() != PublishFailure.FATAL ? null : OperatorActions.of(failure.cause(),
                producerConfig, "WRITE", forwards.stream().map(Forward::topic).collect(java.util.stream.Collectors.toSet()));
        String hint = switch (failure.outcome()) {
            case POISON -> "; the topic refuses this record for good (for example its max.message.bytes), so the "
                    + "original offset waits until the topic is fixed";
            case FATAL -> "; this " + PublishFailures.OPERATOR_HINT + (action == null
                    ? " (authentication, ACLs, versions, configuration)" : ": " + action);
            default -> "";
        };
        return new ForwardingException(what + ": " + failure.describe() + hint, error, failure.outcome());
    }

    /** Forwarding failed for now; nothing was committed, so retrying is safe. */
    public static final class ForwardingException extends RuntimeException {
        private static final long serialVersionUID = 1L;
        private final PublishFailure failure;

        ForwardingException(String message, Throwable cause, PublishFailure failure) {
            super(message, cause);
            this.failure = failure;
        }

        /** What the send failure means (the relays' classification). */
        public PublishFailure failure() {
            return failure;
        }
    }
}
