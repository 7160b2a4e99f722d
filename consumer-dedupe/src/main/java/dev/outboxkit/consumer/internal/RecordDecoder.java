package dev.outboxkit.consumer.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.outboxkit.consumer.InboxEvent;
import dev.outboxkit.core.EventIds;
import dev.outboxkit.core.HeaderNames;
import dev.outboxkit.core.InvalidEventException;
import dev.outboxkit.relay.CloudEventsHeaders;
import dev.outboxkit.runtime.IsoInstants;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;

/**
 * Not API: public for {@code dev.outboxkit.consumer.Inbox}.
 *
 * <p>Turns a Kafka record into an {@link InboxEvent}, or says why it cannot (poison).
 */
public final class RecordDecoder {

    private final String idHeader;

    public RecordDecoder(String idHeader) {
        this.idHeader = idHeader;
    }

    /** The event, or the reason the record is poison. Never throws for bad input. */
    public Decoded decode(ConsumerRecord<byte[], byte[]> record) {
        try {
            UUID id = eventId(record.headers(), idHeader);
            Map<String, String> headers = new LinkedHashMap<>();
            for (Header h : record.headers()) {
                headers.put(h.key(), h.value() == null ? null : new String(h.value(), StandardCharsets.UTF_8));
            }
            Instant createdAt = createdAt(record.headers());
            String key = record.key() == null ? null : new String(record.key(), StandardCharsets.UTF_8);
            InboxEvent event = new InboxEvent(id, either(headers, HeaderNames.EVENT_TYPE, CloudEventsHeaders.TYPE),
                    either(headers, HeaderNames.AGGREGATE_TYPE, CloudEventsHeaders.AGGREGATE_TYPE), key, record.value(),
                    Collections.unmodifiableMap(headers), createdAt, record.topic(), record.partition(), record.offset());
            return new Decoded(event, null);
        } catch (InvalidEventException e) {
            return new Decoded(null, e);
        }
    }

    /** A record decoded: exactly one of {@code event} and {@code failure} is set. */
    public record Decoded(InboxEvent event, InvalidEventException failure) {
    }

    /** Header {@code outboxkit}'s text, else header {@code cloudEvents}'s (the other record format), else null. */
    private static String either(Map<String, String> headers, String outboxkit, String cloudEvents) {
        String text = headers.get(outboxkit);
        return connectText(text != null ? text : headers.get(cloudEvents));
    }

    /**
     * The event id: header {@code idHeader}, else a CloudEvents record's {@code ce_id}; a canonical UUID as text,
     * also as Kafka Connect's JsonConverter writes a string header ({@link #connectText}).
     */
    public static UUID eventId(Headers headers, String idHeader) {
        String headerName = idHeader;
        Header header = headers.lastHeader(idHeader);
        if (header == null || header.value() == null) {
            headerName = CloudEventsHeaders.ID;
            header = headers.lastHeader(CloudEventsHeaders.ID);
        }
        if (header == null || header.value() == null) {
            throw new InvalidEventException("the record has no '" + idHeader + "' header (nor a CloudEvents 'ce_id'), "
                    + "so it has no event id to deduplicate by (set the consumer's idHeader if the producer uses "
                    + "another name)");
        }
        String text = connectText(new String(header.value(), StandardCharsets.UTF_8).trim());
        if (!isCanonicalUuid(text)) {
            throw new InvalidEventException("header '" + headerName + "' is not a UUID: '" + abbreviate(text) + "'");
        }
        return UUID.fromString(text);
    }

    /**
     * A header's text, with the encodings of Kafka Connect's {@code JsonConverter} as a header converter taken off:
     * a JSON string ({@code "text"}, schemas disabled; Debezium Embedded's and Server's Json format) and a
     * {@code {"schema": {"type": "string", …}, "payload": "text"}} envelope (schemas enabled, the converter's
     * default). Anything else, our relays' plain UTF-8 included, is returned as it is. Null stays null.
     */
    static String connectText(String text) {
        if (text == null || text.length() < 2) {
            return text;
        }
        char first = text.charAt(0);
        boolean quoted = first == '"' && text.charAt(text.length() - 1) == '"';
        if (!quoted && !(first == '{' && text.contains("\"payload\""))) {
            return text; // the common case, decided without parsing
        }
        try {
            JsonNode node = Payloads.MAPPER.readTree(text);
            if (node != null && Payloads.isConnectEnvelope(node)) {
                node = node.get("payload");
            }
            return node != null && node.isTextual() ? node.textValue() : text;
        } catch (IOException e) {
            return text;
        }
    }

    /** 8-4-4-4-12 hex digits: UUID.fromString alone also accepts forms like 1-2-3-4-5. */
    static boolean isCanonicalUuid(String s) {
        if (s.length() != 36) {
            return false;
        }
        for (int i = 0; i < 36; i++) {
            char c = s.charAt(i);
            if (i == 8 || i == 13 || i == 18 || i == 23) {
                if (c != '-') {
                    return false;
                }
            } else if (Character.digit(c, 16) < 0) {
                return false;
            }
        }
        return true;
    }

    /**
     * When the event was made, for the late-arrival check: its {@code createdAt}, else the time
     * inside a UUIDv7 id, else null (such an event is never late).
     */
    public static Instant eventTime(Instant createdAt, UUID id) {
        if (createdAt != null) {
            return createdAt;
        }
        return id.version() == 7 ? Instant.ofEpochMilli(EventIds.unixMillis(id)) : null;
    }

    /**
     * The record's {@code createdAt} header, else a CloudEvents record's {@code ce_time}, or null without either; an
     * unreadable one is an {@link InvalidEventException}.
     */
    public static Instant createdAt(Headers headers) {
        String name = HeaderNames.CREATED_AT;
        Header header = headers.lastHeader(name);
        if (header == null || header.value() == null) {
            name = CloudEventsHeaders.TIME;
            header = headers.lastHeader(name);
        }
        return header == null || header.value() == null ? null
                : createdAt(connectText(new String(header.value(), StandardCharsets.UTF_8)), name);
    }

    private static Instant createdAt(String text, String name) {
        try {
            return IsoInstants.parse(text.trim());
        } catch (DateTimeParseException e) {
            throw new InvalidEventException("header '" + name + "' is not an ISO-8601 instant: '"
                    + abbreviate(text) + "'");
        }
    }

    private static String abbreviate(String s) {
        return s.length() <= 80 ? s : s.substring(0, 80) + "…";
    }
}
