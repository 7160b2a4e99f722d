/**
 * Bounded retention of everything outboxkit keeps, each with its safety rule
 * ({@link dev.outboxkit.ops.retention.Retention}), run once or on a schedule, one instance per schema at a time
 * ({@link dev.outboxkit.ops.retention.RetentionSchedule}).
 */
package dev.outboxkit.ops.retention;
