package dev.outboxkit.consumer.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.outboxkit.core.InvalidEventException;
import java.io.IOException;

/**
 * Not API: public for {@code dev.outboxkit.consumer.InboxEvent}.
 *
 * <p>Reads a record value as JSON, whichever way the producer wrote it: our relays write the payload
 * as it is; a stock Debezium outbox router behind Kafka Connect's {@code JsonConverter} writes the
 * jsonb column as a JSON <em>string</em> (the payload's text in quotes) and, with schemas enabled,
 * wraps it in a {@code {"schema": …, "payload": …}} envelope. Both wrappers are taken off here.
 */
public final class Payloads {

    public static final ObjectMapper MAPPER = new ObjectMapper();

    private Payloads() {
    }

    /**
     * The payload as a tree.
     *
     * @throws InvalidEventException when the value is null or not JSON (never retried: the same
     *                               bytes will never parse)
     */
    public static JsonNode parse(byte[] value) {
        if (value == null) {
            throw new InvalidEventException("the record has no value (a tombstone), so it has no JSON payload");
        }
        JsonNode node;
        try {
            node = MAPPER.readTree(value);
        } catch (JsonProcessingException e) {
            throw new InvalidEventException("the record value is not JSON: " + e.getOriginalMessage(), e);
        } catch (IOException e) {
            throw new InvalidEventException("the record value is not JSON: " + e.getMessage(), e);
        }
        if (node == null || node.isMissingNode()) {
            throw new InvalidEventException("the record value is empty, so it has no JSON payload");
        }
        if (isConnectEnvelope(node)) {
            node = node.get("payload");
        }
        if (node.isTextual()) {
            String text = node.textValue().trim();
            if (text.startsWith("{") || text.startsWith("[")) {
                try {
                    return MAPPER.readTree(text);
                } catch (IOException e) {
                    // a plain string payload that happens to start with a brace: keep it as a string
                    return node;
                }
            }
        }
        return node;
    }

    /** Whether {@code contentType} names JSON: {@code application/json}, or any {@code …+json} suffix (RFC 6839). */
    public static boolean isJson(String contentType) {
        int semicolon = contentType.indexOf(';');
        String type = (semicolon < 0 ? contentType : contentType.substring(0, semicolon)).strip().toLowerCase(java.util.Locale.ROOT);
        return type.equals("application/json") || type.endsWith("+json");
    }

    /** Kafka Connect's JsonConverter with schemas enabled: exactly {schema: {type: …}, payload}. */
    static boolean isConnectEnvelope(JsonNode node) {
        return node.isObject() && node.size() == 2 && node.has("payload")
                && node.get("schema") != null && node.get("schema").isObject() && node.get("schema").has("type");
    }
}
