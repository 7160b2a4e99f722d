package dev.outboxkit.core.spi;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import java.util.LinkedHashMap;
import java.util.Map;

/** The current span's W3C context; reached only after {@link TraceContext} found the OpenTelemetry API. */
final class CurrentSpan {

    private CurrentSpan() {
    }

    static Map<String, String> contextHeaders() {
        Context current = Context.current();
        if (!Span.fromContext(current).getSpanContext().isValid()) {
            return Map.of();
        }
        Map<String, String> out = new LinkedHashMap<>(4);
        W3CTraceContextPropagator.getInstance().inject(current, out, Map::put);
        return out;
    }
}
