package dev.outboxkit.relay.cdc.internal;

import dev.outboxkit.core.InvalidEventException;
import dev.outboxkit.core.OutboxEvent;
import dev.outboxkit.runtime.IsoInstants;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.UUID;

/**
 * The contract columns of one outbox event as text, exactly as PostgreSQL rendered them (from the WAL
 * or from a SELECT), before they become an {@link OutboxEvent}. Kept as they are so that an event that
 * cannot be mapped can still be parked in {@code outbox_dead_letter} with everything it had.
 *
 * @param seq       the row's seq; 0 for an event that came as a logical decoding message (no row)
 * @param createdAt      ISO-8601 timestamp with offset, as Debezium or PostgreSQL's JSON rendered it
 * @param createdAtValue the same instant when it was read as a value (the start-up drain), else null
 * @param payloadBytes   a binary event's bytes as the row holds them (then {@code payload} is null), else null
 * @param contentType    their media type, else null
 */
record OutboxRow(long seq, String id, String aggregateType, String aggregateId, String eventType, String topic,
                 String payload, String headers, String createdAt, Instant createdAtValue, byte[] payloadBytes,
                 String contentType) {

    /** A JSON row whose created_at is still text (from the WAL or a message). */
    OutboxRow(long seq, String id, String aggregateType, String aggregateId, String eventType, String topic, String payload,
              String headers, String createdAt) {
        this(seq, id, aggregateType, aggregateId, eventType, topic, payload, headers, createdAt, null, null, null);
    }

    /**
     * The event, through {@link OutboxEvent#fromRow} (the same call the poller makes).
     *
     * @throws InvalidEventException when a column cannot be what the contract says
     */
    OutboxEvent toEvent() {
        UUID uuid;
        String idText = require("id", id);
        try {
            uuid = UUID.fromString(idText);
        } catch (IllegalArgumentException e) {
            throw new InvalidEventException("event id '" + id + "' is not a UUID", e);
        }
        return OutboxEvent.fromRow(uuid, require("aggregate_type", aggregateType), require("aggregate_id", aggregateId),
                require("event_type", eventType), topic, payloadBytes == null ? require("payload", payload) : payload,
                payloadBytes, contentType, headers == null ? "{}" : headers, createdAtInstant());
    }

    Instant createdAtInstant() {
        if (createdAtValue != null) {
            return createdAtValue;
        }
        try {
            return IsoInstants.parse(require("created_at", createdAt));
        } catch (DateTimeParseException e) {
            throw new InvalidEventException("created_at '" + createdAt + "' is not an ISO-8601 timestamp with offset", e);
        }
    }

    private String require(String column, String value) {
        if (value == null) {
            throw new InvalidEventException("event " + (id == null ? "at seq " + seq : id) + " has no " + column);
        }
        return value;
    }
}
