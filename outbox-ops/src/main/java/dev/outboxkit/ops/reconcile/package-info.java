/**
 * Reconciliation: the intent ledger compared with what consumers applied, for what no window can prevent
 * ({@link dev.outboxkit.ops.reconcile.Reconciler}, its {@link dev.outboxkit.ops.reconcile.Report} of
 * {@link dev.outboxkit.ops.reconcile.Finding}s).
 */
package dev.outboxkit.ops.reconcile;
