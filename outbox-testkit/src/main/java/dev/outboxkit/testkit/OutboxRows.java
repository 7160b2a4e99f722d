package dev.outboxkit.testkit;

import dev.outboxkit.core.EventIds;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.Collection;
import java.util.UUID;

/** Outbox rows written with plain SQL, the way any program may (the tests' producer when no writer is wanted). */
public final class OutboxRows {

    private static final String INSERT = "INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload, "
            + "headers, topic) VALUES (?, ?, ?, ?, ?::jsonb, ?::jsonb, ?)";

    private OutboxRows() {
    }

    /** One row of outbox_event as a test writes it; {@code topic} may be null (the route decides). */
    public record Row(UUID id, String aggregateType, String aggregateId, String eventType, String topic, String payload,
                      String headers) {

        /** Event {@code n} of {@code aggregateId}: an {@code OrderPlaced} of aggregate type {@code order}. */
        public static Row of(String topic, String aggregateId, int n) {
            return new Row(EventIds.next(), "order", aggregateId, "OrderPlaced", topic,
                    "{\"n\": " + n + ", \"aggregate\": \"" + aggregateId + "\"}", "{}");
        }
    }

    /** Inserts {@code rows} in one JDBC batch, in the caller's transaction. */
    public static void insert(Connection c, Collection<Row> rows) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(INSERT)) {
            for (Row r : rows) {
                bind(ps, r.id(), r.aggregateType(), r.aggregateId(), r.eventType(), r.payload(), r.headers(), r.topic());
                ps.addBatch();
            }
            ps.executeBatch();
        }
    }

    /** Inserts {@code rows} in a transaction of their own, committed. */
    public static void insertCommitted(TestDatabase db, Collection<Row> rows) throws SQLException {
        try (Connection c = db.connect()) {
            c.setAutoCommit(false);
            insert(c, rows);
            c.commit();
        }
    }

    /** Inserts one row (in the caller's transaction) with a random id and returns the id. */
    public static UUID insert(Connection c, String aggregateType, String aggregateId, String eventType, String payload,
                              String headersJson, String topic) throws SQLException {
        UUID id = UUID.randomUUID();
        try (PreparedStatement ps = c.prepareStatement(INSERT)) {
            bind(ps, id, aggregateType, aggregateId, eventType, payload, headersJson == null ? "{}" : headersJson, topic);
            ps.executeUpdate();
        }
        return id;
    }

    /** {@link #insert(Connection, String, String, String, String, String, String)} of event type {@code happened}. */
    public static UUID insert(Connection c, String aggregateType, String aggregateId, String payload) throws SQLException {
        return insert(c, aggregateType, aggregateId, "happened", payload, null, null);
    }

    private static void bind(PreparedStatement ps, UUID id, String aggregateType, String aggregateId, String eventType,
                             String payload, String headers, String topic) throws SQLException {
        ps.setObject(1, id);
        ps.setString(2, aggregateType);
        ps.setString(3, aggregateId);
        ps.setString(4, eventType);
        ps.setString(5, payload);
        ps.setString(6, headers);
        ps.setString(7, topic);
    }
}
