package dev.outboxkit.writer.internal;

import java.util.UUID;

/**
 * Not API: public for {@code OutboxWriter} and {@code OutboxTransaction} in {@code dev.outboxkit.writer}.
 *
 * <p>An event ready for the database: validated, payload and headers rendered as JSON text.
 *
 * @param topic        null for the relay's route
 * @param payload      JSON text, checked; null for a binary event
 * @param headers      JSON object text, {@code {}} when there are none
 * @param payloadBytes a binary event's bytes (not copied), or null
 * @param contentType  their media type, checked; null for a JSON event
 */
public record PreparedEvent(UUID id, String aggregateType, String aggregateId, String eventType, String topic,
                            String payload, String headers, byte[] payloadBytes, String contentType) {

    public boolean isBinary() {
        return payloadBytes != null;
    }
}
