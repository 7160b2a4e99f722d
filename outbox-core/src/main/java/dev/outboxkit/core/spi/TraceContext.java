package dev.outboxkit.core.spi;

import java.util.Map;

/**
 * Not API: the W3C trace context (https://www.w3.org/TR/trace-context/) the writer stores with an event and the
 * relays and the consumer carry on. OpenTelemetry is optional: nothing of it is loaded unless the API is on the class
 * path; {@code CurrentSpan} is the only class here that uses it.
 */
public final class TraceContext {

    /** The W3C trace context header names. */
    public static final String TRACEPARENT = "traceparent";
    public static final String TRACESTATE = "tracestate";

    private static final boolean OTEL_PRESENT = present("io.opentelemetry.api.trace.Span");

    private TraceContext() {
    }

    /** True when the OpenTelemetry API is on the class path (checked once, loading nothing of it). */
    public static boolean openTelemetryPresent() {
        return OTEL_PRESENT;
    }

    /**
     * The current span's context as headers ({@code traceparent}, and {@code tracestate} when it has one); empty when
     * OpenTelemetry is absent or no valid span is current.
     */
    public static Map<String, String> currentHeaders() {
        return OTEL_PRESENT ? CurrentSpan.contextHeaders() : Map.of();
    }

    private static boolean present(String className) {
        try {
            Class.forName(className, false, TraceContext.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }
}
