package dev.outboxkit.writer.internal;

import java.util.UUID;

/**
 * Not API: public for {@code OutboxWriter} and {@code OutboxTransaction} in {@code dev.outboxkit.writer}.
 *
 * <p>An event ready for the database: validated, payload and headers rendered as JSON text.
 *
 * @param topic   null for the relay's route
 * @param payload JSON text, checked
 * @param headers JSON object text, {@code {}} when there are none
 */
public record PreparedEvent(UUID id, String aggregateType, String aggregateId, String eventType, String topic,
                            String payload, String headers) {
}
