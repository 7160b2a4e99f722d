/**
 * A web operator console on the ops API ({@link dev.outboxkit.ops.admin.OutboxAdmin}): the overview (leases, backlog,
 * dead letters, slots, the relay's health), the dead letters grouped by reason with retry and discard, and where an
 * event is. {@link dev.outboxkit.console.Console} answers {@link dev.outboxkit.console.ConsoleRequest}s with
 * {@link dev.outboxkit.console.ConsoleResponse}s, so any HTTP server can mount it; the sidecar mounts it on its
 * HTTP port. See docs/console.md.
 */
package dev.outboxkit.console;
