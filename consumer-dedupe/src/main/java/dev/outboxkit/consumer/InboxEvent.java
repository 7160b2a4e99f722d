package dev.outboxkit.consumer;

import com.fasterxml.jackson.databind.JsonNode;
import dev.outboxkit.consumer.internal.Payloads;
import dev.outboxkit.core.HeaderNames;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;

/**
 * One event as a handler sees it: the outboxkit record contract read back from Kafka, plus where
 * it was read from.
 *
 * <p>Records from outboxkit's relays carry every field. A stock Debezium outbox
 * {@code EventRouter} sets only the {@code id} header by default, so {@link #eventType()},
 * {@link #aggregateType()} and {@link #createdAt()} are {@code null} for its records unless the
 * router is configured to place those columns into headers of the same names
 * ({@code table.fields.additional.placement}). {@link #aggregateId()} is the record key, {@code null}
 * when the record has none.
 *
 * <p>CloudEvents records (the relays' {@code recordFormat=CLOUDEVENTS}) fill the same fields from their
 * attributes when outboxkit's headers are absent: {@code ce_id}, {@code ce_type}, {@code ce_aggregatetype},
 * {@code ce_time}.
 *
 * @param id            event id (header {@code id}, or the consumer's configured id header, else {@code ce_id}):
 *                      the dedupe key
 * @param eventType     header {@code eventType} (else {@code ce_type}), or null when absent
 * @param aggregateType header {@code aggregateType} (else {@code ce_aggregatetype}), or null when absent
 * @param aggregateId   the record key as UTF-8, or null when the record has no key
 * @param payload       the record value as it arrived (not copied; do not modify it)
 * @param headers       every header of the record as UTF-8 text (the last one wins for a repeated name)
 * @param createdAt     header {@code createdAt} (else {@code ce_time}; ISO-8601), or null when absent
 * @param topic         topic the record was read from
 * @param partition     its partition
 * @param offset        its offset
 */
public record InboxEvent(UUID id, String eventType, String aggregateType, String aggregateId, byte[] payload,
                         Map<String, String> headers, Instant createdAt, String topic, int partition, long offset) {

    public InboxEvent {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(topic, "topic");
        headers = headers == null ? Map.of() : headers;
    }

    /**
     * The payload as JSON, parsed on every call. The wrappers Kafka Connect's {@code JsonConverter}
     * puts around a Debezium outbox payload (a JSON string holding the JSON text; a
     * {@code schema}/{@code payload} envelope) are taken off, so handlers see the same tree
     * behind either relay and behind Debezium.
     *
     * @throws dev.outboxkit.core.InvalidEventException when the value is not JSON; thrown from a
     *         handler it sends the event to the dead-letter topic at once, without retries
     */
    public JsonNode payloadJson() {
        String contentType = contentType();
        if (contentType != null && !Payloads.isJson(contentType)) {
            throw new dev.outboxkit.core.InvalidEventException("event " + id + " is a binary event (content-type "
                    + contentType + "), not JSON: read payloadBytes() and decode it with the library for that type");
        }
        return Payloads.parse(payload);
    }

    /**
     * The record value as it arrived, for a binary event (Protobuf, Avro, …) the bytes the writer was given
     * (not copied; do not modify them). The same array as {@link #payload()}.
     */
    public byte[] payloadBytes() {
        return payload;
    }

    /**
     * The media type of the value, header {@code content-type}: set by the relays on binary events
     * (for example {@code application/x-protobuf}); null for outboxkit's JSON events, which carry no
     * such header.
     */
    public String contentType() {
        return headers.get(HeaderNames.CONTENT_TYPE);
    }

    /** Whether the value is something other than JSON: a {@code content-type} that is not a JSON media type. */
    public boolean isBinary() {
        String contentType = contentType();
        return contentType != null && !Payloads.isJson(contentType);
    }

    /** The payload as UTF-8 text, or null for a record without a value. */
    public String payloadText() {
        return payload == null ? null : new String(payload, StandardCharsets.UTF_8);
    }

    /** One header's text, or null when the record does not have it. */
    public String header(String name) {
        return headers.get(name);
    }

    @Override
    public String toString() {
        // never the payload: it may hold personal data and toString ends up in logs
        return "InboxEvent[id=" + id + ", eventType=" + eventType + ", aggregateType=" + aggregateType
                + ", aggregateId=" + aggregateId + ", topic=" + topic + ", partition=" + partition + ", offset=" + offset
                + ", createdAt=" + createdAt + ", payloadBytes=" + (payload == null ? 0 : payload.length) + "]";
    }
}
