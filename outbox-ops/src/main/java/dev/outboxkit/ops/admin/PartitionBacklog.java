package dev.outboxkit.ops.admin;

import java.time.Duration;

/**
 * Unpublished events of one polling relay partition ({@link OutboxAdmin#backlogByPartition}), among the oldest
 * {@value Status#EXACT_BACKLOG_LIMIT}: the events its lease holder publishes next.
 *
 * @param leaseKey  the partition's lease, {@code poll/<n>}
 * @param events    how many of those events fall in it
 * @param oldestAge how long ago the oldest of them was created
 */
public record PartitionBacklog(String leaseKey, long events, Duration oldestAge) {
}
