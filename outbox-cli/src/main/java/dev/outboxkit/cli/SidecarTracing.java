package dev.outboxkit.cli;

import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.autoconfigure.AutoConfiguredOpenTelemetrySdk;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The sidecar's spans, exported as the standard {@code OTEL_*} variables say (the OpenTelemetry SDK's
 * autoconfiguration: OTLP by default, endpoint, protocol, headers, resource, sampler). Off unless
 * {@code OTEL_TRACES_EXPORTER} (other than {@code none}) or an OTLP endpoint variable is set, so a sidecar nobody
 * configured for tracing makes no span and sends nothing. Only traces: metrics stay on {@code /metrics}.
 */
final class SidecarTracing {

    static final String TRACES_EXPORTER = "OTEL_TRACES_EXPORTER";
    static final String ENDPOINT = "OTEL_EXPORTER_OTLP_ENDPOINT";
    static final String TRACES_ENDPOINT = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT";

    private SidecarTracing() {
    }

    /** True when {@code env} asks for spans to be exported. */
    static boolean requested(Map<String, String> env) {
        if ("true".equalsIgnoreCase(env.getOrDefault("OTEL_SDK_DISABLED", "").trim())) {
            return false;
        }
        String exporter = env.getOrDefault(TRACES_EXPORTER, "").trim();
        if (!exporter.isEmpty()) {
            return !exporter.equalsIgnoreCase("none");
        }
        return !env.getOrDefault(ENDPOINT, "").isBlank() || !env.getOrDefault(TRACES_ENDPOINT, "").isBlank();
    }

    /**
     * The SDK configured from {@code env} (the variables win over the process's own, so a test can pass them), or
     * null when tracing is not requested.
     *
     * @param serviceName the {@code service.name} unless {@code OTEL_SERVICE_NAME} or the resource attributes name one
     * @throws ConfigurationException when the variables are inconsistent (an unknown exporter, a bad endpoint)
     */
    static OpenTelemetrySdk fromEnvironment(Map<String, String> env, String serviceName) {
        if (!requested(env)) {
            return null;
        }
        Map<String, String> properties = new HashMap<>();
        properties.put("otel.service.name", serviceName);
        properties.put("otel.metrics.exporter", "none");
        properties.put("otel.logs.exporter", "none");
        // the SDK's own default is grpc, for which the sidecar ships no sender (only the JDK's HTTP client)
        properties.put("otel.exporter.otlp.protocol", "http/protobuf");
        env.forEach((name, value) -> {
            if (name.startsWith("OTEL_")) {
                properties.put(name.toLowerCase(Locale.ROOT).replace('_', '.'), value);
            }
        });
        try {
            return AutoConfiguredOpenTelemetrySdk.builder()
                    .addPropertiesSupplier(() -> properties)
                    .disableShutdownHook()
                    .build()
                    .getOpenTelemetrySdk();
        } catch (RuntimeException e) {
            StringBuilder why = new StringBuilder(String.valueOf(e.getMessage()));
            for (Throwable cause = e.getCause(); cause != null && cause != cause.getCause(); cause = cause.getCause()) {
                why.append(": ").append(cause.getMessage() != null ? cause.getMessage() : cause.getClass().getName());
            }
            throw new ConfigurationException("Invalid OpenTelemetry configuration in the OTEL_* environment variables: "
                    + why);
        }
    }

    /** Flushes what is still buffered and stops the exporter, waiting at most {@code seconds}. */
    static void close(OpenTelemetrySdk sdk, long seconds) {
        if (sdk != null) {
            sdk.shutdown().join(seconds, TimeUnit.SECONDS);
        }
    }
}
