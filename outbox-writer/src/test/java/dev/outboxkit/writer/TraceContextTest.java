package dev.outboxkit.writer;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.TraceFlags;
import io.opentelemetry.api.trace.TraceState;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** With OpenTelemetry on the class path the writer stores the current span's context with each event. */
@ExtendWith(OutboxTestkitExtension.class)
class TraceContextTest {

    private static final String TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
    private static final String SPAN = "00f067aa0ba902b7";
    private static final String EXPLICIT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

    private final OutboxWriter writer = OutboxWriter.builder().build();

    /** A span as a server instrumentation would have made current (its context is all the writer reads). */
    private static Scope currentSpan(TraceState state) {
        SpanContext sc = SpanContext.create(TRACE, SPAN, TraceFlags.getSampled(), state);
        return Context.root().with(Span.wrap(sc)).makeCurrent();
    }

    private static OutboxMessage.Builder message(String id) {
        return OutboxMessage.builder("account", id, "Opened").payloadJson("{}").header("tenant", "acme");
    }

    @Test
    void theCurrentSpansContextIsStoredWithTheEvent(TestDatabase db) throws Exception {
        try (Scope ignored = currentSpan(TraceState.builder().put("vendor", "x").build())) {
            writer.inTransaction(db.dataSource(), (c, tx) -> tx.add(message("1").build()));
        }
        assertThat(headers(db)).containsExactly("{\"tenant\": \"acme\", \"tracestate\": \"vendor=x\", \"traceparent\": \"00-"
                + TRACE + "-" + SPAN + "-01\"}");
    }

    @Test
    void anExplicitTraceparentWinsOverTheCurrentSpan(TestDatabase db) throws Exception {
        try (Scope ignored = currentSpan(TraceState.getDefault())) {
            writer.inTransaction(db.dataSource(), (c, tx) -> tx.add(message("1").traceparent(EXPLICIT).build()));
        }
        assertThat(headers(db)).containsExactly("{\"tenant\": \"acme\", \"traceparent\": \"" + EXPLICIT + "\"}");
    }

    @Test
    void withoutACurrentSpanNothingIsAdded(TestDatabase db) throws Exception {
        writer.inTransaction(db.dataSource(), (c, tx) -> tx.add(message("1").build()));
        assertThat(headers(db)).containsExactly("{\"tenant\": \"acme\"}");
    }

    private static List<String> headers(TestDatabase db) throws Exception {
        List<String> out = new ArrayList<>();
        try (Connection c = db.connect(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT headers::text FROM outbox_event ORDER BY seq")) {
            while (rs.next()) {
                out.add(rs.getString(1));
            }
        }
        return out;
    }
}
