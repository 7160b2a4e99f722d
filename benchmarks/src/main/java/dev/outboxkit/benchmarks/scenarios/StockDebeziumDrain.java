package dev.outboxkit.benchmarks.scenarios;

import dev.outboxkit.benchmarks.BenchContext;
import dev.outboxkit.benchmarks.Measurements;
import dev.outboxkit.benchmarks.Metric;
import dev.outboxkit.benchmarks.MetricCatalog;
import dev.outboxkit.benchmarks.Scenario;
import dev.outboxkit.benchmarks.load.Await;
import dev.outboxkit.benchmarks.load.Backlog;
import dev.outboxkit.benchmarks.load.KafkaTopics;
import dev.outboxkit.benchmarks.load.Relays;
import dev.outboxkit.benchmarks.stock.StockDebeziumPipeline;
import dev.outboxkit.testkit.TestDatabase;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.util.List;

/**
 * {@code stock_debezium_eps}: the stock Debezium outbox pipeline ({@link StockDebeziumPipeline}:
 * Debezium Embedded + EventRouter SMT + JSON converter + send-and-wait) measured like
 * {@link CdcDrain}: it streams from its own slot and publication, created on the empty table; the
 * backlog is written with one COPY; the clock runs from that commit until every event is acknowledged.
 */
public final class StockDebeziumDrain implements Scenario {

    static final String PUBLICATION = "stock_pub";

    @Override
    public String name() {
        return "stock_debezium_drain";
    }

    @Override
    public List<Metric> metrics() {
        return List.of(MetricCatalog.STOCK_DEBEZIUM_EPS);
    }

    @Override
    public boolean payloadSensitive() {
        return true;
    }

    @Override
    public Measurements run(BenchContext context) throws Exception {
        TestDatabase db = context.newDatabase();
        int backlog = context.sizes().backlogEvents();
        String prefix = context.uniqueTopic("stock");
        String topic = prefix + ".account";
        KafkaTopics.createReady(context.kafka(), topic, PollerDrain.PARTITIONS);
        String slot = Relays.uniqueSlot("bench_stock");
        try (Connection c = db.connect(); Statement s = c.createStatement()) {
            s.execute("CREATE PUBLICATION " + PUBLICATION + " FOR TABLE public.outbox_event");
            try (PreparedStatement ps = c.prepareStatement("SELECT pg_create_logical_replication_slot(?, 'pgoutput')")) {
                ps.setString(1, slot);
                ps.execute();
            }
        }
        URI url = URI.create(db.jdbcUrl().substring("jdbc:".length()));
        Path offsets = Files.createTempFile(context.workDir(), "stock-offsets", ".dat");
        double seconds;
        try (StockDebeziumPipeline stock = StockDebeziumPipeline.start(new StockDebeziumPipeline.Settings(
                url.getHost(), url.getPort(), url.getPath().substring(1), db.user(), db.password(),
                context.kafka().bootstrapServers(), slot, PUBLICATION, prefix + ".${routedByValue}", offsets))) {
            Backlog.copy(db, PgDrainCeiling.SCHEMA, backlog, context.payloadBytes());
            long committed = System.nanoTime();
            Await.until("stock Debezium streaming " + backlog + " rows", () -> stock.acked() >= backlog,
                    PollerDrain.drainTimeout(backlog).multipliedBy(4), 5, stock::failure);
            seconds = (System.nanoTime() - committed) / 1e9;
        } finally {
            Relays.dropSlot(db, slot);
        }
        return new Measurements().put(MetricCatalog.STOCK_DEBEZIUM_EPS.key(), backlog / seconds);
    }
}
