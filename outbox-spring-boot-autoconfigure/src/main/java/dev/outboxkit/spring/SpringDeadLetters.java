package dev.outboxkit.spring;

import dev.outboxkit.consumer.DeadLetterHeaders;
import dev.outboxkit.consumer.LateArrivalException;
import dev.outboxkit.core.InvalidEventException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.Serializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.convert.ConversionException;
import org.springframework.kafka.core.KafkaOperations;
import org.springframework.kafka.listener.BatchListenerFailedException;
import org.springframework.kafka.listener.ConsumerRecordRecoverer;
import org.springframework.kafka.listener.ListenerExecutionFailedException;
import org.springframework.kafka.support.KafkaUtils;
import org.springframework.kafka.support.serializer.DeserializationException;
import org.springframework.messaging.converter.MessageConversionException;

/**
 * The recoverer of the auto-configured Spring Kafka error handler: forwards a record the listener
 * gave up on in consumer-dedupe's dead-letter format (original key, value, headers and timestamp
 * plus {@link DeadLetterHeaders}), so {@code outbox} tooling reads Spring and plain consumers'
 * dead letters alike. {@code <topic>.dlq} gets undecodable records ({@code InvalidEventException},
 * a {@code DeserializationException} with the raw bytes, a conversion failure) and records whose
 * handler failed {@code outboxkit.consumer.max-attempts} times; {@code <topic>.review} gets late
 * arrivals ({@link LateArrivalException}). It waits for Kafka's ack: when the forward fails it
 * throws, the error handler does not commit the offset and the record comes again, so nothing is
 * dropped. Use it in an error handler of your own with {@code new DefaultErrorHandler(deadLetters, backOff)}.
 *
 * <p>Keys and values are forwarded as read: {@code byte[]} or {@code String} (the
 * deserializers Spring Boot and outboxkit use); another type cannot be forwarded unchanged and is
 * refused with an exception that says so.
 */
public final class SpringDeadLetters implements ConsumerRecordRecoverer {

    private static final Logger log = LoggerFactory.getLogger(SpringDeadLetters.class);
    private static final long ACK_TIMEOUT_SECONDS = 60;

    private final KafkaOperations<Object, Object> kafka;
    private final String defaultGroup;
    private final int maxAttempts;
    private final OutboxkitProperties.LateArrival lateArrival;
    private final Clock clock;

    SpringDeadLetters(KafkaOperations<Object, Object> kafka, String defaultGroup, int maxAttempts,
                      OutboxkitProperties.LateArrival lateArrival, Clock clock) {
        this.kafka = Objects.requireNonNull(kafka, "kafka");
        this.defaultGroup = defaultGroup;
        this.maxAttempts = maxAttempts;
        this.lateArrival = Objects.requireNonNull(lateArrival, "lateArrival");
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    /** Where dead letters of {@code topic} go: {@code <topic>.dlq}, as consumer-dedupe's default. */
    public static String deadLetterTopic(String topic) {
        return topic + ".dlq";
    }

    /** Where late arrivals of {@code topic} go: {@code <topic>.review}, as consumer-dedupe's default. */
    public static String reviewTopic(String topic) {
        return topic + ".review";
    }

    @Override
    public void accept(ConsumerRecord<?, ?> record, Exception exception) {
        Throwable cause = unwrap(exception);
        String reason;
        String topic;
        int attempts;
        if (find(cause, LateArrivalException.class) != null) {
            reason = DeadLetterHeaders.REASON_LATE_ARRIVAL;
            topic = lateArrival == OutboxkitProperties.LateArrival.DEAD_LETTER ? deadLetterTopic(record.topic())
                    : reviewTopic(record.topic());
            attempts = 0;
        } else if (undecodable(cause)) {
            reason = DeadLetterHeaders.REASON_UNDECODABLE;
            topic = deadLetterTopic(record.topic());
            attempts = 0;
        } else {
            reason = DeadLetterHeaders.REASON_HANDLER_FAILED;
            topic = deadLetterTopic(record.topic());
            attempts = maxAttempts;
        }
        String group = group();
        RecordHeaders headers = DeadLetterHeaders.of(record, reason, cause, attempts, group, clock.instant());
        // Spring's ErrorHandlingDeserializer keeps the raw bytes in the exception; its headers carry a serialized exception.
        headers.remove("springDeserializerExceptionKey");
        headers.remove("springDeserializerExceptionValue");
        Object key = record.key();
        Object value = record.value();
        DeserializationException raw = find(cause, DeserializationException.class);
        if (raw != null && raw.isKey()) {
            key = raw.getData();
        } else if (raw != null) {
            value = raw.getData();
        }
        Long timestamp = record.timestamp() >= 0 ? record.timestamp() : null;
        ProducerRecord<Object, Object> out = new ProducerRecord<>(topic, null, timestamp, key, value, headers);
        try {
            kafka.send(out).get(ACK_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        } catch (ExecutionException | TimeoutException | KafkaException e) {
            Throwable why = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
            throw new KafkaException("could not forward " + coordinates(record) + " to " + topic + " (" + reason + "): " + why
                    + "; the offset is not committed and the record comes again", why);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new KafkaException("interrupted while forwarding " + coordinates(record) + " to " + topic, e);
        }
        log.warn("group {}: {} forwarded to {} ({}, {} attempt(s)): {}", group, coordinates(record), topic, reason, attempts,
                cause.toString());
    }

    private String group() {
        String group = KafkaUtils.getConsumerGroupId();
        if (group != null && !group.isBlank()) {
            return group;
        }
        return defaultGroup != null ? defaultGroup : "unknown";
    }

    private static boolean undecodable(Throwable cause) {
        return find(cause, InvalidEventException.class) != null || find(cause, DeserializationException.class) != null
                || find(cause, MessageConversionException.class) != null || find(cause, ConversionException.class) != null;
    }

    /** The listener's own exception, without Spring's wrapper. */
    private static Throwable unwrap(Exception exception) {
        Throwable t = exception;
        // Spring's wrappers (a batch listener's failure names its record) are not the error itself.
        while ((t instanceof ListenerExecutionFailedException || t instanceof BatchListenerFailedException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    private static <T extends Throwable> T find(Throwable t, Class<T> type) {
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (type.isInstance(c)) {
                return type.cast(c);
            }
        }
        return null;
    }

    private static String coordinates(ConsumerRecord<?, ?> record) {
        return record.topic() + "-" + record.partition() + "@" + record.offset();
    }

    /** Keys and values as they were read: bytes as they are, text as UTF-8. Not API. */
    static final class AsRead implements Serializer<Object> {
        @Override
        public byte[] serialize(String topic, Object data) {
            if (data == null || data instanceof byte[]) {
                return (byte[]) data;
            }
            if (data instanceof String s) {
                return s.getBytes(StandardCharsets.UTF_8);
            }
            throw new SerializationException("outboxkit forwards dead letters with the key and value as they were read, "
                    + "byte[] or String, but got a " + data.getClass().getName() + " (a deserializer that builds objects); "
                    + "read the topic with StringDeserializer or ByteArrayDeserializer, or define your own CommonErrorHandler");
        }
    }
}
