package dev.outboxkit.benchmarks.scenarios;

import dev.outboxkit.benchmarks.BenchContext;
import dev.outboxkit.benchmarks.Measurements;
import dev.outboxkit.benchmarks.Metric;
import dev.outboxkit.benchmarks.MetricCatalog;
import dev.outboxkit.benchmarks.Scenario;
import dev.outboxkit.testkit.TestDatabase;
import io.opentelemetry.context.Context;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.ReadWriteSpan;
import io.opentelemetry.sdk.trace.ReadableSpan;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.SpanProcessor;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.BatchSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code poller_tracing_drain_ratio}: what tracing costs the polling relay. The same backlog drain as
 * {@link PollerDrain}, once with {@code tracing(openTelemetry)} (the SDK sampling every span, a batch span
 * processor with a 65,536-span queue, an exporter that only counts, so the number is the relay's and the SDK's
 * cost, not a collector's)
 * and once without, in the same repeat. Each side runs twice, in the order A B B A (A the traced side in even
 * repeats, the untraced one in odd), so a JVM still warming up or a load that drifts during the repeat weighs on
 * both sides alike; each drain on a fresh database. Every event must have had its span ended.
 */
public final class PollerTracingCost implements Scenario {

    private static final Logger log = LoggerFactory.getLogger(PollerTracingCost.class);
    private static final int QUEUE = 65_536;
    private static final int BATCH = 8_192;

    public static final Metric TRACED = Metric.of("poller_traced_drain_eps", "events/s",
            "polling relay draining the backlog with a PRODUCER span per event (SDK, batch processor, counting exporter), mean of two drains");
    public static final Metric UNTRACED = Metric.of("poller_untraced_drain_eps", "events/s",
            "the same drain in the same repeat without tracing, mean of two drains");

    @Override
    public String name() {
        return "poller_tracing";
    }

    @Override
    public List<Metric> metrics() {
        return List.of(MetricCatalog.POLLER_TRACING_DRAIN_RATIO, TRACED, UNTRACED);
    }

    @Override
    public boolean payloadSensitive() {
        return true;
    }

    @Override
    public Measurements run(BenchContext context) throws Exception {
        boolean tracedFirst = context.repeat() % 2 == 0;
        double a = drain(context, tracedFirst);
        double b = drain(context, !tracedFirst);
        b = (b + drain(context, !tracedFirst)) / 2;
        a = (a + drain(context, tracedFirst)) / 2;
        double traced = tracedFirst ? a : b;
        double untraced = tracedFirst ? b : a;
        return new Measurements()
                .put(MetricCatalog.POLLER_TRACING_DRAIN_RATIO.key(), traced / untraced)
                .put(TRACED.key(), traced)
                .put(UNTRACED.key(), untraced);
    }

    /** Events per second of one drain of a fresh backlog ({@link PollerDrain}'s). */
    private static double drain(BenchContext context, boolean traced) throws Exception {
        int backlog = context.sizes().backlogEvents();
        CountingExporter exported = new CountingExporter();
        LongAdder ended = new LongAdder();
        TestDatabase db = context.newDatabase();
        BacklogDrain.DrainClock clock = BacklogDrain.DrainClock.on(db);
        // a backlog drains far faster than the default queue (2,048 spans) empties on a busy machine: a larger one
        BatchSpanProcessor batches = BatchSpanProcessor.builder(exported).setMaxQueueSize(QUEUE).setMaxExportBatchSize(BATCH)
                .build();
        try (OpenTelemetrySdk otel = OpenTelemetrySdk.builder()
                .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(new EndCounter(ended)).addSpanProcessor(batches)
                        .build()).build()) {
            PollerDrain.drain(context, db, backlog, traced ? "poller-traced" : "poller-untraced", traced ? otel : null,
                    clock);
            otel.getSdkTracerProvider().forceFlush().join(30, TimeUnit.SECONDS);
        }
        long spans = ended.sum();
        if (traced ? spans < backlog : spans != 0) {
            throw new IllegalStateException((traced ? "traced" : "untraced") + " drain of " + backlog + " events ended "
                    + spans + " spans; expected " + (traced ? "one per event" : "none"));
        }
        if (exported.spans.sum() < spans) {
            log.warn("the batch span processor dropped {} of {} spans (queue full); the drain paid for every span's "
                    + "creation all the same", spans - exported.spans.sum(), spans);
        }
        return backlog / clock.seconds();
    }

    /** Counts ended spans: every event's span, whether or not the batch processor's queue had room for it. */
    private record EndCounter(LongAdder ended) implements SpanProcessor {
        @Override
        public void onStart(Context parentContext, ReadWriteSpan span) {
        }

        @Override
        public boolean isStartRequired() {
            return false;
        }

        @Override
        public void onEnd(ReadableSpan span) {
            ended.increment();
        }

        @Override
        public boolean isEndRequired() {
            return true;
        }
    }

    /** Counts the spans handed to it and drops them. */
    private static final class CountingExporter implements SpanExporter {
        final LongAdder spans = new LongAdder();

        @Override
        public CompletableResultCode export(Collection<SpanData> batch) {
            spans.add(batch.size());
            return CompletableResultCode.ofSuccess();
        }

        @Override
        public CompletableResultCode flush() {
            return CompletableResultCode.ofSuccess();
        }

        @Override
        public CompletableResultCode shutdown() {
            return CompletableResultCode.ofSuccess();
        }
    }
}
