package dev.outboxkit.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxkit.core.InvalidEventException;
import dev.outboxkit.core.OutboxEvent;
import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.relay.KafkaRecords;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class TracingTest {

    private static final UUID ID = UUID.fromString("018f3a5e-7b2c-7d11-8a00-0123456789ab");
    private static final String TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
    private static final String PARENT = "00f067aa0ba902b7";
    private static final String ROW_CONTEXT = "00-" + TRACE + "-" + PARENT + "-01";

    private final InMemorySpanExporter spans = InMemorySpanExporter.create();
    private final SdkTracerProvider provider = SdkTracerProvider.builder()
            .addSpanProcessor(SimpleSpanProcessor.create(spans)).build();
    private final OpenTelemetrySdk otel = OpenTelemetrySdk.builder().setTracerProvider(provider).build();
    private final Tracing tracing = Tracing.of(otel);
    private final TracedRecords traced = new TracedRecords(TopicRoute.defaultRoute(), tracing);
    private final KafkaRecords plain = new KafkaRecords(TopicRoute.defaultRoute());

    @AfterEach
    void close() {
        otel.close();
    }

    private static OutboxEvent event(String headersJson) {
        return OutboxEvent.fromRow(ID, "account", "acc-42", "MoneyDeposited", null, "{\"amount\": 10}", headersJson,
                Instant.parse("2026-11-29T08:38:37.1234Z"));
    }

    @Test
    void publishSpanIsAChildOfTheRowsContextAndTheRecordCarriesTheSpan() {
        TracedRecords.Traced t = traced.toRecord(event(
                "{\"before\": \"1\", \"traceparent\": \"" + ROW_CONTEXT + "\", \"tracestate\": \"vendor=x\", \"after\": \"2\"}"));
        t.span().callback(null).onCompletion(new RecordMetadata(new TopicPartition("outbox.event.account", 3), 41, 0, 0, 0, 0),
                null);

        SpanData span = only(spans.getFinishedSpanItems());
        assertThat(span.getName()).isEqualTo("publish outbox.event.account");
        assertThat(span.getKind()).isEqualTo(SpanKind.PRODUCER);
        assertThat(span.getTraceId()).isEqualTo(TRACE);
        assertThat(span.getParentSpanId()).isEqualTo(PARENT);
        assertThat(span.getStatus().getStatusCode()).isEqualTo(StatusCode.UNSET);
        assertThat(span.getAttributes().get(AttributeKey.stringKey("messaging.system"))).isEqualTo("kafka");
        assertThat(span.getAttributes().get(AttributeKey.stringKey("messaging.destination.name")))
                .isEqualTo("outbox.event.account");
        assertThat(span.getAttributes().get(AttributeKey.stringKey("messaging.operation.type"))).isEqualTo("send");
        assertThat(span.getAttributes().get(AttributeKey.stringKey("messaging.message.id"))).isEqualTo(ID.toString());
        assertThat(span.getAttributes().get(AttributeKey.stringKey("messaging.destination.partition.id"))).isEqualTo("3");
        assertThat(span.getAttributes().get(AttributeKey.longKey("messaging.kafka.offset"))).isEqualTo(41L);
        // same headers in the same places; only the context is the publish span's
        assertThat(headers(t.record())).containsExactly(
                "id=" + ID, "eventType=MoneyDeposited", "aggregateType=account", "createdAt=2026-11-29T08:38:37.123400Z",
                "before=1", "traceparent=00-" + TRACE + "-" + span.getSpanId() + "-01", "tracestate=vendor=x", "after=2");
    }

    @Test
    void tracingOffGivesTheSameRecordAsBefore() {
        OutboxEvent e = event("{\"traceparent\": \"" + ROW_CONTEXT + "\"}");
        TracedRecords.Traced t = new TracedRecords(TopicRoute.defaultRoute(), Tracing.OFF).toRecord(e);
        assertThat(t.span()).isSameAs(PublishSpan.NONE);
        assertThat(headers(t.record())).isEqualTo(headers(plain.toRecord(e)));
        assertThat(headers(t.record())).contains("traceparent=" + ROW_CONTEXT);
    }

    @Test
    void aRowWithoutContextGetsARootSpanAndTheRecordItsTraceparent() {
        TracedRecords.Traced t = traced.toRecord(event("{}"));
        t.span().end(null, null);
        SpanData span = only(spans.getFinishedSpanItems());
        assertThat(span.getParentSpanContext().isValid()).isFalse();
        assertThat(headers(t.record())).last().isEqualTo("traceparent=00-" + span.getTraceId() + "-" + span.getSpanId() + "-"
                + span.getSpanContext().getTraceFlags().asHex());
    }

    @Test
    void anEventThatCanNeverBePublishedEndsItsSpanAsParked() {
        assertThatThrownBy(() -> traced.toRecord(event("{\"traceparent\": \"" + ROW_CONTEXT + "\", \"id\": \"x\"}")))
                .isInstanceOf(InvalidEventException.class);
        SpanData span = only(spans.getFinishedSpanItems());
        assertThat(span.getTraceId()).isEqualTo(TRACE);
        assertThat(span.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
        assertThat(span.getStatus().getDescription()).startsWith("parked: ").contains("reserved");
        assertThat(span.getAttributes().get(AttributeKey.booleanKey("outboxkit.parked"))).isTrue();
        assertThat(span.getEvents()).extracting(e -> e.getName()).contains("parked", "exception");
    }

    @Test
    void refusedForGoodIsParkedAndATimeoutIsOnlyAFailure() {
        traced.toRecord(event("{}")).span().callback(null).onCompletion(null, new RecordTooLargeException("too big"));
        traced.toRecord(event("{}")).span().callback(null).onCompletion(null, new TimeoutException("no ack"));
        List<SpanData> ended = spans.getFinishedSpanItems();
        assertThat(ended).hasSize(2);
        assertThat(ended.get(0).getStatus().getDescription()).isEqualTo("parked: too big");
        assertThat(ended.get(0).getAttributes().get(AttributeKey.stringKey("error.type")))
                .isEqualTo(RecordTooLargeException.class.getName());
        assertThat(ended.get(1).getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
        assertThat(ended.get(1).getStatus().getDescription()).startsWith("not published (retried later)");
        assertThat(ended.get(1).getAttributes().get(AttributeKey.booleanKey("outboxkit.parked"))).isNull();
    }

    @Test
    void theCurrentSpansContextBecomesHeaders() {
        assertThat(Tracing.openTelemetryPresent()).isTrue();
        assertThat(Tracing.currentContextHeaders()).isEmpty();
        Span request = otel.getTracer("test").spanBuilder("request").startSpan();
        try (Scope ignored = request.makeCurrent()) {
            assertThat(Tracing.currentContextHeaders()).containsExactly(java.util.Map.entry("traceparent",
                    "00-" + request.getSpanContext().getTraceId() + "-" + request.getSpanContext().getSpanId() + "-"
                            + request.getSpanContext().getTraceFlags().asHex()));
        } finally {
            request.end();
        }
    }

    @Test
    void processSpanIsAChildOfTheRecordsContextAndCurrentInsideItsScope() {
        ConsumerRecord<byte[], byte[]> record = new ConsumerRecord<>("orders", 2, 7L, new byte[0], new byte[0]);
        record.headers().add("traceparent", ROW_CONTEXT.getBytes(StandardCharsets.UTF_8));
        ProcessSpan p = tracing.startProcess(record, "billing", ID);
        String inside;
        try (ProcessSpan.Scope ignored = p.makeCurrent()) {
            inside = Span.current().getSpanContext().getSpanId();
        }
        p.duplicate();
        p.end();
        SpanData span = only(spans.getFinishedSpanItems());
        assertThat(inside).isEqualTo(span.getSpanId());
        assertThat(Span.current().getSpanContext().isValid()).isFalse();
        assertThat(span.getName()).isEqualTo("process orders");
        assertThat(span.getKind()).isEqualTo(SpanKind.CONSUMER);
        assertThat(span.getParentSpanId()).isEqualTo(PARENT);
        assertThat(span.getAttributes().get(AttributeKey.stringKey("messaging.consumer.group.name"))).isEqualTo("billing");
        assertThat(span.getAttributes().get(AttributeKey.longKey("messaging.kafka.offset"))).isEqualTo(7L);
        assertThat(span.getAttributes().get(AttributeKey.booleanKey("outboxkit.inbox.duplicate"))).isTrue();
    }

    @Test
    void aBatchProcessSpanIsLinkedToEveryRecordsContext() {
        ConsumerRecord<byte[], byte[]> traced = new ConsumerRecord<>("orders", 0, 1L, new byte[0], new byte[0]);
        traced.headers().add("traceparent", ROW_CONTEXT.getBytes(StandardCharsets.UTF_8));
        ConsumerRecord<byte[], byte[]> untraced = new ConsumerRecord<>("orders", 0, 2L, new byte[0], new byte[0]);
        ProcessSpan p = tracing.startBatchProcess(List.of(traced, untraced), "billing");
        p.failed(new IllegalStateException("handler broke"));
        p.end();
        SpanData span = only(spans.getFinishedSpanItems());
        assertThat(span.getName()).isEqualTo("process orders");
        assertThat(span.getParentSpanContext().isValid()).isFalse();
        assertThat(span.getLinks()).extracting(l -> l.getSpanContext().getSpanId()).containsExactly(PARENT);
        assertThat(span.getAttributes().get(AttributeKey.longKey("messaging.batch.message_count"))).isEqualTo(2L);
        assertThat(span.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
        assertThat(span.getStatus().getDescription()).isEqualTo("handler failed: handler broke");
    }

    private static SpanData only(List<SpanData> items) {
        assertThat(items).hasSize(1);
        return items.get(0);
    }

    private static List<String> headers(ProducerRecord<byte[], byte[]> r) {
        return WithoutOpenTelemetryTest.headers(r);
    }
}
