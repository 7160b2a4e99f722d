package dev.outboxkit.ops;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;

/** Test helpers writing outbox rows (the trigger fills the ledger) and consumer effects directly. */
public final class Anomalies {

    private Anomalies() {
    }

    /** Inserts {@code n} outbox events created at {@code createdAt}, then deletes them (a relay in delete mode). */
    public static List<UUID> publish(DataSource producer, int n, Instant createdAt) throws SQLException {
        List<UUID> ids = new ArrayList<>();
        try (Connection c = producer.getConnection(); PreparedStatement ps = c.prepareStatement(
                "INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload, created_at)"
                        + " SELECT id, 'order', 'o-' || ord, 'OrderPlaced', jsonb_build_object('n', ord), ?"
                        + " FROM unnest(?::uuid[]) WITH ORDINALITY AS u(id, ord)")) {
            for (int i = 0; i < n; i++) {
                ids.add(UUID.randomUUID());
            }
            ps.setTimestamp(1, Timestamp.from(createdAt));
            ps.setArray(2, c.createArrayOf("uuid", ids.toArray()));
            ps.executeUpdate();
            try (PreparedStatement del = c.prepareStatement("DELETE FROM outbox_event WHERE id = ANY (?)")) {
                del.setArray(1, c.createArrayOf("uuid", ids.toArray()));
                del.executeUpdate();
            }
        }
        return ids;
    }

    public static void apply(DataSource consumer, String group, List<UUID> ids, Instant processedAt) throws SQLException {
        try (Connection c = consumer.getConnection(); PreparedStatement ps = c.prepareStatement(
                "INSERT INTO processed_event (consumer_group, event_id, processed_at) SELECT ?, id, ? FROM unnest(?::uuid[]) AS u(id)")) {
            ps.setString(1, group);
            ps.setTimestamp(2, Timestamp.from(processedAt));
            ps.setArray(3, c.createArrayOf("uuid", ids.toArray()));
            ps.executeUpdate();
        }
    }
}
