package dev.outboxkit.core;

import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;

/**
 * One outbox row as a relay reads it: the contract columns of {@code outbox_event}.
 *
 * @param id            event id (Kafka header {@code id})
 * @param aggregateType kind of entity; picks the default topic
 * @param aggregateId   entity id; the Kafka key
 * @param eventType     what happened
 * @param topic         explicit destination, or null for the route template
 * @param payload       the jsonb exactly as PostgreSQL renders it; the Kafka value
 * @param headers       extra headers in the order PostgreSQL renders the jsonb object
 * @param createdAt     commit-side timestamp (microsecond precision)
 */
public record OutboxEvent(UUID id, String aggregateType, String aggregateId, String eventType, String topic,
                          String payload, Map<String, String> headers, Instant createdAt) {

    public OutboxEvent {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(aggregateType, "aggregateType");
        Objects.requireNonNull(aggregateId, "aggregateId");
        Objects.requireNonNull(eventType, "eventType");
        Objects.requireNonNull(payload, "payload");
        Objects.requireNonNull(createdAt, "createdAt");
        headers = headers == null ? Map.of() : headers;
    }

    /** Builds an event from the row's columns, with {@code headersJson} as PostgreSQL renders the jsonb. */
    public static OutboxEvent fromRow(UUID id, String aggregateType, String aggregateId, String eventType, String topic,
                                      String payload, String headersJson, Instant createdAt) {
        return new OutboxEvent(id, aggregateType, aggregateId, eventType, topic, payload,
                JsonHeaders.parse(headersJson), createdAt);
    }
}
