/**
 * What the outbox-ops tools share: {@link dev.outboxkit.ops.OpsBuilder}, the outbox database, clock and meter
 * registry settings of the reconciliation and retention builders. The tools themselves live in
 * {@link dev.outboxkit.ops.admin}, {@link dev.outboxkit.ops.reconcile} and {@link dev.outboxkit.ops.retention}.
 */
package dev.outboxkit.ops;
