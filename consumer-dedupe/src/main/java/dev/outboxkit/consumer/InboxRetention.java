package dev.outboxkit.consumer;

import dev.outboxkit.core.Identifiers;
import dev.outboxkit.core.OutboxTables;
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
        Purge p = new Purge(dataSource, schema, group, retention, admin, clock);
        long purged = 0;
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(true);
            if (!p.topics.isEmpty()) {
                try (PreparedStatement ps = c.prepareStatement("DELETE FROM " + p.table + " WHERE consumer_group = ?"
                        + " AND event_id = ANY (ARRAY(SELECT p.event_id FROM " + p.table + " p JOIN " + COMMITTED
                        + " WHERE " + OLD + " AND " + BEHIND + " LIMIT " + CHUNK + "))")) {
                    ps.setString(1, group);
                    p.bind(c, ps, 2);
                    int n;
                    do {
                        n = ps.executeUpdate();
                        purged += n;
                    } while (n == CHUNK);
                }
            }
            Result left = p.count(c);
            return new Result(purged, left.purged() + left.keptNotCommitted(), left.keptWithoutCoordinates());
        }
    }

    /**
     * What {@link #purge} would do now, by the same rule, without deleting anything ({@code outbox purge --dry-run}):
     * {@link Result#purged()} counts the ids it would delete.
     *
     * @throws IllegalArgumentException when schema is not a legal identifier or retention is not positive
     * @throws IllegalStateException    when Kafka cannot tell the group's offsets
     */
    public static Result dryRun(DataSource dataSource, String schema, String group, Duration retention, Admin admin,
                                Clock clock) throws SQLException {
        Purge p = new Purge(dataSource, schema, group, retention, admin, clock);
        try (Connection c = dataSource.getConnection()) {
            return p.count(c);
        }
    }

    /** The committed offsets, as {@code c(topic, kafka_partition, next_offset)} joined to {@code p} by partition. */
    private static final String COMMITTED = "unnest(?::text[], ?::int[], ?::bigint[]) AS c(topic, kafka_partition, next_offset)"
            + " ON p.topic = c.topic AND p.kafka_partition = c.kafka_partition";
    /** The group's ids recorded before the window (parameters: group, cutoff). */
    private static final String OLD = "p.consumer_group = ? AND p.processed_at < ?";
    /** The offset rule: the group has committed past the offset the id was read from. */
    private static final String BEHIND = "p.kafka_offset < c.next_offset";

    /** One purge's (or dry run's) table, group, cutoff and the group's committed offsets, read from Kafka once. */
    private static final class Purge {
        final String table;
        final String group;
        final Timestamp cutoff;
        final List<String> topics = new ArrayList<>();
        final List<Integer> partitions = new ArrayList<>();
        final List<Long> nextOffsets = new ArrayList<>();

        Purge(DataSource dataSource, String schema, String group, Duration retention, Admin admin, Clock clock) {
            Objects.requireNonNull(dataSource, "dataSource");
            Objects.requireNonNull(admin, "admin");
            Objects.requireNonNull(clock, "clock");
            this.table = Identifiers.qualified(schema, OutboxTables.PROCESSED_EVENT);
            if (group == null || group.isBlank()) {
                throw new IllegalArgumentException("group must not be blank");
            }
            if (retention == null || retention.isNegative() || retention.isZero()) {
                throw new IllegalArgumentException("retention must be positive, got " + retention);
            }
            this.group = group;
            committedOffsets(admin, group).forEach((tp, offset) -> {
                if (offset != null) {
                    topics.add(tp.topic());
                    partitions.add(tp.partition());
                    nextOffsets.add(offset.offset());
                }
            });
            this.cutoff = Timestamp.from(clock.instant().minus(retention));
        }

        /** Binds the offsets ({@link #COMMITTED}), then group and cutoff ({@link #OLD}), from parameter {@code first}. */
        void bind(Connection c, PreparedStatement ps, int first) throws SQLException {
            ps.setArray(first, c.createArrayOf("text", topics.toArray()));
            ps.setArray(first + 1, c.createArrayOf("int4", partitions.toArray()));
            ps.setArray(first + 2, c.createArrayOf("int8", nextOffsets.toArray()));
            ps.setString(first + 3, group);
            ps.setTimestamp(first + 4, cutoff);
        }

        /** The group's ids older than the window: purgeable now, kept behind no commit, kept without coordinates. */
        Result count(Connection c) throws SQLException {
            try (PreparedStatement ps = c.prepareStatement("SELECT count(*) FILTER (WHERE " + BEHIND + "),"
                    + " count(*) FILTER (WHERE p.topic IS NULL OR p.kafka_partition IS NULL OR p.kafka_offset IS NULL),"
                    + " count(*) FROM " + table + " p LEFT JOIN " + COMMITTED + " WHERE " + OLD)) {
                bind(c, ps, 1);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    long purgeable = rs.getLong(1);
                    long withoutCoordinates = rs.getLong(2);
                    return new Result(purgeable, rs.getLong(3) - purgeable - withoutCoordinates, withoutCoordinates);
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
