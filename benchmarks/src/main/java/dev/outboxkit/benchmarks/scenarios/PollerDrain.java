package dev.outboxkit.benchmarks.scenarios;

import dev.outboxkit.benchmarks.BenchContext;
import dev.outboxkit.benchmarks.MetricCatalog;
import dev.outboxkit.benchmarks.load.Await;
import dev.outboxkit.benchmarks.load.Backlog;
import dev.outboxkit.benchmarks.load.Relays;
import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.relay.poller.PollingRelay;
import dev.outboxkit.testkit.TestDatabase;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.opentelemetry.api.OpenTelemetry;
import java.sql.Connection;
import java.util.function.UnaryOperator;

/**
 * {@code poller_drain_eps}: the polling relay ({@link PollingRelay}, default settings: two claim loops;
 * {@link PollerLoops} compares 1, 2 and 4) draining the same pre-filled backlog as {@link PgDrainCeiling} into Kafka. The clock runs from {@code start()}
 * until the table is empty — a row leaves the table only in the commit after Kafka acknowledged it —
 * and the relay's {@code outbox.relay.published} counter must then account for every row.
 * The runner divides it by {@code pg_drain_ceiling_eps} of the same repeat ({@code poller_vs_pg_ceiling}).
 */
public final class PollerDrain extends BacklogDrain {

    public PollerDrain() {
        super("poller_drain", MetricCatalog.POLLER_DRAIN_EPS, "poller", "the polling relay's drain");
    }

    @Override
    void drain(BenchContext context, TestDatabase db, int backlog, DrainClock clock) throws Exception {
        drain(context, db, backlog, "poller-drain", UnaryOperator.identity(), clock);
    }

    /**
     * Fills {@code db} with {@code backlog} rows, drains them through a polling relay (tracing through
     * {@code openTelemetry} unless null), {@code clock} running from {@code start()} to the empty table.
     */
    static void drain(BenchContext context, TestDatabase db, int backlog, String topicPrefix, OpenTelemetry openTelemetry,
                      DrainClock clock) throws Exception {
        drain(context, db, backlog, topicPrefix, b -> b.tracing(openTelemetry), clock);
    }

    /** The same with the relay's builder set up by {@code settings} (defaults otherwise). */
    static void drain(BenchContext context, TestDatabase db, int backlog, String topicPrefix,
                      UnaryOperator<PollingRelay.Builder> settings, DrainClock clock) throws Exception {
        String topic = context.uniqueTopic(topicPrefix);
        context.kafka().createTopic(topic, PARTITIONS);
        Backlog.fill(db, SCHEMA, backlog, context.payloadBytes());
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (PollingRelay relay = settings.apply(Relays.pollerBuilder(db, context.kafka().bootstrapServers(),
                TopicRoute.of(topic), registry)).build();
             Connection c = db.connect()) {
            clock.start();
            relay.start();
            Await.until("poller drain of " + backlog + " rows", () -> Relays.tableEmpty(c, SCHEMA),
                    drainTimeout(backlog), 5, () -> relay.health().live() ? null : "relay down: " + relay.health().detail());
            clock.stop();
        }
        double published = Relays.published(registry);
        if (published < backlog) {
            throw new IllegalStateException("the poller emptied the table but Kafka acknowledged only " + published
                    + " of " + backlog + " events");
        }
    }
}
