package dev.outboxkit.relay.poller.internal;

import java.util.Arrays;
import java.util.Collection;
import java.util.Map;
import java.util.TreeMap;

/**
 * Not API: public for {@code dev.outboxkit.relay.poller.PollingRelay}.
 *
 * <p>The partitions this instance holds a lease on, each with the fencing token it got when it
 * acquired the lease. Immutable: the lease manager publishes a new one on every change, the claim
 * loop reads whichever is current.
 */
public final class Ownership {

    static final Ownership NONE = new Ownership(new TreeMap<>(), 0);

    private final int[] partitions;
    private final long[] fences;
    private final int total;

    private Ownership(TreeMap<Integer, Long> held, int total) {
        this.partitions = held.keySet().stream().mapToInt(Integer::intValue).toArray();
        this.fences = held.values().stream().mapToLong(Long::longValue).toArray();
        this.total = total;
    }

    static Ownership of(Map<Integer, Long> held, int total) {
        return new Ownership(new TreeMap<>(held), total);
    }

    public int size() {
        return partitions.length;
    }

    public boolean isEmpty() {
        return partitions.length == 0;
    }

    /** True when this instance holds every partition (the claim then skips the per-row hash). */
    public boolean holdsAll() {
        return total > 0 && partitions.length == total;
    }

    /** Partition numbers, ascending (a copy). */
    public int[] partitions() {
        return partitions.clone();
    }

    /** Fences in the order of {@link #partitions()} (a copy). */
    public long[] fences() {
        return fences.clone();
    }

    public boolean holds(int partition) {
        return Arrays.binarySearch(partitions, partition) >= 0;
    }

    /** The fence of {@code partition}, or -1 when it is not held. */
    public long fence(int partition) {
        int i = Arrays.binarySearch(partitions, partition);
        return i < 0 ? -1 : fences[i];
    }

    TreeMap<Integer, Long> toMap() {
        TreeMap<Integer, Long> m = new TreeMap<>();
        for (int i = 0; i < partitions.length; i++) {
            m.put(partitions[i], fences[i]);
        }
        return m;
    }

    /**
     * The share of claim loop {@code loop} of {@code loops}: the partitions p held with {@code p % loops == loop},
     * with their fences (the same object when {@code loops} is 1). A share never {@link #holdsAll() holds all}
     * unless it is the only one.
     */
    public Ownership share(int loop, int loops) {
        if (loops == 1) {
            return this;
        }
        TreeMap<Integer, Long> m = new TreeMap<>();
        for (int i = 0; i < partitions.length; i++) {
            if (partitions[i] % loops == loop) {
                m.put(partitions[i], fences[i]);
            }
        }
        return new Ownership(m, total);
    }

    Ownership without(Collection<Integer> lost) {
        TreeMap<Integer, Long> m = toMap();
        lost.forEach(m::remove);
        return new Ownership(m, total);
    }

    Ownership with(Map<Integer, Long> gained) {
        TreeMap<Integer, Long> m = toMap();
        m.putAll(gained);
        return new Ownership(m, total);
    }

    @Override
    public String toString() {
        return partitions.length + "/" + total + " partitions";
    }
}
