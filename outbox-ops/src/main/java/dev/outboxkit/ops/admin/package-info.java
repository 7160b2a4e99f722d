/**
 * Operating an outbox from code: its status (backlog, leases and their fencing tokens, dead letters, replication
 * slots, and the CDC relay's slots as it recorded them: {@link dev.outboxkit.ops.admin.CdcRelaySlot}), the dead
 * letters (list, retry, discard) and replay. {@link dev.outboxkit.ops.admin.OutboxAdmin} is the
 * entry point; the {@code outbox status}, {@code outbox dead-letters} and {@code outbox replay} commands are thin
 * layers over it, and an admin page or a Spring Actuator endpoint builds on it the same way.
 */
package dev.outboxkit.ops.admin;
