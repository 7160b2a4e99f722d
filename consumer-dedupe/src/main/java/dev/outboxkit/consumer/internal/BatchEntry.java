package dev.outboxkit.consumer.internal;

import dev.outboxkit.consumer.InboxEvent;
import java.time.Instant;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;

/** One record of a batch and what the poll thread learnt about it while decoding. */
final class BatchEntry {
    final ConsumerRecord<byte[], byte[]> record;
    final TopicPartition partition;
    /** The generation of the partition's assignment when the record was polled (-1: not owned then). */
    final long generation;
    final InboxEvent event;
    final RuntimeException failure;
    final boolean late;

    BatchEntry(ConsumerRecord<byte[], byte[]> record, TopicPartition partition, long generation,
               RecordDecoder.Decoded decoded, boolean late) {
        this.record = record;
        this.partition = partition;
        this.generation = generation;
        this.event = decoded.event();
        this.failure = decoded.failure();
        this.late = late;
    }

    /** The event's created_at, else the time in a version-7 id, else null (unknown: never late). */
    static Instant createdAtOrIdTime(InboxEvent event) {
        return RecordDecoder.eventTime(event.createdAt(), event.id());
    }
}
