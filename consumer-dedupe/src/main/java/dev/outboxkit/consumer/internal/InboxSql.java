package dev.outboxkit.consumer.internal;

import dev.outboxkit.core.Identifiers;
import dev.outboxkit.core.OutboxTables;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLTransientException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * Not API: public for {@code dev.outboxkit.consumer.Inbox}.
 *
 * <p>The statements on {@code processed_event}, for one validated schema.
 *
 * <p>The batch insert is one statement however large the batch: the ids travel as arrays. It does
 * not use {@code ON CONFLICT DO NOTHING}: speculative insertion costs an extra index probe and an
 * extra WAL record per row, about a quarter of the statement (measured on PostgreSQL 17). Instead
 * the statement finds the ids already recorded (one index scan for the whole batch), inserts the
 * others plainly and returns the ones it found, usually none; the new ids are the rest. The
 * primary key still guards the rare race with a concurrent transaction inserting the same id (a
 * zombie member and the partition's new owner): the insert waits for the other transaction and,
 * if that committed, fails with a unique violation, reported as {@link InboxConflict} (transient:
 * roll back and retry; the retry finds the committed id and skips it). With
 * {@code speculative = true} the statement is {@code INSERT … ON CONFLICT DO NOTHING RETURNING},
 * for callers that cannot retry (the single {@code applyOnce}).
 */
public final class InboxSql {

    /** Coordinates of one event to record; topic may be null when the caller has none. */
    public record Row(UUID eventId, String topic, Integer partition, Long offset) {
    }

    /** Another transaction recorded one of the ids first; retry the transaction. */
    public static final class InboxConflict extends SQLTransientException {
        private static final long serialVersionUID = 1L;

        InboxConflict(SQLException cause) {
            super("another transaction recorded one of these event ids at the same time; retrying skips it",
                    cause.getSQLState(), cause);
        }
    }

    private static final String UNIQUE_VIOLATION = "23505";

    private final String insertFiltered;
    private final String insertSpeculative;
    private final String selectExisting;

    public InboxSql(String schema) {
        String table = Identifiers.qualified(schema, OutboxTables.PROCESSED_EVENT);
        String columns = "INSERT INTO " + table
                + " (consumer_group, event_id, processed_at, topic, kafka_partition, kafka_offset)"
                + " SELECT ?, u.event_id, ?, u.topic, u.kafka_partition, u.kafka_offset"
                + " FROM unnest(?::uuid[], ?::text[], ?::int[], ?::bigint[])"
                + " AS u(event_id, topic, kafka_partition, kafka_offset)";
        this.insertFiltered = "WITH existing AS (SELECT p.event_id FROM " + table + " p"
                + " WHERE p.consumer_group = ? AND p.event_id = ANY (?::uuid[])),"
                + " inserted AS (" + columns + " WHERE u.event_id <> ALL (ARRAY(SELECT event_id FROM existing)))"
                + " SELECT event_id FROM existing";
        this.insertSpeculative = columns + " ON CONFLICT (consumer_group, event_id) DO NOTHING RETURNING event_id";
        this.selectExisting = "SELECT event_id FROM " + table + " WHERE consumer_group = ? AND event_id = ANY (?::uuid[])";
    }

    /**
     * Records {@code rows} for {@code group}; returns the ids that were not there yet. An id that
     * appears more than once in {@code rows} is recorded with its first coordinates and returned once.
     *
     * @throws InboxConflict when a concurrent transaction recorded one of the ids (not speculative only)
     */
    public Set<UUID> insert(Connection c, String group, List<Row> rows, Instant processedAt, boolean speculative)
            throws SQLException {
        if (rows.isEmpty()) {
            return Set.of();
        }
        // one row per id; sorted, so concurrent inserts of overlapping batches lock in one order
        Map<UUID, Row> unique = new LinkedHashMap<>(rows.size() * 2);
        for (Row row : rows) {
            unique.putIfAbsent(row.eventId(), row);
        }
        List<Row> sorted = new ArrayList<>(unique.values());
        sorted.sort(Comparator.comparing(Row::eventId));
        int n = sorted.size();
        UUID[] ids = new UUID[n];
        String[] topics = new String[n];
        Integer[] partitions = new Integer[n];
        Long[] offsets = new Long[n];
        for (int i = 0; i < n; i++) {
            Row row = sorted.get(i);
            ids[i] = row.eventId();
            topics[i] = row.topic();
            partitions[i] = row.partition();
            offsets[i] = row.offset();
        }
        Set<UUID> returned = new HashSet<>();
        List<Array> arrays = new ArrayList<>(4);
        try (PreparedStatement ps = c.prepareStatement(speculative ? insertSpeculative : insertFiltered)) {
            Array idArray = track(arrays, c.createArrayOf("uuid", ids));
            int i = 1;
            if (!speculative) {
                ps.setString(i++, group);
                ps.setArray(i++, idArray);
            }
            ps.setString(i++, group);
            ps.setTimestamp(i++, Timestamp.from(processedAt));
            ps.setArray(i++, idArray);
            ps.setArray(i++, track(arrays, c.createArrayOf("text", topics)));
            ps.setArray(i++, track(arrays, c.createArrayOf("int4", partitions)));
            ps.setArray(i, track(arrays, c.createArrayOf("int8", offsets)));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    returned.add(rs.getObject(1, UUID.class));
                }
            }
        } catch (SQLException e) {
            if (!speculative && UNIQUE_VIOLATION.equals(e.getSQLState())) {
                throw new InboxConflict(e);
            }
            throw e;
        } finally {
            for (Array a : arrays) {
                a.free();
            }
        }
        if (speculative) {
            return returned;
        }
        Set<UUID> fresh = new HashSet<>(unique.keySet());
        fresh.removeAll(returned);
        return fresh;
    }

    private static Array track(List<Array> arrays, Array a) {
        arrays.add(a);
        return a;
    }

    /** Which of {@code ids} {@code group} has already recorded. */
    public Set<UUID> existing(Connection c, String group, List<UUID> ids) throws SQLException {
        if (ids.isEmpty()) {
            return Set.of();
        }
        Set<UUID> found = new HashSet<>();
        Array idArray = c.createArrayOf("uuid", ids.toArray(new UUID[0]));
        try (PreparedStatement ps = c.prepareStatement(selectExisting)) {
            ps.setString(1, group);
            ps.setArray(2, idArray);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    found.add(rs.getObject(1, UUID.class));
                }
            }
        } finally {
            idArray.free();
        }
        return found;
    }
}
