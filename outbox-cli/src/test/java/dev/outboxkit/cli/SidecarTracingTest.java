package dev.outboxkit.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.HttpServer;
import dev.outboxkit.testkit.JavaProcess;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import java.io.ByteArrayOutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The sidecar exports its publish spans over OTLP/HTTP when the standard OTEL_* variables say so. */
@ExtendWith(OutboxTestkitExtension.class)
class SidecarTracingTest {

    private static final Duration WAIT = Duration.ofSeconds(120);

    @Test
    void tracingIsOffUnlessAnExporterOrEndpointIsConfigured() {
        assertThat(SidecarTracing.requested(Map.of())).isFalse();
        assertThat(SidecarTracing.fromEnvironment(Map.of("OTEL_SERVICE_NAME", "x"), "outbox-relay-poll")).isNull();
        assertThat(SidecarTracing.requested(Map.of("OTEL_TRACES_EXPORTER", "none", "OTEL_EXPORTER_OTLP_ENDPOINT", "http://h:4318")))
                .isFalse();
        assertThat(SidecarTracing.requested(Map.of("OTEL_EXPORTER_OTLP_ENDPOINT", "http://h:4318", "OTEL_SDK_DISABLED", "true")))
                .isFalse();
        assertThat(SidecarTracing.requested(Map.of("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://h:4318/v1/traces"))).isTrue();
        assertThat(SidecarTracing.requested(Map.of("OTEL_TRACES_EXPORTER", "otlp"))).isTrue();
    }

    @Test
    void anUnknownExporterIsAConfigurationError() {
        assertThatThrownBy(() -> SidecarTracing.fromEnvironment(Map.of("OTEL_TRACES_EXPORTER", "carrier-pigeon"), "x"))
                .isInstanceOf(ConfigurationException.class).hasMessageContaining("OTEL_*").hasMessageContaining("carrier-pigeon");
    }

    @Test
    void theSidecarSendsItsPublishSpansToTheConfiguredOtlpEndpoint(TestDatabase db, TestKafka kafka) throws Exception {
        AtomicInteger posts = new AtomicInteger();
        ByteArrayOutputStream bodies = new ByteArrayOutputStream();
        HttpServer receiver = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        receiver.createContext("/v1/traces", exchange -> {
            byte[] body = exchange.getRequestBody().readAllBytes();
            if (exchange.getRequestMethod().equals("POST")) {
                synchronized (bodies) {
                    bodies.writeBytes(body);
                }
                posts.incrementAndGet();
            }
            // an empty ExportTraceServiceResponse: everything accepted
            exchange.getResponseHeaders().add("Content-Type", "application/x-protobuf");
            exchange.sendResponseHeaders(200, -1);
            exchange.close();
        });
        receiver.start();
        try {
            String prefix = TestKafka.uniqueTopic("sidecar-trace");
            kafka.createTopic(prefix + ".order", 1);
            UUID id = UUID.randomUUID();
            db.exec("INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload) VALUES ('" + id
                    + "', 'order', 'o-1', 'Placed', '{}')");
            Map<String, String> env = Map.of("OUTBOX_JDBC_URL", db.jdbcUrl(), "OUTBOX_USER", db.user(),
                    "OUTBOX_PASSWORD", db.password(), "OUTBOX_BOOTSTRAP_SERVERS", kafka.bootstrapServers(),
                    "OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:" + receiver.getAddress().getPort(),
                    "OTEL_BSP_SCHEDULE_DELAY", "100",
                    "OTEL_SERVICE_NAME", "sidecar-under-test");
            try (JavaProcess relay = JavaProcess.start("sidecar-trace", Main.class, List.of("relay", "poll", "--http-port", "0",
                    "--route", prefix + ".${aggregateType}", "--instance-id", "sidecar-trace"), List.of(), env)) {
                await().atMost(WAIT).until(() -> db.count("SELECT count(*) FROM outbox_event") == 0);
                await().atMost(WAIT).until(() -> posts.get() > 0 && received(bodies).contains(id.toString()));
                assertThat(relay.terminate(WAIT)).as(relay.output()).isZero();
                assertThat(relay.output()).contains("exporting spans (OTEL_* environment)");
            }
            // protobuf keeps strings as UTF-8: the span's name, service and the event id are in the request
            assertThat(received(bodies)).contains("publish " + prefix + ".order").contains("sidecar-under-test")
                    .contains("messaging.message.id");
        } finally {
            receiver.stop(0);
        }
    }

    private static String received(ByteArrayOutputStream bodies) {
        synchronized (bodies) {
            return bodies.toString(StandardCharsets.ISO_8859_1);
        }
    }
}
