package dev.outboxkit.runtime;

import dev.outboxkit.core.OutboxTables;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.UUID;

/**
 * Not API: parks events in {@code outbox_dead_letter}, the one statement both relays use. It runs on the
 * caller's connection and inside the caller's transaction (the polling relay's claim, the CDC relay's fenced
 * transaction), so a parked event and the removal of its row commit together or not at all.
 *
 * <p>Parking an id that is parked already (the CDC relay streaming the same change again after a crash, a
 * retried event refused again before its old dead letter was removed) keeps one dead letter: the newest
 * reason, {@code seq} and {@code parked_by}, and the attempts of both added up. The relay's role therefore
 * needs {@code SELECT, INSERT, UPDATE} on the table.
 */
public final class DeadLetterWriter {

    /**
     * One event to park. Missing text columns are stored as {@code unknown} (an event the CDC relay could not
     * even decode is still kept), a missing payload as JSON {@code null}, missing headers as {@code {}}, a
     * missing {@code createdAt} as the time of parking.
     *
     * @param seq          the row's seq in {@code outbox_event}; 0 for an event that never was a row
     * @param attempts     publication attempts this parking stands for (at least 1)
     * @param payloadBytes a binary event's bytes (then {@code payloadJson} is ignored), or null for JSON
     * @param contentType  their media type as the row had it (stored as {@code unknown} when missing)
     */
    public record Letter(UUID id, long seq, String aggregateType, String aggregateId, String eventType, String payloadJson,
                         String headersJson, String topic, Instant createdAt, String errorClass, String errorMessage,
                         int attempts, byte[] payloadBytes, String contentType) {

        public Letter {
            if (id == null) {
                throw new IllegalArgumentException("a dead letter needs an event id");
            }
            if (attempts < 1) {
                throw new IllegalArgumentException("a dead letter stands for at least one attempt, got " + attempts);
            }
        }

        /** A letter whose reason is {@code failure}'s deciding exception. */
        public static Letter of(UUID id, long seq, String aggregateType, String aggregateId, String eventType,
                                String payloadJson, byte[] payloadBytes, String contentType, String headersJson,
                                String topic, Instant createdAt, PublishFailures.Classified failure, int attempts) {
            return new Letter(id, seq, aggregateType, aggregateId, eventType, payloadJson, headersJson, topic, createdAt,
                    failure.errorClass(), failure.message(), attempts, payloadBytes, contentType);
        }
    }

    private final String sql;
    /** Binary letters only: JSON letters keep the statement that also runs on a version-9 schema. */
    private final String binarySql;

    /** @param schema the outboxkit schema (validated and quoted here) */
    public DeadLetterWriter(String schema) {
        String table = OutboxTables.in(schema).deadLetter();
        sql = statement(table, "payload", "?::jsonb");
        binarySql = statement(table, "payload_bytes, content_type", "?, ?");
    }

    private static String statement(String table, String payloadColumns, String payloadValues) {
        return "INSERT INTO " + table + " AS d (id, seq, aggregate_type, aggregate_id, event_type, " + payloadColumns
                + ", headers, topic, created_at, error_class, error_message, attempts, parked_by)"
                + " VALUES (?, ?, ?, ?, ?, " + payloadValues + ", ?::jsonb, ?, coalesce(?, statement_timestamp()), ?, ?, ?, ?)"
                + " ON CONFLICT (id) DO UPDATE SET seq = EXCLUDED.seq, error_class = EXCLUDED.error_class,"
                + " error_message = EXCLUDED.error_message, attempts = d.attempts + EXCLUDED.attempts,"
                + " parked_at = statement_timestamp(), parked_by = EXCLUDED.parked_by";
    }

    /** Parks {@code letters} on {@code c}, in its current transaction (one batch, one round trip). */
    public void park(Connection c, List<Letter> letters, String parkedBy) throws SQLException {
        park(c, letters.stream().filter(l -> l.payloadBytes() == null).toList(), parkedBy, false);
        park(c, letters.stream().filter(l -> l.payloadBytes() != null).toList(), parkedBy, true);
    }

    private void park(Connection c, List<Letter> letters, String parkedBy, boolean binary) throws SQLException {
        if (letters.isEmpty()) {
            return;
        }
        try (PreparedStatement ps = c.prepareStatement(binary ? binarySql : sql)) {
            for (Letter l : letters) {
                int i = 1;
                ps.setObject(i++, l.id());
                ps.setLong(i++, l.seq());
                ps.setString(i++, orUnknown(l.aggregateType()));
                ps.setString(i++, orUnknown(l.aggregateId()));
                ps.setString(i++, orUnknown(l.eventType()));
                if (binary) {
                    ps.setBytes(i++, l.payloadBytes());
                    ps.setString(i++, orUnknown(l.contentType()));
                } else {
                    ps.setString(i++, l.payloadJson() == null ? "null" : l.payloadJson());
                }
                ps.setString(i++, l.headersJson() == null ? "{}" : l.headersJson());
                ps.setString(i++, l.topic());
                if (l.createdAt() == null) {
                    ps.setNull(i++, Types.TIMESTAMP_WITH_TIMEZONE);
                } else {
                    ps.setObject(i++, l.createdAt().atOffset(ZoneOffset.UTC));
                }
                ps.setString(i++, orUnknown(l.errorClass()));
                ps.setString(i++, l.errorMessage() == null ? "" : l.errorMessage());
                ps.setInt(i++, l.attempts());
                ps.setString(i, parkedBy);
                ps.addBatch();
            }
            ps.executeBatch();
        }
    }

    private static String orUnknown(String s) {
        return s == null || s.isEmpty() ? "unknown" : s;
    }
}
