package dev.outboxkit.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.outboxkit.consumer.DedupeConsumer;
import dev.outboxkit.core.InvalidEventException;
import dev.outboxkit.core.Secret;
import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.relay.Relay;
import dev.outboxkit.relay.cdc.CdcRelay;
import dev.outboxkit.relay.poller.PollingRelay;
import dev.outboxkit.testkit.JavaProcess;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import dev.outboxkit.writer.OutboxMessage;
import dev.outboxkit.writer.OutboxWriter;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * One trace from the request to the consumer's effect (issue 18), on the testkit's real PostgreSQL and Kafka:
 * a request span writes one event to a database drained by the polling relay and one to a database streamed
 * by the CDC relay; the consumer's handler runs under a process span whose parent is the publish span whose
 * parent is the request. A redelivered record is marked duplicate and gets no handler span; a dead-lettered
 * record keeps its context on the .dlq record; a row the relay parks gets an error span with the reason.
 */
@ExtendWith(OutboxTestkitExtension.class)
class TracingEndToEndTest {

    private static final Duration WAIT = Duration.ofSeconds(120);
    private static final AttributeKey<String> DESTINATION = AttributeKey.stringKey("messaging.destination.name");
    private static final AttributeKey<String> MESSAGE_ID = AttributeKey.stringKey("messaging.message.id");
    private static final AttributeKey<Boolean> DUPLICATE = AttributeKey.booleanKey("outboxkit.inbox.duplicate");

    private final InMemorySpanExporter exported = InMemorySpanExporter.create();

    @Test
    void oneTraceFromTheRequestThroughBothRelaysToTheHandler(TestDatabase polled, TestDatabase streamed, TestKafka kafka)
            throws Exception {
        String pollTopic = TestKafka.uniqueTopic("trace-poll");
        String walTopic = TestKafka.uniqueTopic("trace-wal");
        for (String t : List.of(pollTopic, walTopic, pollTopic + ".dlq", walTopic + ".dlq")) {
            kafka.createTopic(t, 1);
        }
        String slot = "s_" + streamed.name();
        List<String> handled = new CopyOnWriteArrayList<>();
        try (OpenTelemetrySdk otel = OpenTelemetrySdk.builder()
                .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exported)).build())
                .build()) {
            Tracer app = otel.getTracer("app");
            OutboxWriter writer = OutboxWriter.builder().build();
            Relay poller = PollingRelay.builder().dataSource(polled.dataSource()).bootstrapServers(kafka.bootstrapServers())
                    .route(TopicRoute.of(pollTopic)).instanceId("trace-poll").tracing(otel).build();
            Relay cdcRelay = CdcRelay.builder().jdbcUrl(streamed.jdbcUrl()).user(streamed.user())
                    .password(Secret.of(streamed.password())).slotName(slot).bootstrapServers(kafka.bootstrapServers())
                    .route(TopicRoute.of(walTopic)).instanceId("trace-wal").leaseDuration(Duration.ofSeconds(10))
                    .heartbeatInterval(Duration.ofSeconds(1)).offsetFlushInterval(Duration.ofMillis(200))
                    .tracing(otel).build();
            DedupeConsumer consumer = DedupeConsumer.builder().bootstrapServers(kafka.bootstrapServers())
                    .kafkaProperties(Map.of("session.timeout.ms", "10000", "heartbeat.interval.ms", "1000"))
                    .group("g-" + pollTopic).topics(List.of(pollTopic, walTopic)).dataSource(polled.dataSource())
                    .backoff(Duration.ofMillis(20)).maxBackoff(Duration.ofMillis(200)).pollTimeout(Duration.ofMillis(100))
                    .maxAttempts(1)
                    .handler((c, event) -> {
                        if (event.eventType().equals("Poison")) {
                            throw new InvalidEventException("test: this event can never be applied");
                        }
                        // the handler's own work, as a JDBC or HTTP instrumentation would record it
                        Span work = app.spanBuilder("handle " + event.eventType()).startSpan();
                        work.end();
                        handled.add(event.id().toString());
                    })
                    .tracing(otel).build();
            try {
                poller.start();
                cdcRelay.start();
                consumer.start();

                Span request = app.spanBuilder("POST /accounts").setSpanKind(SpanKind.SERVER).startSpan();
                UUID viaPoller;
                UUID viaWal;
                try (Scope ignored = request.makeCurrent()) {
                    OutboxMessage a = message("Opened");
                    OutboxMessage b = message("Opened");
                    writer.inTransaction(polled.dataSource(), (c, tx) -> tx.add(a));
                    writer.inTransaction(streamed.dataSource(), (c, tx) -> tx.add(b));
                    viaPoller = a.id();
                    viaWal = b.id();
                } finally {
                    request.end();
                }
                await().atMost(WAIT).until(() -> handled.size() == 2);

                // the relay published the record again (a crash before it forgot the row): same event id
                ConsumerRecord<byte[], byte[]> polledRecord = kafka.readAll(List.of(pollTopic)).get(0);
                resend(kafka, polledRecord);
                await().atMost(WAIT).until(() -> spans(s -> Boolean.TRUE.equals(s.getAttributes().get(DUPLICATE))).size() == 1);

                String trace = request.getSpanContext().getTraceId();
                SpanData publishPoll = one(s -> s.getKind() == SpanKind.PRODUCER && pollTopic.equals(s.getAttributes().get(DESTINATION)));
                SpanData publishWal = one(s -> s.getKind() == SpanKind.PRODUCER && walTopic.equals(s.getAttributes().get(DESTINATION)));
                for (SpanData publish : List.of(publishPoll, publishWal)) {
                    assertThat(publish.getTraceId()).isEqualTo(trace);
                    assertThat(publish.getParentSpanId()).isEqualTo(request.getSpanContext().getSpanId());
                }
                assertThat(publishPoll.getAttributes().get(MESSAGE_ID)).isEqualTo(viaPoller.toString());
                assertThat(publishWal.getAttributes().get(MESSAGE_ID)).isEqualTo(viaWal.toString());
                assertThat(publishPoll.getName()).isEqualTo("publish " + pollTopic);

                List<SpanData> processes = spans(s -> s.getKind() == SpanKind.CONSUMER);
                assertThat(processes).hasSize(3).allSatisfy(p -> assertThat(p.getTraceId()).isEqualTo(trace));
                SpanData processPoll = one(s -> s.getKind() == SpanKind.CONSUMER && s.getAttributes().get(DUPLICATE) == null
                        && s.getParentSpanId().equals(publishPoll.getSpanId()));
                SpanData processWal = one(s -> s.getKind() == SpanKind.CONSUMER && s.getAttributes().get(DUPLICATE) == null
                        && s.getParentSpanId().equals(publishWal.getSpanId()));
                SpanData duplicate = one(s -> Boolean.TRUE.equals(s.getAttributes().get(DUPLICATE)));
                assertThat(duplicate.getParentSpanId()).isEqualTo(publishPoll.getSpanId());
                assertThat(duplicate.getEvents()).extracting(e -> e.getName()).containsExactly("duplicate skipped");

                // the handler ran once per event, inside its process span; the duplicate ran no handler
                List<SpanData> handlerSpans = spans(s -> s.getName().equals("handle Opened"));
                assertThat(handlerSpans).extracting(SpanData::getParentSpanId)
                        .containsExactlyInAnyOrder(processPoll.getSpanId(), processWal.getSpanId());
                assertThat(handled).containsExactlyInAnyOrder(viaPoller.toString(), viaWal.toString());
                assertThat(spans(s -> !s.getTraceId().equals(trace))).isEmpty();

                // a dead-lettered record carries its publish span's context on the .dlq record
                OutboxMessage poison = message("Poison");
                writer.inTransaction(polled.dataSource(), (c, tx) -> tx.add(poison));
                await().atMost(WAIT).until(() -> !kafka.readAll(List.of(pollTopic + ".dlq")).isEmpty());
                ConsumerRecord<byte[], byte[]> dead = kafka.readAll(List.of(pollTopic + ".dlq")).get(0);
                SpanData publishPoison = one(s -> s.getKind() == SpanKind.PRODUCER
                        && poison.id().toString().equals(s.getAttributes().get(MESSAGE_ID)));
                assertThat(header(dead, "traceparent")).startsWith("00-" + publishPoison.getTraceId() + "-"
                        + publishPoison.getSpanId() + "-");
                SpanData deadLettered = one(s -> s.getKind() == SpanKind.CONSUMER
                        && s.getEvents().stream().anyMatch(e -> e.getName().equals("dead-lettered")));
                assertThat(deadLettered.getParentSpanId()).isEqualTo(publishPoison.getSpanId());
                assertThat(spans(s -> s.getName().equals("handle Poison"))).isEmpty();

                // a row the relay can never publish (a reserved header) is parked under an error span saying why
                UUID unpublishable = UUID.randomUUID();
                polled.exec("INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload, headers) VALUES ('"
                        + unpublishable + "', 'account', 'acc-x', 'Opened', '{}', '{\"traceparent\": \"00-" + trace + "-"
                        + request.getSpanContext().getSpanId() + "-01\", \"id\": \"mine\"}')");
                await().atMost(WAIT).until(() -> polled.count("SELECT count(*) FROM outbox_dead_letter WHERE id = '"
                        + unpublishable + "'") == 1);
                SpanData parked = one(s -> unpublishable.toString().equals(s.getAttributes().get(MESSAGE_ID)));
                assertThat(parked.getParentSpanId()).isEqualTo(request.getSpanContext().getSpanId());
                assertThat(parked.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
                assertThat(parked.getStatus().getDescription()).startsWith("parked: ").contains("reserved");
                assertThat(parked.getAttributes().get(AttributeKey.booleanKey("outboxkit.parked"))).isTrue();
            } finally {
                consumer.close();
                cdcRelay.close();
                poller.close();
                streamed.dropReplicationSlot(slot);
            }
        }
    }

    @Test
    void withoutOpenTelemetryOnTheClassPathEverythingWorksAndNothingOfItIsNeeded(TestDatabase db, TestKafka kafka) {
        String topic = TestKafka.uniqueTopic("no-otel");
        kafka.createTopic(topic, 1);
        kafka.createTopic(topic + ".dlq", 1);
        String id;
        try (JavaProcess child = JavaProcess.start("no-otel", NoOpenTelemetryMain.class,
                List.of(db.jdbcUrl(), db.user(), db.password(), kafka.bootstrapServers(), topic), List.of(), Map.of(),
                entry -> entry.contains("opentelemetry"))) {
            assertThat(child.waitForExit(WAIT)).as(child.output()).isZero();
            assertThat(child.output()).contains("NO-OTEL OK ");
            id = child.output().substring(child.output().indexOf("NO-OTEL OK ") + 11).strip();
        }
        // The event, once. G2: if Kafka's answer took longer than the relay's wait (a loaded machine stalls that long
        // too), one more copy of it; never another event.
        assertThat(kafka.readAll(List.of(topic))).hasSizeBetween(1, 2).allSatisfy(r -> assertThat(
                new String(r.headers().lastHeader("id").value(), StandardCharsets.UTF_8)).isEqualTo(id));
    }

    private static OutboxMessage message(String type) {
        return OutboxMessage.builder("account", "acc-" + UUID.randomUUID(), type).payloadJson("{}").build();
    }

    private List<SpanData> spans(Predicate<SpanData> which) {
        return exported.getFinishedSpanItems().stream().filter(which).toList();
    }

    private SpanData one(Predicate<SpanData> which) {
        List<SpanData> found = spans(which);
        assertThat(found).as("spans matching, among %s", exported.getFinishedSpanItems()).hasSize(1);
        return found.get(0);
    }

    private static void resend(TestKafka kafka, ConsumerRecord<byte[], byte[]> record) throws Exception {
        Map<String, Object> config = Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class,
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(config)) {
            producer.send(new ProducerRecord<>(record.topic(), null, record.key(), record.value(), record.headers())).get();
        }
    }

    private static String header(ConsumerRecord<byte[], byte[]> r, String name) {
        Header h = r.headers().lastHeader(name);
        return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
    }
}
