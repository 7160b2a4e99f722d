package dev.outboxkit.benchmarks.scenarios;

import dev.outboxkit.benchmarks.BenchContext;
import dev.outboxkit.benchmarks.MetricCatalog;
import dev.outboxkit.benchmarks.load.Await;
import dev.outboxkit.benchmarks.load.Backlog;
import dev.outboxkit.benchmarks.load.Relays;
import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.relay.cdc.CdcRelay;
import dev.outboxkit.testkit.TestDatabase;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;

/**
 * {@code cdc_drain_eps}: the CDC relay ({@link CdcRelay}, default settings) streaming a backlog
 * from the WAL into Kafka. The relay starts on an empty table and becomes ready; then the backlog
 * is written with one COPY (one transaction, so logical decoding hands it over at its commit); the
 * clock runs from that commit until the relay's {@code outbox.relay.published} counter reaches
 * the backlog. {@link StockDebeziumDrain} measures the stock pipeline exactly the same way
 * ({@code cdc_vs_stock_debezium}).
 */
public final class CdcDrain extends BacklogDrain {

    public CdcDrain() {
        super("cdc_drain", MetricCatalog.CDC_DRAIN_EPS, "cdc", "the CDC relay's drain");
    }

    @Override
    void drain(BenchContext context, TestDatabase db, int backlog, DrainClock clock) throws Exception {
        String topic = context.uniqueTopic("cdc-drain");
        context.kafka().createTopic(topic, PARTITIONS);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        CdcRelay relay = Relays.cdc(db, context.kafka().bootstrapServers(), TopicRoute.of(topic), registry);
        try {
            relay.start();
            Await.until("CDC relay ready", () -> relay.health().ready(), Duration.ofMinutes(2), 20,
                    () -> failure(relay));
            Backlog.copy(db, SCHEMA, backlog, context.payloadBytes());
            clock.start();
            Await.until("CDC relay streaming " + backlog + " rows", () -> Relays.published(registry) >= backlog,
                    drainTimeout(backlog), 5, () -> failure(relay));
            clock.stop();
        } finally {
            relay.close();
            db.dropReplicationSlot(relay.slotName());
        }
    }

    static String failure(CdcRelay relay) {
        return relay.failure() == null ? null : "relay failed: " + relay.failure();
    }
}
