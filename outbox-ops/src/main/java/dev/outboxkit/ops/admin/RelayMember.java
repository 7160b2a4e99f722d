package dev.outboxkit.ops.admin;

import java.time.Duration;
import java.time.Instant;

/**
 * A polling relay instance as it registered itself in {@code outbox_relay_member}: every instance, the one that holds
 * leases and those that stand by, renews its membership while it runs.
 *
 * @param id           the instance id (the holder the lease table names)
 * @param partitions   the partition count it runs with
 * @param startedAt    when it joined
 * @param heartbeatAge how long ago it last renewed its membership
 * @param alive        its membership has not expired; an expired member crashed, was paused or lost the database, and
 *                     its leases expire with it
 */
public record RelayMember(String id, int partitions, Instant startedAt, Duration heartbeatAge, boolean alive) {
}
