package dev.outboxkit.consumer.internal;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * Which partitions this member owns, and which offsets are finished and committed.
 *
 * <p>Each assignment of a partition gets a new generation; a {@link BatchEntry} carries the
 * generation it was polled under, so the worker never touches a record of a partition this member
 * no longer owns, nor one from an earlier assignment of it. An offset is finished when every record
 * before it in its partition is finished. {@link #txLock} is held by the worker for a transaction
 * and its marking, and by the rebalance listener while it revokes: a revocation sees all of a
 * transaction or none of it.
 */
final class Ownership {
    final ReentrantLock txLock = new ReentrantLock();

    private final Map<TopicPartition, Long> owned = new ConcurrentHashMap<>();
    private final Map<TopicPartition, Long> done = new ConcurrentHashMap<>();
    private final AtomicLong generations = new AtomicLong();
    // poll thread only
    private final Map<TopicPartition, Long> committed = new HashMap<>();

    /** The generation a record polled now from this partition belongs to (-1: not owned). */
    long generation(TopicPartition tp) {
        Long generation = owned.get(tp);
        return generation == null ? -1 : generation;
    }

    void assign(Collection<TopicPartition> partitions) {
        long generation = generations.incrementAndGet();
        partitions.forEach(tp -> owned.put(tp, generation));
    }

    /** Call holding {@link #txLock}: the worker starts nothing more on these partitions. */
    void disown(Collection<TopicPartition> partitions) {
        partitions.forEach(owned::remove);
    }

    /** After a revocation or loss: the partitions' offsets are nobody's business here any more. */
    void forget(Collection<TopicPartition> partitions) {
        partitions.forEach(tp -> {
            done.remove(tp);
            committed.remove(tp);
        });
    }

    Collection<TopicPartition> partitions() {
        return owned.keySet();
    }

    int size() {
        return owned.size();
    }

    boolean owns(BatchEntry e) {
        Long generation = owned.get(e.partition);
        return generation != null && generation == e.generation;
    }

    /** The entries this member still owns (the same list when it owns them all). */
    List<BatchEntry> owned(List<BatchEntry> entries) {
        for (BatchEntry e : entries) {
            if (!owns(e)) {
                return entries.stream().filter(this::owns).toList();
            }
        }
        return entries;
    }

    /** Under {@link #txLock}: the record is finished; its partition's committable offset moves past it. */
    void markDone(BatchEntry e) {
        if (owns(e)) {
            done.merge(e.partition, e.record.offset() + 1, Math::max);
        }
    }

    List<TopicPartition> partitionsWithFinished() {
        return new ArrayList<>(done.keySet());
    }

    /** Poll thread: the finished offsets of these partitions not committed yet. */
    Map<TopicPartition, OffsetAndMetadata> toCommit(Collection<TopicPartition> partitions) {
        Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
        for (TopicPartition tp : partitions) {
            Long next = done.get(tp);
            if (next != null && !next.equals(committed.get(tp))) {
                offsets.put(tp, new OffsetAndMetadata(next));
            }
        }
        return offsets;
    }

    /** Poll thread: Kafka accepted these offsets. */
    void committed(Map<TopicPartition, OffsetAndMetadata> offsets) {
        offsets.forEach((tp, o) -> committed.put(tp, o.offset()));
    }
}
