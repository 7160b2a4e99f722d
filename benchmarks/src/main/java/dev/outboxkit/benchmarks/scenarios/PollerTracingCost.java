package dev.outboxkit.benchmarks.scenarios;

import dev.outboxkit.benchmarks.BenchContext;
import dev.outboxkit.benchmarks.Measurements;
import dev.outboxkit.benchmarks.Metric;
import dev.outboxkit.benchmarks.MetricCatalog;
import dev.outboxkit.benchmarks.Scenario;
import dev.outboxkit.benchmarks.load.Await;
import dev.outboxkit.benchmarks.load.Backlog;
import dev.outboxkit.benchmarks.load.Relays;
import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.relay.poller.PollingRelay;
import dev.outboxkit.testkit.TestDatabase;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.BatchSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.sql.Connection;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;

/**
 * {@code poller_tracing_drain_ratio}: what tracing costs the polling relay. The same backlog drain as
 * {@link PollerDrain}, once with {@code tracing(openTelemetry)} (the SDK sampling every span, a batch span
 * processor, an exporter that only counts, so the number is the relay's and the SDK's cost, not a collector's)
 * and once without, in the same repeat. Each side runs twice, in the order A B B A (A the traced side in even
 * repeats, the untraced one in odd), so a JVM still warming up or a load that drifts during the repeat weighs on
 * both sides alike; each drain on a fresh database. Every event must have had its span exported.
 */
public final class PollerTracingCost implements Scenario {

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

    /** Events per second of one drain of a fresh backlog. */
    private static double drain(BenchContext context, boolean traced) throws Exception {
        TestDatabase db = context.newDatabase();
        int backlog = context.sizes().backlogEvents();
        String topic = context.uniqueTopic(traced ? "poller-traced" : "poller-untraced");
        context.kafka().createTopic(topic, BacklogDrain.PARTITIONS);
        Backlog.fill(db, BacklogDrain.SCHEMA, backlog, context.payloadBytes());
        CountingExporter exported = new CountingExporter();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        double seconds;
        try (OpenTelemetrySdk otel = OpenTelemetrySdk.builder()
                .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(BatchSpanProcessor.builder(exported).build())
                        .build()).build();
             PollingRelay relay = Relays.poller(db, context.kafka().bootstrapServers(), TopicRoute.of(topic), registry,
                     traced ? otel : null);
             Connection c = db.connect()) {
            long start = System.nanoTime();
            relay.start();
            Await.until("poller drain of " + backlog + " rows" + (traced ? " (traced)" : ""),
                    () -> Relays.tableEmpty(c, BacklogDrain.SCHEMA), BacklogDrain.drainTimeout(backlog), 5,
                    () -> relay.health().live() ? null : "relay down: " + relay.health().detail());
            seconds = BacklogDrain.secondsSince(start);
            otel.getSdkTracerProvider().forceFlush().join(30, java.util.concurrent.TimeUnit.SECONDS);
        }
        if (Relays.published(registry) < backlog) {
            throw new IllegalStateException("the poller emptied the table but Kafka acknowledged only "
                    + Relays.published(registry) + " of " + backlog + " events");
        }
        long spans = exported.spans.sum();
        if (traced ? spans < backlog : spans != 0) {
            throw new IllegalStateException((traced ? "traced" : "untraced") + " drain of " + backlog + " events exported "
                    + spans + " spans; expected " + (traced ? "one per event" : "none"));
        }
        return backlog / seconds;
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
