package dev.outboxkit.spring;

import dev.outboxkit.relay.RelayBuilder;
import io.opentelemetry.api.OpenTelemetry;
import org.springframework.beans.factory.ObjectProvider;

/**
 * The application's {@code OpenTelemetry} bean for the relay the auto-configuration builds. Created only when the
 * OpenTelemetry API is on the class path, so an application without it loads nothing of it.
 */
final class RelayTracing {

    private final ObjectProvider<OpenTelemetry> openTelemetry;

    RelayTracing(ObjectProvider<OpenTelemetry> openTelemetry) {
        this.openTelemetry = openTelemetry;
    }

    /** Traces {@code builder}'s relay through the application's OpenTelemetry, when it has exactly one. */
    void applyTo(RelayBuilder<?> builder) {
        OpenTelemetry otel = openTelemetry.getIfUnique();
        if (otel != null) {
            builder.tracing(otel);
        }
    }
}
