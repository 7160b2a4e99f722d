package dev.outboxkit.writer.internal;

import dev.outboxkit.core.Identifiers;
import dev.outboxkit.core.LogicalMessages;
import dev.outboxkit.core.OutboxTables;
import dev.outboxkit.writer.WriteMode;
import dev.outboxkit.writer.spi.RoundTrip;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Types;
import java.util.Base64;
import java.util.List;

/**
 * Not API: public for {@code dev.outboxkit.writer.OutboxWriter}.
 *
 * <p>The SQL each write mode sends: one statement per event (one WAL record, one LSN each), never a
 * multi-row statement.
 */
public final class EventStatements {

    private final WriteMode mode;
    private final boolean logicalMessage;
    private final String insert;
    /** Binary events: the JSON statement stays as it was, so a writer of JSON events also runs on a version-9 schema. */
    private final String insertBinary;
    private final String delete;
    private final String notify;

    /**
     * @param notifyChannel channel to {@code pg_notify} after the events, or null for none
     */
    public EventStatements(String schema, WriteMode mode, String notifyChannel) {
        this.mode = mode;
        this.logicalMessage = mode == WriteMode.LOGICAL_MESSAGE;
        String table = Identifiers.qualified(schema, OutboxTables.OUTBOX_EVENT);
        this.insert = switch (mode) {
            case KEEP, INSERT_AND_DELETE -> "INSERT INTO " + table
                    + " (id, aggregate_type, aggregate_id, event_type, topic, payload, headers)"
                    + " VALUES (?, ?, ?, ?, ?, ?::jsonb, ?::jsonb)";
            // Built by PostgreSQL so that payload and headers are the jsonb's own rendering.
            case LOGICAL_MESSAGE -> emitMessage(LogicalMessages.FORMAT_VERSION,
                    ", '" + LogicalMessages.PAYLOAD + "', (?::jsonb)::text"
                    + ", '" + LogicalMessages.HEADERS + "', (?::jsonb)::text");
        };
        this.insertBinary = switch (mode) {
            case KEEP, INSERT_AND_DELETE -> "INSERT INTO " + table
                    + " (id, aggregate_type, aggregate_id, event_type, topic, payload_bytes, headers, content_type)"
                    + " VALUES (?, ?, ?, ?, ?, ?, ?::jsonb, ?)";
            case LOGICAL_MESSAGE -> emitMessage(LogicalMessages.BINARY_FORMAT_VERSION,
                    ", '" + LogicalMessages.PAYLOAD_BASE64 + "', ?::text"
                    + ", '" + LogicalMessages.HEADERS + "', (?::jsonb)::text"
                    + ", '" + LogicalMessages.CONTENT_TYPE + "', ?::text");
        };
        this.delete = mode == WriteMode.INSERT_AND_DELETE
                ? "DELETE FROM " + table + " WHERE id = ANY (?::uuid[])"
                : null;
        this.notify = notifyChannel == null ? null
                : "SELECT pg_catalog.pg_notify('" + Identifiers.requireValid("notifyChannel", notifyChannel) + "', '')";
    }

    /** The emit-message statement of one format: the contract columns, then {@code payloadMembers}, then created_at. */
    private static String emitMessage(int version, String payloadMembers) {
        return "SELECT pg_catalog.pg_logical_emit_message(true, '" + LogicalMessages.PREFIX + "',"
                + " pg_catalog.jsonb_build_object("
                + "'" + LogicalMessages.VERSION + "', " + version
                + ", '" + LogicalMessages.ID + "', ?::uuid"
                + ", '" + LogicalMessages.AGGREGATE_TYPE + "', ?::text"
                + ", '" + LogicalMessages.AGGREGATE_ID + "', ?::text"
                + ", '" + LogicalMessages.EVENT_TYPE + "', ?::text"
                + ", '" + LogicalMessages.TOPIC + "', ?::text"
                + payloadMembers
                + ", '" + LogicalMessages.CREATED_AT + "', pg_catalog.to_char(pg_catalog.now() AT TIME ZONE 'UTC',"
                + " 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'))::text)";
    }

    public WriteMode mode() {
        return mode;
    }

    /** Adds the statements that write {@code events} to {@code pipeline}. */
    public void addTo(RoundTrip pipeline, List<PreparedEvent> events) {
        if (events.isEmpty()) {
            return;
        }
        for (PreparedEvent e : events) {
            pipeline.add(e.isBinary() ? insertBinary : insert, (ps, i) -> bind(ps, i, e));
        }
        if (delete != null) {
            StringBuilder ids = new StringBuilder("{");
            for (PreparedEvent e : events) {
                if (ids.length() > 1) {
                    ids.append(',');
                }
                ids.append(e.id());
            }
            String array = ids.append('}').toString();
            pipeline.add(delete, (ps, i) -> {
                ps.setString(i, array);
                return i + 1;
            });
        }
        if (notify != null) {
            pipeline.add(notify, (ps, i) -> i);
        }
    }

    private int bind(PreparedStatement ps, int i, PreparedEvent e) throws SQLException {
        ps.setObject(i, e.id());
        ps.setString(i + 1, e.aggregateType());
        ps.setString(i + 2, e.aggregateId());
        ps.setString(i + 3, e.eventType());
        if (e.topic() == null) {
            ps.setNull(i + 4, Types.VARCHAR);
        } else {
            ps.setString(i + 4, e.topic());
        }
        if (!e.isBinary()) {
            ps.setString(i + 5, e.payload());
            ps.setString(i + 6, e.headers());
            return i + 7;
        }
        if (logicalMessage) {
            ps.setString(i + 5, Base64.getEncoder().encodeToString(e.payloadBytes()));
        } else {
            ps.setBytes(i + 5, e.payloadBytes());
        }
        ps.setString(i + 6, e.headers());
        ps.setString(i + 7, e.contentType());
        return i + 8;
    }
}
