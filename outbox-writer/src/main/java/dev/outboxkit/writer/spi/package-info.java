/**
 * Not API: the seam other outboxkit modules use to run requests on a writer's idempotency keys (the Spring filter runs
 * each request through {@link dev.outboxkit.writer.spi.IdempotencyEngine}, found with
 * {@code IdempotencyKeys.unwrap(IdempotencyEngine.class)}, in a {@link dev.outboxkit.writer.spi.WorkTransaction} of
 * its own). May change in any release.
 */
package dev.outboxkit.writer.spi;
