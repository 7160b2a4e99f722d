package dev.outboxkit.runtime;

import dev.outboxkit.core.OutboxEvent;
import dev.outboxkit.core.spi.TraceContext;
import io.opentelemetry.api.OpenTelemetry;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * Not API: public for the relays, the writer and the consumer.
 *
 * <p>The one place where outboxkit's spans are named and attributed (OpenTelemetry messaging
 * conventions). OpenTelemetry is optional: this class and its spans' types never touch an
 * OpenTelemetry class; only {@link #of} (called by a builder that was handed an
 * {@code OpenTelemetry}) and {@link #currentContextHeaders} after a class-presence check reach
 * {@code OtelTracing}, the only class that uses the OpenTelemetry API.
 */
public abstract class Tracing {

    /** Tracing off: no spans, records exactly as without tracing. */
    public static final Tracing OFF = new Tracing() {
        @Override
        public boolean enabled() {
            return false;
        }

        @Override
        public PublishSpan startPublish(OutboxEvent event, String topic) {
            return PublishSpan.NONE;
        }

        @Override
        public ProcessSpan startProcess(ConsumerRecord<?, ?> record, String group, UUID eventId) {
            return ProcessSpan.NONE;
        }

        @Override
        public ProcessSpan startBatchProcess(List<? extends ConsumerRecord<?, ?>> records, String group) {
            return ProcessSpan.NONE;
        }
    };

    /** The W3C trace context header names. */
    public static final String TRACEPARENT = TraceContext.TRACEPARENT;
    public static final String TRACESTATE = TraceContext.TRACESTATE;

    Tracing() {
    }

    /** Spans through {@code openTelemetry}; {@link #OFF} for null. */
    public static Tracing of(OpenTelemetry openTelemetry) {
        return openTelemetry == null ? OFF : OtelTracing.create(openTelemetry);
    }

    /** True when the OpenTelemetry API is on the class path (checked once, loading nothing of it). */
    public static boolean openTelemetryPresent() {
        return TraceContext.openTelemetryPresent();
    }

    /**
     * The current span's W3C context as headers ({@code traceparent}, and {@code tracestate} when
     * it has one); empty when OpenTelemetry is absent or no valid span is current.
     */
    public static Map<String, String> currentContextHeaders() {
        return TraceContext.currentHeaders();
    }

    public abstract boolean enabled();

    /**
     * Starts the PRODUCER span of publishing {@code event} to {@code topic}, child of the context
     * stored in the event's headers (a root span when there is none). End it through
     * {@link PublishSpan#callback} or {@link PublishSpan#end}; {@link TracedRecords} does both steps.
     */
    public abstract PublishSpan startPublish(OutboxEvent event, String topic);

    /**
     * Starts the CONSUMER span of processing {@code record}, child of the context in its
     * {@code traceparent} header. {@code eventId} may be null (an undecodable record).
     */
    public abstract ProcessSpan startProcess(ConsumerRecord<?, ?> record, String group, UUID eventId);

    /**
     * Starts the CONSUMER span of processing {@code records} in one call (a batch handler): a
     * new trace linked to each record's context, since one span cannot have many parents.
     */
    public abstract ProcessSpan startBatchProcess(List<? extends ConsumerRecord<?, ?>> records, String group);

}
