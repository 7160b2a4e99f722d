package dev.outboxkit.core;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Arrays;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;

/**
 * One outbox row as a relay reads it: the contract columns of {@code outbox_event}. A row is a JSON
 * event ({@code payload} set, {@code payloadBytes} and {@code contentType} null) or a binary event
 * ({@code payload} null, {@code payloadBytes} with its {@code contentType}).
 *
 * @param id            event id (Kafka header {@code id})
 * @param aggregateType kind of entity; picks the default topic
 * @param aggregateId   entity id; the Kafka key
 * @param eventType     what happened
 * @param topic         explicit destination, or null for the route template
 * @param payload       the jsonb exactly as PostgreSQL renders it (the Kafka value), or null for a binary event
 * @param headers       extra headers in the order PostgreSQL renders the jsonb object
 * @param createdAt     commit-side timestamp (microsecond precision)
 * @param payloadBytes  the Kafka value of a binary event, published unchanged (not copied), or null
 * @param contentType   the media type of {@code payloadBytes} (Kafka header {@code content-type}), or null
 */
public record OutboxEvent(UUID id, String aggregateType, String aggregateId, String eventType, String topic,
                          String payload, Map<String, String> headers, Instant createdAt,
                          byte[] payloadBytes, String contentType) {

    public OutboxEvent {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(aggregateType, "aggregateType");
        Objects.requireNonNull(aggregateId, "aggregateId");
        Objects.requireNonNull(eventType, "eventType");
        Objects.requireNonNull(createdAt, "createdAt");
        if ((payload == null) == (payloadBytes == null)) {
            throw new InvalidEventException("event " + id + " must have exactly one payload, JSON (payload) or bytes"
                    + " (payload_bytes); it has " + (payload == null ? "neither" : "both"));
        }
        if (payloadBytes != null) {
            String problem = ContentTypes.problem(contentType);
            if (problem != null) {
                throw new InvalidEventException("event " + id + ": " + problem);
            }
        } else if (contentType != null) {
            throw new InvalidEventException("event " + id + " is JSON but has a content type ('" + contentType
                    + "'); content_type belongs to binary payloads (payload_bytes) only");
        }
        headers = headers == null ? Map.of() : headers;
    }

    /** A JSON event. */
    public OutboxEvent(UUID id, String aggregateType, String aggregateId, String eventType, String topic,
                       String payload, Map<String, String> headers, Instant createdAt) {
        this(id, aggregateType, aggregateId, eventType, topic, Objects.requireNonNull(payload, "payload"), headers,
                createdAt, null, null);
    }

    /** Builds a JSON event from the row's columns, with {@code headersJson} as PostgreSQL renders the jsonb. */
    public static OutboxEvent fromRow(UUID id, String aggregateType, String aggregateId, String eventType, String topic,
                                      String payload, String headersJson, Instant createdAt) {
        return new OutboxEvent(id, aggregateType, aggregateId, eventType, topic, payload,
                JsonHeaders.parse(headersJson), createdAt);
    }

    /**
     * Builds a JSON or binary event from the row's columns: {@code payload} for a JSON row,
     * {@code payloadBytes} and {@code contentType} for a binary one.
     *
     * @throws InvalidEventException when the columns are not exactly one of the two (park the row)
     */
    public static OutboxEvent fromRow(UUID id, String aggregateType, String aggregateId, String eventType, String topic,
                                      String payload, byte[] payloadBytes, String contentType, String headersJson,
                                      Instant createdAt) {
        return new OutboxEvent(id, aggregateType, aggregateId, eventType, topic, payload, JsonHeaders.parse(headersJson),
                createdAt, payloadBytes, contentType);
    }

    /** Whether this is a binary event ({@link #payloadBytes()} and {@link #contentType()} set). */
    public boolean isBinary() {
        return payloadBytes != null;
    }

    /** The Kafka record value: the bytes of a binary event, the UTF-8 of a JSON one. */
    public byte[] value() {
        return payloadBytes != null ? payloadBytes : payload.getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof OutboxEvent e && id.equals(e.id) && aggregateType.equals(e.aggregateType)
                && aggregateId.equals(e.aggregateId) && eventType.equals(e.eventType) && Objects.equals(topic, e.topic)
                && Objects.equals(payload, e.payload) && headers.equals(e.headers) && createdAt.equals(e.createdAt)
                && Arrays.equals(payloadBytes, e.payloadBytes) && Objects.equals(contentType, e.contentType);
    }

    @Override
    public int hashCode() {
        return Objects.hash(id, aggregateType, aggregateId, eventType, topic, payload, headers, createdAt,
                Arrays.hashCode(payloadBytes), contentType);
    }

    @Override
    public String toString() {
        return "OutboxEvent[id=" + id + ", aggregateType=" + aggregateType + ", aggregateId=" + aggregateId
                + ", eventType=" + eventType + ", topic=" + topic + ", payload=" + payload + ", headers=" + headers
                + ", createdAt=" + createdAt + (payloadBytes == null ? "" : ", payloadBytes=" + payloadBytes.length
                + " bytes, contentType=" + contentType) + "]";
    }
}
