package dev.outboxkit.benchmarks.scenarios;

import dev.outboxkit.benchmarks.BenchContext;
import dev.outboxkit.benchmarks.MetricCatalog;
import dev.outboxkit.benchmarks.load.Await;
import dev.outboxkit.benchmarks.load.Backlog;
import dev.outboxkit.benchmarks.load.Relays;
import dev.outboxkit.benchmarks.stock.StockDebeziumPipeline;
import dev.outboxkit.testkit.TestDatabase;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;

/**
 * {@code stock_debezium_eps}: the stock Debezium outbox pipeline ({@link StockDebeziumPipeline}:
 * Debezium Embedded + EventRouter SMT + JSON converter + send-and-wait) measured like
 * {@link CdcDrain}: it streams from its own slot and publication, created on the empty table; the
 * backlog is written with one COPY; the clock runs from that commit until every event is acknowledged.
 */
public final class StockDebeziumDrain extends BacklogDrain {

    static final String PUBLICATION = "stock_pub";

    public StockDebeziumDrain() {
        super("stock_debezium_drain", MetricCatalog.STOCK_DEBEZIUM_EPS, "stock_debezium", "the stock Debezium pipeline's drain");
    }

    @Override
    void drain(BenchContext context, TestDatabase db, int backlog, DrainClock clock) throws Exception {
        String prefix = context.uniqueTopic("stock");
        String topic = prefix + ".account";
        context.kafka().createTopic(topic, PARTITIONS);
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
        try (StockDebeziumPipeline stock = StockDebeziumPipeline.start(new StockDebeziumPipeline.Settings(
                url.getHost(), url.getPort(), url.getPath().substring(1), db.user(), db.password(),
                context.kafka().bootstrapServers(), slot, PUBLICATION, prefix + ".${routedByValue}", offsets))) {
            Backlog.copy(db, SCHEMA, backlog, context.payloadBytes());
            clock.start();
            Await.until("stock Debezium streaming " + backlog + " rows", () -> stock.acked() >= backlog,
                    drainTimeout(backlog).multipliedBy(4), 5, stock::failure);
            clock.stop();
        } finally {
            db.dropReplicationSlot(slot);
        }
    }
}
