package dev.outboxkit.writer;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.outboxkit.core.ContentTypes;
import dev.outboxkit.core.EventIds;
import dev.outboxkit.core.HeaderNames;
import dev.outboxkit.core.InvalidEventException;
import dev.outboxkit.core.Topics;
import dev.outboxkit.core.spi.Traceparent;
import dev.outboxkit.writer.internal.JsonChecks;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;

/**
 * One event to write: immutable, validated when built, so a bad event is refused before anything
 * reaches the database. Build it with {@link #builder(String, String, String)}:
 *
 * <pre>{@code
 * OutboxMessage m = OutboxMessage.builder("account", "acc-42", "MoneyDeposited")
 *         .payload(new Deposit("acc-42", 100))          // JSON, with the writer's payload serializer
 *         .traceparent(incomingTraceparent)              // optional, W3C format checked
 *         .build();
 * }</pre>
 *
 * <p>A binary payload (Protobuf, Avro, any bytes you serialised) goes with its media type, which the
 * relays publish as the Kafka header {@code content-type}; the bytes are published unchanged:
 *
 * <pre>{@code
 * OutboxMessage m = OutboxMessage.builder("order", orderId, "OrderPlaced")
 *         .payloadBytes(placed.toByteArray(), "application/x-protobuf; messageType=shop.OrderPlaced")
 *         .build();
 * }</pre>
 *
 * <p>What is checked in {@link Builder#build()}: aggregate type, aggregate id and event type are
 * not blank; exactly one payload is set and JSON text or a {@link JsonNode} is valid JSON that
 * PostgreSQL's jsonb accepts; the content type of bytes is a media type in RFC 6838's shape
 * ({@link ContentTypes}); a binary event has no header {@code content-type} of its own; header names are legal and not reserved ({@code id},
 * {@code eventType}, {@code aggregateType}, {@code createdAt}); a {@code traceparent} is W3C
 * formatted; an explicit topic is a legal Kafka topic name. A payload given as an object is
 * serialised (and then checked, like the payload size) by the writer when the event is added,
 * with the writer's {@link PayloadSerializer}. Every refusal is an {@link InvalidEventException}
 * whose message names the field and says how to fix it.
 */
public final class OutboxMessage {

    private static final ObjectMapper NODE_WRITER = new ObjectMapper();

    private final UUID id;
    private final String aggregateType;
    private final String aggregateId;
    private final String eventType;
    private final String topic;
    private final Object payloadObject;
    private final String payloadJson;
    private final byte[] payloadBytes;
    private final String contentType;
    private final Map<String, String> headers;

    private OutboxMessage(Builder b, String payloadJson) {
        this.id = b.id != null ? b.id : EventIds.next();
        this.aggregateType = b.aggregateType;
        this.aggregateId = b.aggregateId;
        this.eventType = b.eventType;
        this.topic = b.topic;
        this.payloadObject = payloadJson == null ? b.payloadObject : null;
        this.payloadJson = payloadJson;
        this.payloadBytes = b.payloadBytes;
        this.contentType = b.payloadBytes == null ? null : b.contentType;
        this.headers = Collections.unmodifiableMap(new LinkedHashMap<>(b.headers));
    }

    /**
     * Starts an event.
     *
     * @param aggregateType kind of entity, e.g. {@code account}; picks the default topic
     *                      {@code outbox.event.<aggregateType>}
     * @param aggregateId   entity id; the Kafka key, so one aggregate's events stay in order
     * @param eventType     what happened, e.g. {@code MoneyDeposited}
     */
    public static Builder builder(String aggregateType, String aggregateId, String eventType) {
        return new Builder(aggregateType, aggregateId, eventType);
    }

    /** The event id (UUIDv7 unless one was supplied). */
    public UUID id() {
        return id;
    }

    public String aggregateType() {
        return aggregateType;
    }

    public String aggregateId() {
        return aggregateId;
    }

    public String eventType() {
        return eventType;
    }

    /** The explicit topic, or null when the relay's route decides. */
    public String topic() {
        return topic;
    }

    /** The extra Kafka headers (including {@code traceparent} when one was given). */
    public Map<String, String> headers() {
        return headers;
    }

    /** The payload as JSON text, or null when it is an object the writer serialises. */
    String payloadJson() {
        return payloadJson;
    }

    /** The payload object the writer serialises, or null when the JSON text is known. */
    Object payloadObject() {
        return payloadObject;
    }

    /** The binary payload (as given, not copied), or null for a JSON event. */
    public byte[] payloadBytes() {
        return payloadBytes;
    }

    /** The media type of {@link #payloadBytes()}, or null for a JSON event. */
    public String contentType() {
        return contentType;
    }

    /** Identifies the event without its payload or headers (which may be sensitive). */
    @Override
    public String toString() {
        return "OutboxMessage[id=" + id + ", " + aggregateType + "/" + aggregateId + ", " + eventType
                + (topic == null ? "" : ", topic=" + topic) + "]";
    }

    /** Collects an event's fields; {@link #build()} validates them. Not thread-safe. */
    public static final class Builder {
        private final String aggregateType;
        private final String aggregateId;
        private final String eventType;
        private UUID id;
        private String topic;
        private Object payloadObject;
        private JsonNode payloadNode;
        private String payloadJson;
        private byte[] payloadBytes;
        private String contentType;
        private boolean payloadSet;
        private boolean payloadNull;
        private final Map<String, String> headers = new LinkedHashMap<>();

        private Builder(String aggregateType, String aggregateId, String eventType) {
            this.aggregateType = aggregateType;
            this.aggregateId = aggregateId;
            this.eventType = eventType;
        }

        /**
         * The payload (each payload setter replaces the previous one) as an object that the writer serialises with its
         * {@link PayloadSerializer} (see {@link OutboxWriter.Builder#payloadSerializer}; a Jackson 2 {@link ObjectMapper} by
         * default; in Spring Boot the application's JSON mapper) when the event is added. For JSON you
         * already have as text use {@link #payloadJson(String)}.
         */
        public Builder payload(Object payload) {
            clearPayload();
            payloadNull = payload == null;
            this.payloadObject = payload;
            return this;
        }

        /** The payload as a Jackson tree. */
        public Builder payload(JsonNode payload) {
            clearPayload();
            payloadNull = payload == null;
            this.payloadNode = payload;
            return this;
        }

        /** The payload as JSON text; checked to be one valid JSON value. */
        public Builder payloadJson(String json) {
            clearPayload();
            payloadNull = json == null;
            this.payloadJson = json;
            return this;
        }

        /**
         * The payload as bytes you serialised (Protobuf, Avro, Confluent-framed Avro, …), published
         * unchanged as the Kafka value with the header {@code content-type: <contentType>}. The array
         * is not copied: do not change it until the event is written.
         *
         * @param contentType a media type, {@code type/subtype[; name=value]} (RFC 6838), for example
         *                    {@code application/x-protobuf} or {@code application/vnd.apache.avro+binary}
         */
        public Builder payloadBytes(byte[] bytes, String contentType) {
            clearPayload();
            payloadNull = bytes == null;
            this.payloadBytes = bytes;
            this.contentType = contentType;
            return this;
        }

        private void clearPayload() {
            payloadSet = true;
            payloadObject = null;
            payloadNode = null;
            payloadJson = null;
            payloadBytes = null;
            contentType = null;
        }

        /** Adds a Kafka header (a string); names {@code id}, {@code eventType}, {@code aggregateType}, {@code createdAt} are reserved. */
        public Builder header(String name, String value) {
            headers.put(name, value);
            return this;
        }

        /** Adds every entry of {@code headers} as {@link #header(String, String)} does. */
        public Builder headers(Map<String, String> headers) {
            if (headers == null) {
                throw new InvalidEventException("headers must not be null; pass an empty map for none");
            }
            headers.forEach(this::header);
            return this;
        }

        /**
         * Sends the event to this topic instead of the relay's route template (default route:
         * {@code outbox.event.<aggregateType>}). Must be a legal Kafka topic name.
         */
        public Builder topic(String topic) {
            this.topic = topic;
            return this;
        }

        /**
         * The event id. Default: a fresh UUIDv7 ({@link EventIds#next()}). Supplying an id derived
         * from business facts (for example a name-based UUID of "transfer 123 debited") is
         * supported: the same fact then always yields the same id, so consumers deduplicate it
         * even if it is emitted twice. In {@link WriteMode#KEEP} a second row with an id still in
         * the table fails the transaction with a unique violation ({@code outbox_event_id_key}).
         */
        public Builder id(UUID id) {
            this.id = Objects.requireNonNull(id, "id");
            return this;
        }

        /**
         * Carries the caller's W3C trace context as the {@code traceparent} header, so consumers
         * can continue the trace. Null means none (handy when passing an optional incoming header).
         * OpenTelemetry is not needed: pass the header value you have.
         */
        public Builder traceparent(String traceparent) {
            if (traceparent == null) {
                headers.remove(Traceparent.HEADER);
            } else {
                headers.put(Traceparent.HEADER, traceparent);
            }
            return this;
        }

        /**
         * Validates and builds the event.
         *
         * @throws InvalidEventException naming the first field that is wrong and how to fix it
         */
        public OutboxMessage build() {
            requireText("aggregateType", aggregateType, "the kind of entity the event is about, e.g. \"account\"");
            requireText("aggregateId", aggregateId, "the id of that entity; it becomes the Kafka key");
            requireText("eventType", eventType, "what happened, e.g. \"MoneyDeposited\"");
            if (topic != null) {
                String problem = Topics.problem(topic);
                if (problem != null) {
                    throw new InvalidEventException("topic of event " + describe() + ": " + problem
                            + "; or leave topic unset to use the relay's route");
                }
            }
            for (Map.Entry<String, String> header : headers.entrySet()) {
                String problem = HeaderNames.problem(header.getKey());
                if (problem != null) {
                    throw new InvalidEventException("event " + describe() + ": " + problem);
                }
                if (header.getValue() == null) {
                    throw new InvalidEventException("header '" + header.getKey() + "' of event " + describe()
                            + " has no value; leave the header out instead");
                }
                String textProblem = JsonChecks.textProblem(header.getValue());
                if (textProblem != null) {
                    throw new InvalidEventException("header '" + header.getKey() + "' of event " + describe() + " " + textProblem);
                }
                if (header.getKey().equals(Traceparent.HEADER)) {
                    String traceProblem = Traceparent.problem(header.getValue());
                    if (traceProblem != null) {
                        throw new InvalidEventException(traceProblem);
                    }
                }
            }
            if (!payloadSet) {
                throw new InvalidEventException("event " + describe() + " has no payload: call payload(Object), "
                        + "payload(JsonNode), payloadJson(String) or payloadBytes(byte[], String)");
            }
            if (payloadBytes != null) {
                String problem = ContentTypes.problem(contentType);
                if (problem != null) {
                    throw new InvalidEventException("payloadBytes of event " + describe() + ": " + problem);
                }
                for (String name : headers.keySet()) {
                    if (name.equalsIgnoreCase(HeaderNames.CONTENT_TYPE)) {
                        throw new InvalidEventException("event " + describe() + " has a header '" + name + "'; a binary"
                                + " event's content type is the second argument of payloadBytes(byte[], String)");
                    }
                }
                return new OutboxMessage(this, null);
            }
            if (payloadNull) {
                throw new InvalidEventException("payload of event " + describe() + " is null; for a JSON null "
                        + "use payloadJson(\"null\")");
            }
            if (payloadObject instanceof String) {
                throw new InvalidEventException("payload(Object) of event " + describe() + " got a String: use "
                        + "payloadJson(String) for JSON text, or payload(TextNode.valueOf(s)) for a JSON string value");
            }
            String json = payloadJson;
            if (payloadNode != null) {
                try {
                    json = NODE_WRITER.writeValueAsString(payloadNode);
                } catch (JsonProcessingException e) {
                    throw new InvalidEventException("payload of event " + describe() + " could not be written as JSON: "
                            + e.getOriginalMessage(), e);
                }
            }
            if (json != null) {
                String problem = JsonChecks.problem(json);
                if (problem != null) {
                    throw new InvalidEventException("payload of event " + describe() + " " + problem);
                }
            }
            return new OutboxMessage(this, json);
        }

        private String describe() {
            return aggregateType + "/" + aggregateId + "/" + eventType;
        }

        private static void requireText(String field, String value, String meaning) {
            if (value == null || value.isBlank()) {
                throw new InvalidEventException(field + " must not be blank: it is " + meaning);
            }
            String problem = JsonChecks.textProblem(value);
            if (problem != null) {
                throw new InvalidEventException(field + " " + problem);
            }
        }
    }
}
