package dev.outboxkit.consumer;

import dev.outboxkit.core.Identifiers;
import dev.outboxkit.core.OutboxTables;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import javax.sql.DataSource;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * Purges processed event ids that no redelivery can reach any more. An id is purged only when
 * both hold: it was recorded before the retention window ({@code processed_at < now - retention}),
 * and the group's committed offset for its partition (read from Kafka with
 * {@link Admin#listConsumerGroupOffsets}) is past the offset it was read from. Ids recorded
 * without Kafka coordinates (the plain {@link Inbox#applyOnce(java.sql.Connection, String, String,
 * java.util.UUID, Inbox.Effect)}) cannot be proven unreachable and are kept; the result counts them.
 *
 * <p>{@link DedupeConsumer} runs this itself every {@code retentionCheckInterval}; users with
 * their own loop call {@link #purge} from a scheduler. Deletes run in chunks of
 * {@value #CHUNK} rows, each in its own transaction.
 */
public final class InboxRetention {

    static final int CHUNK = 5_000;

    private InboxRetention() {
    }

    /**
     * What a purge did.
     *
     * @param purged                 ids deleted
     * @param keptNotCommitted       ids older than the window kept because the group has not
     *                               committed past them (or has no committed offset for their partition)
     * @param keptWithoutCoordinates ids older than the window kept because they were recorded
     *                               without topic, partition and offset
     */
    public record Result(long purged, long keptNotCommitted, long keptWithoutCoordinates) {
    }

    /**
     * Purges the ids of {@code group} in {@code schema} that are older than {@code retention} and
     * behind the group's committed offsets.
     *
     * @throws IllegalArgumentException when schema is not a legal identifier or retention is not positive
     * @throws IllegalStateException    when Kafka cannot tell the group's offsets (nothing is deleted then)
     * @throws SQLException             on database errors (chunks deleted before stay deleted)
     */
    public static Result purge(DataSource dataSource, String schema, String group, Duration retention, Admin admin,
                               Clock clock) throws SQLException {
        Objects.requireNonNull(dataSource, "dataSource");
        Objects.requireNonNull(admin, "admin");
        Objects.requireNonNull(clock, "clock");
        String table = Identifiers.qualified(schema, OutboxTables.PROCESSED_EVENT);
        if (group == null || group.isBlank()) {
            throw new IllegalArgumentException("group must not be blank");
        }
        if (retention == null || retention.isNegative() || retention.isZero()) {
            throw new IllegalArgumentException("retention must be positive, got " + retention);
        }
        Map<TopicPartition, OffsetAndMetadata> offsets = committedOffsets(admin, group);
        List<String> topics = new ArrayList<>();
        List<Integer> partitions = new ArrayList<>();
        List<Long> nextOffsets = new ArrayList<>();
        offsets.forEach((tp, offset) -> {
            if (offset != null) {
                topics.add(tp.topic());
                partitions.add(tp.partition());
                nextOffsets.add(offset.offset());
            }
        });
        Timestamp cutoff = Timestamp.from(clock.instant().minus(retention));
        long purged = 0;
        String delete = "DELETE FROM " + table + " WHERE consumer_group = ? AND event_id = ANY (ARRAY("
                + " SELECT p.event_id FROM " + table + " p"
                + " JOIN unnest(?::text[], ?::int[], ?::bigint[]) AS c(topic, kafka_partition, next_offset)"
                + " ON p.topic = c.topic AND p.kafka_partition = c.kafka_partition"
                + " WHERE p.consumer_group = ? AND p.processed_at < ? AND p.kafka_offset < c.next_offset"
                + " LIMIT " + CHUNK + "))";
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(true);
            if (!topics.isEmpty()) {
                Array topicArray = c.createArrayOf("text", topics.toArray());
                Array partitionArray = c.createArrayOf("int4", partitions.toArray());
                Array offsetArray = c.createArrayOf("int8", nextOffsets.toArray());
                try (PreparedStatement ps = c.prepareStatement(delete)) {
                    ps.setString(1, group);
                    ps.setArray(2, topicArray);
                    ps.setArray(3, partitionArray);
                    ps.setArray(4, offsetArray);
                    ps.setString(5, group);
                    ps.setTimestamp(6, cutoff);
                    int n;
                    do {
                        n = ps.executeUpdate();
                        purged += n;
                    } while (n == CHUNK);
                }
            }
            try (PreparedStatement ps = c.prepareStatement("SELECT count(*),"
                    + " count(*) FILTER (WHERE topic IS NULL OR kafka_partition IS NULL OR kafka_offset IS NULL)"
                    + " FROM " + table + " WHERE consumer_group = ? AND processed_at < ?")) {
                ps.setString(1, group);
                ps.setTimestamp(2, cutoff);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    long old = rs.getLong(1);
                    long withoutCoordinates = rs.getLong(2);
                    return new Result(purged, old - withoutCoordinates, withoutCoordinates);
                }
            }
        }
    }

    /** The group's committed offsets, from the group coordinator. */
    static Map<TopicPartition, OffsetAndMetadata> committedOffsets(Admin admin, String group) {
        try {
            return admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get(60, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw new IllegalStateException("cannot read the committed offsets of consumer group " + group + ": "
                    + e.getCause() + "; nothing was purged", e.getCause());
        } catch (TimeoutException e) {
            throw new IllegalStateException("Kafka did not tell the committed offsets of consumer group " + group
                    + " within 60 s; nothing was purged", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while reading the offsets of consumer group " + group, e);
        }
    }
}
