package dev.outboxkit.benchmarks.scenarios;

import dev.outboxkit.benchmarks.BenchContext;
import dev.outboxkit.benchmarks.MetricCatalog;
import dev.outboxkit.benchmarks.load.Backlog;
import dev.outboxkit.core.Identifiers;
import dev.outboxkit.core.OutboxEvent;
import dev.outboxkit.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * {@code pg_drain_ceiling_eps}: how fast PostgreSQL alone gives up a backlog, the bar every
 * polling relay is compared with. One loop on one connection: claim the oldest
 * {@value #BATCH} rows with {@code FOR UPDATE SKIP LOCKED}, delete them returning the contract
 * columns, read each row into an {@link OutboxEvent}, commit; until the table is empty. No Kafka.
 */
public final class PgDrainCeiling extends BacklogDrain {

    /** Rows per claim, as in the naive poller that FACTS.md measured. */
    public static final int BATCH = 1000;

    public PgDrainCeiling() {
        super("pg_drain_ceiling", MetricCatalog.PG_DRAIN_CEILING_EPS, "pg_ceiling", "the PostgreSQL claim/delete ceiling's drain");
    }

    @Override
    void drain(BenchContext context, TestDatabase db, int backlog, DrainClock clock) throws Exception {
        Backlog.fill(db, SCHEMA, backlog, context.payloadBytes());
        long drained = 0;
        clock.start();
        try (Connection c = db.connect(); PreparedStatement claim = c.prepareStatement(claimSql(SCHEMA))) {
            c.setAutoCommit(false);
            claim.setInt(1, BATCH);
            List<OutboxEvent> batch = new ArrayList<>(BATCH);
            do {
                batch.clear();
                readClaim(claim, batch);
                c.commit();
                drained += batch.size();
            } while (!batch.isEmpty());
        }
        clock.stop();
        if (drained != backlog) {
            throw new IllegalStateException("drained " + drained + " rows of a backlog of " + backlog);
        }
    }

    /**
     * The claim-and-delete statement: the batch size is its one parameter. Its shape is the polling relay's
     * ({@code seq = ANY (ARRAY(candidates))}: the candidates computed once, each row then found by its key), so the
     * ceiling is what PostgreSQL gives the best statement we know, not the textbook {@code seq IN (candidates)}, which
     * the relay outruns.
     */
    static String claimSql(String schema) {
        String table = Identifiers.qualified(schema, "outbox_event");
        return "DELETE FROM " + table + " WHERE seq = ANY (ARRAY(SELECT seq FROM " + table
                + " ORDER BY seq FOR UPDATE SKIP LOCKED LIMIT ?))"
                + " RETURNING seq, id, aggregate_type, aggregate_id, event_type, topic, payload::text, headers::text, created_at";
    }

    private static void readClaim(PreparedStatement claim, List<OutboxEvent> into) throws SQLException {
        try (ResultSet rs = claim.executeQuery()) {
            while (rs.next()) {
                into.add(OutboxEvent.fromRow(rs.getObject(2, UUID.class), rs.getString(3), rs.getString(4),
                        rs.getString(5), rs.getString(6), rs.getString(7), rs.getString(8),
                        rs.getObject(9, OffsetDateTime.class).toInstant()));
            }
        }
    }
}
