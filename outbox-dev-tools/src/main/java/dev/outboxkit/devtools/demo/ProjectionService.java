package dev.outboxkit.devtools.demo;

import com.fasterxml.jackson.databind.JsonNode;
import dev.outboxkit.consumer.DedupeConsumer;
import dev.outboxkit.consumer.InboxEvent;
import dev.outboxkit.testkit.History;
import io.micrometer.core.instrument.MeterRegistry;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.HdrHistogram.Recorder;

/**
 * The demo's downstream service: keeps a balance projection from the ledger's events, through
 * consumer-dedupe, in its own database. Each account event carries the account's version; an
 * event applied out of order would not match {@code version - 1} and is counted.
 */
final class ProjectionService implements AutoCloseable {

    static final String GROUP = "balance-projection";

    private final DedupeConsumer consumer;
    private final History history;
    private final Recorder latency;
    private final AtomicLong outOfOrder = new AtomicLong();
    private final AtomicLong applied = new AtomicLong();
    private volatile Instant lastApplied;

    ProjectionService(DataSource dataSource, String bootstrapServers, String topic, History history, Recorder latency,
                      MeterRegistry registry) {
        this.history = history;
        this.latency = latency;
        this.consumer = DedupeConsumer.builder()
                .bootstrapServers(bootstrapServers)
                .group(GROUP)
                .topics(List.of(topic))
                .dataSource(dataSource)
                .batchHandler(this::apply)
                .meterRegistry(registry)
                .build();
    }

    static void createSchema(DataSource ds, DataSource ledger) throws SQLException {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE account_balance (id text PRIMARY KEY, balance bigint NOT NULL, version bigint NOT NULL)");
        }
        try (Connection from = ledger.getConnection(); Connection to = ds.getConnection();
             Statement read = from.createStatement();
             var rs = read.executeQuery("SELECT id, balance, version FROM account ORDER BY id");
             PreparedStatement insert = to.prepareStatement("INSERT INTO account_balance VALUES (?, ?, ?)")) {
            while (rs.next()) {
                insert.setString(1, rs.getString(1));
                insert.setLong(2, rs.getLong(2));
                insert.setLong(3, rs.getLong(3));
                insert.addBatch();
            }
            insert.executeBatch();
        }
    }

    void start() {
        consumer.start();
    }

    /** One batch of new (never applied) events, in partition order, in the inbox's transaction. */
    private void apply(Connection c, List<InboxEvent> events) throws SQLException {
        int[] results;
        try (PreparedStatement update = c.prepareStatement(
                "UPDATE account_balance SET balance = balance + ?, version = ? WHERE id = ? AND version = ? - 1")) {
            for (InboxEvent e : events) {
                JsonNode p = e.payloadJson();
                long version = p.get("version").asLong();
                update.setLong(1, p.get("delta").asLong());
                update.setLong(2, version);
                update.setString(3, e.aggregateId());
                update.setLong(4, version);
                update.addBatch();
            }
            results = update.executeBatch();
        }
        // Applied exactly as they will commit; recorded after the handler returns (the transaction may still roll back,
        // in which case the batch is redelivered and recorded again, which the checker would flag as a duplicate effect).
        Instant now = Instant.now();
        for (int i = 0; i < events.size(); i++) {
            InboxEvent e = events.get(i);
            if (results[i] == 0) {
                outOfOrder.incrementAndGet();
            }
            history.applied(e.id(), e.aggregateId());
            if (e.createdAt() != null) {
                latency.recordValue(Math.max(0, java.time.Duration.between(e.createdAt(), now).toNanos() / 1000));
            }
        }
        applied.addAndGet(events.size());
        lastApplied = now;
    }

    long applied() {
        return applied.get();
    }

    long outOfOrder() {
        return outOfOrder.get();
    }

    Instant lastApplied() {
        return lastApplied;
    }

    @Override
    public void close() {
        consumer.close();
    }
}
