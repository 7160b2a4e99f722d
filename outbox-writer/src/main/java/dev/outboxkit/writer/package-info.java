/**
 * Writing outbox events inside the caller's JDBC transaction ({@link dev.outboxkit.writer.OutboxWriter},
 * {@link dev.outboxkit.writer.OutboxMessage}) and request idempotency keys
 * ({@link dev.outboxkit.writer.IdempotencyKeys}). Packages named {@code internal} are not API.
 */
package dev.outboxkit.writer;
