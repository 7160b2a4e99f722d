package dev.outboxkit.ops.admin;

import java.time.Instant;
import java.util.UUID;

/**
 * A parked row of {@code outbox_dead_letter}: an event Kafka refused for good, with why and by whom. The
 * payload itself is never read (only its size), so listing dead letters never exposes it.
 *
 * @param id            the event id
 * @param seq           its {@code seq} in {@code outbox_event} (a retry puts it back there); 0 for a logical
 *                      decoding message the CDC relay parked (it gets a new seq)
 * @param parkedBy      the relay instance that parked it
 * @param errorClass    the Kafka exception's class
 * @param errorMessage  its message
 * @param payloadBytes  size of the payload in bytes (JSON text or binary)
 */
public record DeadLetter(UUID id, String aggregateType, String aggregateId, String eventType, long seq, int attempts,
                         Instant createdAt, Instant parkedAt, String parkedBy, String errorClass, String errorMessage,
                         long payloadBytes) {
}
