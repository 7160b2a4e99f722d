package dev.outboxkit.spring.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * With an {@code OpenTelemetry} bean in the application, the in-app relay publishes each event under a PRODUCER
 * span whose parent is the span that was current when the service wrote it (the writer stored its context).
 */
@SpringBootTest(classes = TestApplication.class, properties = {
        "spring.autoconfigure.exclude=org.springframework.boot.hibernate.autoconfigure.HibernateJpaAutoConfiguration,"
                + "org.springframework.boot.data.jpa.autoconfigure.DataJpaRepositoriesAutoConfiguration",
        "outboxkit.relay.mode=poll",
        "outboxkit.relay.options.max-poll-delay=20ms",
        "outboxkit.relay.options.instance-id=relay-traced"})
@ActiveProfiles("relay")
@Import(RelayTracingTest.Tracing.class)
class RelayTracingTest {

    static final InMemorySpanExporter SPANS = InMemorySpanExporter.create();

    @TestConfiguration(proxyBeanMethods = false)
    static class Tracing {
        @Bean(destroyMethod = "close")
        OpenTelemetrySdk openTelemetry() {
            return OpenTelemetrySdk.builder()
                    .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(SPANS)).build())
                    .build();
        }
    }

    @DynamicPropertySource
    static void infrastructure(DynamicPropertyRegistry registry) {
        RelayAppTest.relayInfrastructure(registry);
    }

    @Autowired
    TransferController ledger;
    @Autowired
    PlatformTransactionManager transactionManager;
    @Autowired
    OpenTelemetry openTelemetry;

    @Test
    void theRelayPublishesUnderTheSpanTheServiceWroteIn() {
        Span request = openTelemetry.getTracer("test").spanBuilder("POST /transfers").setSpanKind(SpanKind.SERVER).startSpan();
        UUID transfer;
        try (Scope ignored = request.makeCurrent()) {
            transfer = new TransactionTemplate(transactionManager).execute(status -> ledger.transfer("A", "B", 1));
        } finally {
            request.end();
        }
        assertThat(transfer).isNotNull();
        await().atMost(Duration.ofSeconds(60)).until(() -> SPANS.getFinishedSpanItems().stream()
                .anyMatch(s -> s.getKind() == SpanKind.PRODUCER));
        SpanData publish = SPANS.getFinishedSpanItems().stream().filter(s -> s.getKind() == SpanKind.PRODUCER).findFirst()
                .orElseThrow();
        assertThat(publish.getTraceId()).isEqualTo(request.getSpanContext().getTraceId());
        assertThat(publish.getParentSpanId()).isEqualTo(request.getSpanContext().getSpanId());
        assertThat(publish.getAttributes().get(AttributeKey.stringKey("messaging.destination.name"))).isEqualTo(Projection.TOPIC);
    }
}
