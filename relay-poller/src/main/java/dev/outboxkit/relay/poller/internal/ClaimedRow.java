package dev.outboxkit.relay.poller.internal;

import dev.outboxkit.core.InvalidEventException;
import dev.outboxkit.core.OutboxEvent;
import dev.outboxkit.relay.KafkaRecords;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.UUID;

/**
 * One claimed outbox row: what the claim statement returned, plus the event built from it (or
 * why it could not be built). Enough to publish it, park it or put it back unchanged.
 */
final class ClaimedRow {

    final long seq;
    final int partition;
    final int attempts;
    final UUID id;
    final String aggregateType;
    final String aggregateId;
    final String eventType;
    final String topic;
    /** JSON text, or null for a binary row. */
    final String payload;
    /** A binary row's bytes and media type, or null for a JSON row. */
    final byte[] payloadBytes;
    final String contentType;
    final String headersJson;
    final Instant createdAt;
    /** Null when the row could not be turned into an event (see {@link #invalid}). */
    final OutboxEvent event;
    final InvalidEventException invalid;

    private ClaimedRow(ResultSet rs) throws SQLException {
        seq = rs.getLong(1);
        partition = rs.getInt(2);
        id = rs.getObject(3, UUID.class);
        aggregateType = rs.getString(4);
        aggregateId = rs.getString(5);
        eventType = rs.getString(6);
        topic = rs.getString(7);
        payload = rs.getString(8);
        headersJson = rs.getString(9);
        createdAt = rs.getObject(10, OffsetDateTime.class).toInstant();
        attempts = rs.getInt(11);
        payloadBytes = rs.getBytes(12);
        contentType = rs.getString(13);
        OutboxEvent e = null;
        InvalidEventException problem = null;
        try {
            e = OutboxEvent.fromRow(id, aggregateType, aggregateId, eventType, topic, payload, payloadBytes, contentType,
                    headersJson, createdAt);
        } catch (InvalidEventException ex) {
            problem = ex;
        }
        event = e;
        invalid = problem;
    }

    static ClaimedRow read(ResultSet rs) throws SQLException {
        return new ClaimedRow(rs);
    }

    /** Aggregate identity for per-aggregate bookkeeping inside a batch. */
    String aggregateKey() {
        return aggregateType + '\u0000' + aggregateId;
    }

    /** created_at in the form PostgreSQL reads back exactly (microseconds, UTC). */
    String createdAtText() {
        return KafkaRecords.formatCreatedAt(createdAt);
    }

    long createdAtMicros() {
        return createdAt.getEpochSecond() * 1_000_000L + createdAt.getNano() / 1_000;
    }
}
