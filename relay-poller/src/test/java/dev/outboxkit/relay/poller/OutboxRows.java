package dev.outboxkit.relay.poller;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;

/** Test producer: writes outbox rows with plain SQL, the way any program may. */
final class OutboxRows {

    static final String INSERT = "INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload, headers, topic) "
            + "VALUES (?, ?, ?, ?, ?::jsonb, ?::jsonb, ?)";

    private OutboxRows() {
    }

    /** Inserts one row (in the caller's transaction) and returns its event id. */
    static UUID insert(Connection c, String aggregateType, String aggregateId, String eventType, String payload,
                       String headersJson, String topic) throws SQLException {
        UUID id = UUID.randomUUID();
        try (PreparedStatement ps = c.prepareStatement(INSERT)) {
            ps.setObject(1, id);
            ps.setString(2, aggregateType);
            ps.setString(3, aggregateId);
            ps.setString(4, eventType);
            ps.setString(5, payload);
            ps.setString(6, headersJson == null ? "{}" : headersJson);
            ps.setString(7, topic);
            ps.executeUpdate();
        }
        return id;
    }

    static UUID insert(Connection c, String aggregateType, String aggregateId, String payload) throws SQLException {
        return insert(c, aggregateType, aggregateId, "happened", payload, null, null);
    }

    static long count(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
