package dev.outboxkit.core.spi;

/**
 * Not API: the one definition of how the polling relay splits {@code outbox_event} into partitions, shared by the
 * relay (which claims rows by it) and the ops tools (which say which lease an event waits for). An aggregate's rows are
 * all in one partition: a stable hash of aggregate type and id, modulo the partition count. Partition {@code n} is
 * worked under the lease key {@code poll/<n>} in {@code outbox_relay_lease}.
 */
public final class PollPartitions {

    /** Prefix of the polling relay's keys in {@code outbox_relay_lease}: {@code poll/0} … {@code poll/63}. */
    public static final String LEASE_PREFIX = "poll/";

    private PollPartitions() {
    }

    /**
     * The SQL expression for the partition of the {@code outbox_event} row aliased {@code alias}.
     *
     * @param partitions the partition count, positive (an int, never text from outside)
     */
    public static String of(String alias, int partitions) {
        if (partitions < 1) {
            throw new IllegalArgumentException("partitions must be positive, got " + partitions);
        }
        return "((hashtext(" + alias + ".aggregate_type || '/' || " + alias + ".aggregate_id) & 2147483647) % "
                + partitions + ")";
    }

    /** The lease key of {@code partition}: {@code poll/<partition>}. */
    public static String leaseKey(int partition) {
        return LEASE_PREFIX + partition;
    }
}
