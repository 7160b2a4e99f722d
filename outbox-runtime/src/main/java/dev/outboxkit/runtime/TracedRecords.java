package dev.outboxkit.runtime;

import dev.outboxkit.core.InvalidEventException;
import dev.outboxkit.core.OutboxEvent;
import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.relay.KafkaRecords;
import java.util.concurrent.Future;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;

/**
 * Not API: public for the relays.
 *
 * <p>{@link KafkaRecords}' mapping with the publish span started for each record (when tracing is
 * on): the record carries the span's context. Send it with {@link #send}, which ends the span with
 * Kafka's acknowledgement or failure. An event that can never be published ends its span here, as
 * parked.
 */
public final class TracedRecords {

    /** A record and the span of publishing it ({@link PublishSpan#NONE} when tracing is off). */
    public record Traced(ProducerRecord<byte[], byte[]> record, PublishSpan span) {
    }

    private final KafkaRecords records;
    private final Tracing tracing;

    public TracedRecords(TopicRoute route, Tracing tracing) {
        this.records = new KafkaRecords(route);
        this.tracing = tracing;
    }

    /**
     * The record for {@code event} and its started span.
     *
     * @throws InvalidEventException as {@link KafkaRecords#toRecord(OutboxEvent)}
     */
    public Traced toRecord(OutboxEvent event) {
        if (!tracing.enabled()) {
            return new Traced(records.toRecord(event), PublishSpan.NONE);
        }
        PublishSpan span = tracing.startPublish(event, records.route().topicFor(event));
        try {
            return new Traced(records.toRecord(event, span.context()), span);
        } catch (RuntimeException invalid) {
            span.end(null, invalid);
            throw invalid;
        }
    }

    /**
     * {@code producer.send} of {@code traced}'s record; the span ends with the acknowledgement or the failure (after
     * which {@code callback}, which may be null, runs), also when {@code send} throws instead of failing the future.
     */
    public static Future<RecordMetadata> send(Producer<byte[], byte[]> producer, Traced traced, Callback callback) {
        try {
            return producer.send(traced.record(), traced.span().callback(callback));
        } catch (RuntimeException e) {
            traced.span().end(null, e);
            throw e;
        }
    }
}
