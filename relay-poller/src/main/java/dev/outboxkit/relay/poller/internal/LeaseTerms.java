package dev.outboxkit.relay.poller.internal;

import dev.outboxkit.runtime.LeaseTiming;
import java.time.Duration;

/**
 * Not API: public for {@code dev.outboxkit.relay.poller.PollingRelay}.
 *
 * <p>What {@link LeaseManager} needs to know, read once from the relay's settings: who this instance is, how many
 * partitions the group shares, how long a lease lasts, how often it is renewed and how long a release may wait for
 * the claims in flight on its partitions.
 *
 * @param instanceId         the lease holder's and member's name
 * @param logPrefix          how the log names this relay
 * @param schema             the schema of the lease, member and liveness tables
 * @param partitions         the partition count this instance announces and takes its share of
 * @param timing             the lease's duration (a lease and a membership last that long without renewal) and
 *                           what derives from it
 * @param heartbeatInterval  how often leases and membership are renewed and the partitions rebalanced
 * @param releaseLockTimeout the lock timeout of a lease release
 */
public record LeaseTerms(String instanceId, String logPrefix, String schema, int partitions, LeaseTiming timing,
                         Duration heartbeatInterval, Duration releaseLockTimeout) {
}
