package dev.outboxkit.spring.test;

import dev.outboxkit.core.OutboxEvent;
import dev.outboxkit.core.OutboxTables;
import dev.outboxkit.spring.spi.WriteObserver;
import dev.outboxkit.writer.OutboxMessage;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Records each write into {@link OutboxEvents}: reads the rows back on the writing transaction's
 * connection (no relay can see them yet, so none has deleted them) and drops them again when that
 * transaction rolls back.
 */
final class Recorder implements WriteObserver {

    private final OutboxEvents events;
    private final String select;

    Recorder(OutboxEvents events, OutboxTables tables) {
        this.events = events;
        this.select = "SELECT id, aggregate_type, aggregate_id, event_type, topic, payload::text, payload_bytes, content_type, "
                + "headers::text, created_at FROM " + tables.outboxEvent() + " WHERE id = ANY(?) ORDER BY seq";
    }

    @Override
    public void written(Connection connection, List<OutboxMessage> messages, List<UUID> ids) throws SQLException {
        List<OutboxEvent> rows = read(connection, ids);
        if (rows.size() != ids.size()) {
            throw new IllegalStateException("outboxkit test support read " + rows.size() + " of the " + ids.size()
                    + " events just written back from outbox_event: it records rows, which the writer keeps only in mode keep");
        }
        events.recorded(rows);
        if (TransactionSynchronizationManager.isSynchronizationActive()) {
            TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
                @Override
                public void afterCompletion(int status) {
                    if (status != STATUS_COMMITTED) {
                        events.rolledBack(rows);
                    }
                }
            });
        }
    }

    private List<OutboxEvent> read(Connection c, List<UUID> ids) throws SQLException {
        List<OutboxEvent> rows = new ArrayList<>(ids.size());
        try (PreparedStatement ps = c.prepareStatement(select)) {
            ps.setArray(1, c.createArrayOf("uuid", ids.toArray()));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    rows.add(OutboxEvent.fromRow(rs.getObject(1, UUID.class), rs.getString(2), rs.getString(3), rs.getString(4),
                            rs.getString(5), rs.getString(6), rs.getBytes(7), rs.getString(8), rs.getString(9),
                            rs.getObject(10, OffsetDateTime.class).toInstant()));
                }
            }
        }
        return rows;
    }
}
