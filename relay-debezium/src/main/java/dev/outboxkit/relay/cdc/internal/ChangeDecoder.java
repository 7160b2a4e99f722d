package dev.outboxkit.relay.cdc.internal;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.outboxkit.core.LogicalMessages;
import dev.outboxkit.core.OutboxTables;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.connect.data.Field;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.source.SourceRecord;

/**
 * Reads Debezium's records in the Connect format (structs; no JSON converter round trip): an insert
 * into {@code outbox_event}, a logical decoding message of the writer's emit-message mode, or a record
 * that only moves the position (heartbeats, the heartbeat table, anything else).
 *
 * <p>Column values arrive as PostgreSQL's text output: {@code jsonb} as {@code jsonb_out} renders it (the
 * same bytes as {@code payload::text}), {@code uuid} lower-case, {@code timestamptz} as an ISO-8601 string
 * with all its microseconds; {@code bytea} (a binary event's {@code payload_bytes}) as the raw bytes
 * ({@code binary.handling.mode=bytes}, see EngineConfig).
 */
final class ChangeDecoder {

    enum Kind { OUTBOX_ROW, OUTBOX_MESSAGE, POSITION }

    /** One record, decoded. {@code row} is set for the two outbox kinds. */
    record Change(Kind kind, OutboxRow row, Position position) {
    }

    /** Prefix of the logical decoding messages the writer emits in its emit-message mode. */
    static final String MESSAGE_PREFIX = "outboxkit";

    private static final JsonFactory JSON = new JsonFactory();

    private final String schema;
    private final String heartbeatTopicPrefix;

    ChangeDecoder(String schema, String heartbeatTopicPrefix) {
        this.schema = schema;
        this.heartbeatTopicPrefix = heartbeatTopicPrefix;
    }

    Change decode(SourceRecord record) {
        Position position = Position.of(record.sourceOffset());
        if (record.topic() != null && record.topic().startsWith(heartbeatTopicPrefix)) {
            return new Change(Kind.POSITION, null, position);
        }
        if (!(record.value() instanceof Struct value) || value.schema().field("op") == null) {
            return new Change(Kind.POSITION, null, position);
        }
        String op = value.getString("op");
        if ("m".equals(op)) {
            Struct message = value.getStruct("message");
            if (message != null && MESSAGE_PREFIX.equals(message.getString("prefix"))) {
                return new Change(Kind.OUTBOX_MESSAGE, fromMessage(bytes(message.get("content"))), position);
            }
            return new Change(Kind.POSITION, null, position);
        }
        if (!"c".equals(op) && !"r".equals(op)) {
            return new Change(Kind.POSITION, null, position);
        }
        Struct source = value.getStruct("source");
        if (source == null || !OutboxTables.OUTBOX_EVENT.equals(source.getString("table")) || !schema.equals(source.getString("schema"))) {
            return new Change(Kind.POSITION, null, position);
        }
        Struct after = value.getStruct("after");
        return new Change(Kind.OUTBOX_ROW, fromRow(after), position);
    }

    private static OutboxRow fromRow(Struct after) {
        Object seq = after.get("seq");
        Field bytesField = after.schema().field("payload_bytes");
        Object bytes = bytesField == null ? null : after.get(bytesField);
        return new OutboxRow(seq instanceof Number n ? n.longValue() : 0L, string(after, "id"), string(after, "aggregate_type"),
                string(after, "aggregate_id"), string(after, "event_type"), string(after, "topic"), string(after, "payload"),
                string(after, "headers"), string(after, "created_at"), null, bytes == null ? null : bytes(bytes),
                string(after, "content_type"));
    }

    private static String string(Struct struct, String field) {
        Field f = struct.schema().field(field);
        if (f == null) {
            return null;
        }
        Object v = struct.get(f);
        return v == null ? null : v.toString();
    }

    private static byte[] bytes(Object content) {
        if (content instanceof byte[] b) {
            return b;
        }
        if (content instanceof ByteBuffer buffer) {
            ByteBuffer dup = buffer.duplicate();
            byte[] b = new byte[dup.remaining()];
            dup.get(b);
            return b;
        }
        return new byte[0];
    }

    /**
     * The writer's message: a JSON object of the contract columns, {@code payload} and {@code headers}
     * as strings holding their JSON text (format {@link LogicalMessages}, with {@code v}), or embedded as
     * JSON values (a message built by hand). Their text is cut out of the message exactly as PostgreSQL rendered it,
     * so the record's value is byte-identical to what the table path would publish. A message that is not
     * such an object yields a row with nulls, which {@link OutboxRow#toEvent()} refuses (dead letter).
     * A binary event (format version 2) carries {@code payload_base64} and {@code content_type} instead
     * of {@code payload}; Base64 that does not decode leaves the row without a payload (dead letter).
     */
    static OutboxRow fromMessage(byte[] content) {
        String text = new String(content, StandardCharsets.UTF_8);
        Map<String, String> fields = new HashMap<>();
        String payloadString = null;
        try (JsonParser p = JSON.createParser(text)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return new OutboxRow(0, null, null, null, null, null, null, null, null);
            }
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                JsonToken token = p.nextToken();
                int start = (int) p.currentTokenLocation().getCharOffset();
                if (token == JsonToken.START_OBJECT || token == JsonToken.START_ARRAY) {
                    p.skipChildren();
                    fields.put(name, text.substring(start, (int) p.currentLocation().getCharOffset()));
                } else if (token == JsonToken.VALUE_NULL && !name.equals("payload")) {
                    fields.put(name, null); // a JSON null payload is the value "null", like jsonb 'null' in the table
                } else if (token == JsonToken.VALUE_STRING && !name.equals("payload")) {
                    // headers as a string holding the object (the writer's format) or embedded as an object: same text
                    fields.put(name, p.getText());
                } else {
                    p.finishToken(); // a lazily parsed string ends where its closing quote is, not where it starts
                    fields.put(name, text.substring(start, (int) p.currentLocation().getCharOffset()));
                    if (token == JsonToken.VALUE_STRING && name.equals("payload")) {
                        payloadString = p.getText();
                    }
                }
            }
        } catch (IOException e) {
            return new OutboxRow(0, null, null, null, null, null, null, null, null);
        }
        byte[] payloadBytes = null;
        String base64 = fields.get(LogicalMessages.PAYLOAD_BASE64);
        if (base64 != null) {
            try {
                payloadBytes = Base64.getMimeDecoder().decode(base64);
            } catch (IllegalArgumentException e) {
                payloadBytes = null;
            }
        }
        // The writer's format (LogicalMessages, member "v") carries the payload as a string holding the jsonb's
        // text: that text is the record value, as the polling relay would publish it. Without "v" (a message
        // built by hand with the payload embedded) a string is itself the JSON value.
        String payload = fields.containsKey(LogicalMessages.VERSION) && payloadString != null
                ? payloadString : fields.get("payload");
        return new OutboxRow(0, fields.get("id"), fields.get("aggregate_type"), fields.get("aggregate_id"),
                fields.get("event_type"), fields.get("topic"), payload, fields.get("headers"),
                fields.get("created_at"), null, payloadBytes, fields.get(LogicalMessages.CONTENT_TYPE));
    }
}
