package dev.outboxkit.core;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Base64;
import java.util.UUID;

/**
 * The outbox event as a PostgreSQL logical decoding message: what the writer emits in its
 * {@code LOGICAL_MESSAGE} mode with {@code pg_logical_emit_message(true, 'outboxkit', body)}
 * (transactional: decoded only if the transaction commits, in commit order), and how the WAL
 * relay turns it back into an {@link OutboxEvent}. No table is involved.
 *
 * <p>Prefix: {@value #PREFIX}. Body, format version {@value #FORMAT_VERSION}: one JSON object
 * (UTF-8) built by PostgreSQL ({@code jsonb_build_object(...)::text}) with these members:
 * <table>
 *   <caption>logical message body</caption>
 *   <tr><th>member</th><th>JSON type</th><th>value</th></tr>
 *   <tr><td>{@code v}</td><td>number</td><td>format version, {@value #FORMAT_VERSION}</td></tr>
 *   <tr><td>{@code id}</td><td>string</td><td>event id, lowercase canonical UUID</td></tr>
 *   <tr><td>{@code aggregate_type}, {@code aggregate_id}, {@code event_type}</td><td>string</td>
 *       <td>as in {@code outbox_event}</td></tr>
 *   <tr><td>{@code topic}</td><td>string or null</td><td>explicit destination, null for the route</td></tr>
 *   <tr><td>{@code payload}</td><td><b>string</b></td><td>the payload jsonb exactly as PostgreSQL
 *       renders it ({@code payload::text}): the same characters a polling relay reads from
 *       {@code outbox_event.payload}, hence the Kafka value</td></tr>
 *   <tr><td>{@code headers}</td><td><b>string</b></td><td>the headers jsonb as PostgreSQL renders
 *       it ({@code {}} when there are none)</td></tr>
 *   <tr><td>{@code created_at}</td><td>string</td><td>{@code now()} of the writing transaction in
 *       UTC, {@code yyyy-MM-ddTHH:mm:ss.SSSSSSZ} (the {@code createdAt} header format)</td></tr>
 * </table>
 * Payload and headers are carried as strings so the relay never re-renders JSON: the record is
 * byte-identical to the one the polling relay would publish for the same row.
 *
 * <p>A binary event is written in format version {@value #BINARY_FORMAT_VERSION}: the same members
 * but {@code payload}, which is replaced by {@code payload_base64} (string: the bytes, standard
 * Base64 without line breaks) and {@code content_type} (string: their media type). A JSON event is
 * still written as version {@value #FORMAT_VERSION}, so a relay that reads only version 1 keeps
 * working for every JSON event and says "upgrade the relay" for a binary one.
 */
public final class LogicalMessages {

    /** The prefix of every outboxkit logical decoding message. */
    public static final String PREFIX = "outboxkit";
    /** The body format this class writes and reads. */
    public static final int FORMAT_VERSION = 1;
    /** The body format of a binary event. */
    public static final int BINARY_FORMAT_VERSION = 2;

    public static final String VERSION = "v";
    public static final String ID = "id";
    public static final String AGGREGATE_TYPE = "aggregate_type";
    public static final String AGGREGATE_ID = "aggregate_id";
    public static final String EVENT_TYPE = "event_type";
    public static final String TOPIC = "topic";
    public static final String PAYLOAD = "payload";
    public static final String PAYLOAD_BASE64 = "payload_base64";
    public static final String CONTENT_TYPE = "content_type";
    public static final String HEADERS = "headers";
    public static final String CREATED_AT = "created_at";

    private static final ObjectMapper MAPPER = new ObjectMapper();

    private LogicalMessages() {
    }

    /** Decodes a message body (UTF-8). */
    public static OutboxEvent decode(byte[] content) {
        return decode(new String(content, StandardCharsets.UTF_8));
    }

    /**
     * Decodes a message body.
     *
     * @throws InvalidEventException when the body is not a version-{@value #FORMAT_VERSION} or
     *                               version-{@value #BINARY_FORMAT_VERSION} outboxkit message (a message with another prefix must not be passed here)
     */
    public static OutboxEvent decode(String content) {
        JsonNode body;
        try {
            body = MAPPER.readTree(content);
        } catch (JsonProcessingException e) {
            throw new InvalidEventException("outboxkit logical message is not JSON: " + e.getOriginalMessage(), e);
        }
        if (body == null || !body.isObject()) {
            throw new InvalidEventException("outboxkit logical message must be a JSON object");
        }
        int version = body.path(VERSION).asInt(-1);
        if (version != FORMAT_VERSION && version != BINARY_FORMAT_VERSION) {
            throw new InvalidEventException("outboxkit logical message has format version " + body.path(VERSION)
                    + "; this relay reads versions " + FORMAT_VERSION + " and " + BINARY_FORMAT_VERSION + ": upgrade the relay");
        }
        boolean binary = version == BINARY_FORMAT_VERSION;
        try {
            return OutboxEvent.fromRow(UUID.fromString(text(body, ID)), text(body, AGGREGATE_TYPE), text(body, AGGREGATE_ID),
                    text(body, EVENT_TYPE), body.path(TOPIC).isTextual() ? body.get(TOPIC).asText() : null,
                    binary ? null : text(body, PAYLOAD), binary ? Base64.getMimeDecoder().decode(text(body, PAYLOAD_BASE64)) : null,
                    binary ? text(body, CONTENT_TYPE) : null, text(body, HEADERS), Instant.parse(text(body, CREATED_AT)));
        } catch (IllegalArgumentException | DateTimeParseException e) {
            if (e instanceof InvalidEventException invalid) {
                throw invalid;
            }
            throw new InvalidEventException("outboxkit logical message has a malformed member: " + e.getMessage(), e);
        }
    }

    private static String text(JsonNode body, String member) {
        JsonNode value = body.get(member);
        if (value == null || !value.isTextual()) {
            throw new InvalidEventException("outboxkit logical message lacks the string member '" + member + "'");
        }
        return value.asText();
    }
}
