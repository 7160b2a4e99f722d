package dev.outboxkit.runtime;

import dev.outboxkit.core.OutboxEvent;
import dev.outboxkit.relay.PublishFailure;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;

/**
 * Tracing through the OpenTelemetry API: the only class of outboxkit that uses it, reached only
 * from {@link Tracing}. Contexts travel as W3C trace context whatever propagators the application
 * configured, because that is the format the writer stores in the row and the records carry.
 */
final class OtelTracing extends Tracing {

    static final String SCOPE = "dev.outboxkit";

    static final AttributeKey<String> SYSTEM = AttributeKey.stringKey("messaging.system");
    static final AttributeKey<String> DESTINATION = AttributeKey.stringKey("messaging.destination.name");
    static final AttributeKey<String> OPERATION_TYPE = AttributeKey.stringKey("messaging.operation.type");
    static final AttributeKey<String> OPERATION_NAME = AttributeKey.stringKey("messaging.operation.name");
    static final AttributeKey<String> MESSAGE_ID = AttributeKey.stringKey("messaging.message.id");
    static final AttributeKey<String> MESSAGE_KEY = AttributeKey.stringKey("messaging.kafka.message.key");
    static final AttributeKey<String> PARTITION = AttributeKey.stringKey("messaging.destination.partition.id");
    static final AttributeKey<Long> OFFSET = AttributeKey.longKey("messaging.kafka.offset");
    static final AttributeKey<Long> BATCH_COUNT = AttributeKey.longKey("messaging.batch.message_count");
    static final AttributeKey<String> GROUP = AttributeKey.stringKey("messaging.consumer.group.name");
    static final AttributeKey<String> ERROR_TYPE = AttributeKey.stringKey("error.type");
    static final AttributeKey<String> EVENT_TYPE = AttributeKey.stringKey("outboxkit.event.type");
    static final AttributeKey<String> AGGREGATE_TYPE = AttributeKey.stringKey("outboxkit.aggregate.type");
    static final AttributeKey<Boolean> PARKED = AttributeKey.booleanKey("outboxkit.parked");
    static final AttributeKey<String> REASON = AttributeKey.stringKey("outboxkit.reason");
    static final AttributeKey<Boolean> DUPLICATE = AttributeKey.booleanKey("outboxkit.inbox.duplicate");
    static final AttributeKey<String> DEAD_LETTER_TOPIC = AttributeKey.stringKey("outboxkit.dead_letter.topic");

    private static final W3CTraceContextPropagator W3C = W3CTraceContextPropagator.getInstance();

    private static final TextMapGetter<Map<String, String>> MAP_GETTER = new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(Map<String, String> carrier) {
            return carrier.keySet();
        }

        @Override
        public String get(Map<String, String> carrier, String key) {
            return carrier == null ? null : carrier.get(key);
        }
    };

    private static final TextMapGetter<Headers> HEADERS_GETTER = new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(Headers carrier) {
            return List.of(TRACEPARENT, TRACESTATE);
        }

        @Override
        public String get(Headers carrier, String key) {
            Header h = carrier == null ? null : carrier.lastHeader(key);
            return h == null || h.value() == null ? null : new String(h.value(), StandardCharsets.UTF_8);
        }
    };

    private final Tracer tracer;

    private OtelTracing(OpenTelemetry openTelemetry) {
        this.tracer = openTelemetry.getTracer(SCOPE);
    }

    static Tracing create(OpenTelemetry openTelemetry) {
        return new OtelTracing(openTelemetry);
    }

    @Override
    public boolean enabled() {
        return true;
    }

    @Override
    public PublishSpan startPublish(OutboxEvent event, String topic) {
        Context parent = W3C.extract(Context.root(), event.headers(), MAP_GETTER);
        Span span = tracer.spanBuilder("publish " + topic)
                .setParent(parent)
                .setSpanKind(SpanKind.PRODUCER)
                .setAttribute(SYSTEM, "kafka")
                .setAttribute(DESTINATION, topic)
                .setAttribute(OPERATION_TYPE, "send")
                .setAttribute(OPERATION_NAME, "publish")
                .setAttribute(MESSAGE_ID, event.id().toString())
                .setAttribute(MESSAGE_KEY, event.aggregateId())
                .setAttribute(EVENT_TYPE, event.eventType())
                .setAttribute(AGGREGATE_TYPE, event.aggregateType())
                .startSpan();
        return new OtelPublishSpan(span);
    }

    @Override
    public ProcessSpan startProcess(ConsumerRecord<?, ?> record, String group, UUID eventId) {
        Context parent = W3C.extract(Context.root(), record.headers(), HEADERS_GETTER);
        var builder = tracer.spanBuilder("process " + record.topic())
                .setParent(parent)
                .setSpanKind(SpanKind.CONSUMER)
                .setAttribute(SYSTEM, "kafka")
                .setAttribute(DESTINATION, record.topic())
                .setAttribute(OPERATION_TYPE, "process")
                .setAttribute(OPERATION_NAME, "process")
                .setAttribute(GROUP, group)
                .setAttribute(PARTITION, Integer.toString(record.partition()))
                .setAttribute(OFFSET, record.offset());
        if (eventId != null) {
            builder.setAttribute(MESSAGE_ID, eventId.toString());
        }
        return new OtelProcessSpan(builder.startSpan());
    }

    @Override
    public ProcessSpan startBatchProcess(List<? extends ConsumerRecord<?, ?>> records, String group) {
        String topic = records.isEmpty() ? null : records.get(0).topic();
        for (ConsumerRecord<?, ?> r : records) {
            if (!r.topic().equals(topic)) {
                topic = null;
                break;
            }
        }
        var builder = tracer.spanBuilder(topic == null ? "process" : "process " + topic)
                .setNoParent()
                .setSpanKind(SpanKind.CONSUMER)
                .setAttribute(SYSTEM, "kafka")
                .setAttribute(OPERATION_TYPE, "process")
                .setAttribute(OPERATION_NAME, "process")
                .setAttribute(GROUP, group)
                .setAttribute(BATCH_COUNT, (long) records.size());
        if (topic != null) {
            builder.setAttribute(DESTINATION, topic);
        }
        for (ConsumerRecord<?, ?> r : records) {
            SpanContext linked = Span.fromContext(W3C.extract(Context.root(), r.headers(), HEADERS_GETTER)).getSpanContext();
            if (linked.isValid()) {
                builder.addLink(linked);
            }
        }
        return new OtelProcessSpan(builder.startSpan());
    }

    /** Marks {@code span} failed with {@code error}: the exception, its class as error.type, ERROR status. */
    private static void fail(Span span, Throwable error, String status) {
        span.recordException(error);
        span.setAttribute(ERROR_TYPE, error.getClass().getName());
        span.setStatus(StatusCode.ERROR, status);
    }

    private static final class OtelPublishSpan extends PublishSpan {
        private final Span span;
        private final Map<String, String> context = new HashMap<>(4);

        OtelPublishSpan(Span span) {
            this.span = span;
            W3C.inject(Context.root().with(span), context, Map::put);
        }

        @Override
        public Map<String, String> context() {
            return context;
        }

        @Override
        public void end(RecordMetadata metadata, Throwable error) {
            if (error == null) {
                if (metadata != null) {
                    span.setAttribute(PARTITION, Integer.toString(metadata.partition()));
                    if (metadata.hasOffset()) {
                        span.setAttribute(OFFSET, metadata.offset());
                    }
                }
            } else if (PublishFailures.outcome(error) == PublishFailure.POISON) {
                String reason = PublishFailures.message(error);
                span.setAttribute(PARKED, true);
                span.addEvent("parked", Attributes.of(REASON, reason));
                fail(span, error, "parked: " + reason);
            } else {
                fail(span, error, "not published (retried later): " + PublishFailures.message(error));
            }
            span.end();
        }
    }

    private static final class OtelProcessSpan extends ProcessSpan {
        private final Span span;

        OtelProcessSpan(Span span) {
            this.span = span;
        }

        @Override
        public Scope makeCurrent() {
            io.opentelemetry.context.Scope scope = span.makeCurrent();
            return scope::close;
        }

        @Override
        public void duplicate() {
            span.setAttribute(DUPLICATE, true);
            span.addEvent("duplicate skipped");
        }

        @Override
        public void failed(Throwable error) {
            fail(span, error, "handler failed: " + PublishFailures.message(error));
        }

        @Override
        public void deadLettered(String topic, String reason) {
            span.addEvent("dead-lettered", Attributes.of(DEAD_LETTER_TOPIC, topic, REASON, reason));
            span.setStatus(StatusCode.ERROR, "sent to " + topic + ": " + reason);
        }

        @Override
        public void end() {
            span.end();
        }
    }
}
