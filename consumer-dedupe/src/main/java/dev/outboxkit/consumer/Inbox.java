package dev.outboxkit.consumer;

import dev.outboxkit.consumer.internal.InboxSql;
import dev.outboxkit.consumer.internal.RecordDecoder;
import dev.outboxkit.core.HeaderNames;
import dev.outboxkit.core.Identifiers;
import dev.outboxkit.core.InvalidEventException;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * The inbox as a plain call, for users who run their own consumer loop (a Spring Kafka listener,
 * a Kafka Streams processor): {@code applyOnce} records the event id in {@code processed_event}
 * and runs the effect in the same transaction, or does nothing when the id is already there.
 *
 * <pre>{@code
 * try (Connection c = dataSource.getConnection()) {
 *     Inbox.applyOnce(c, "public", "billing", eventId, tx -> {
 *         try (var ps = tx.prepareStatement("UPDATE account SET balance = balance + ? WHERE id = ?")) { ... }
 *     });
 * }   // then let your framework commit the Kafka offset
 * }</pre>
 *
 * <p>Transactions: on a connection in auto-commit mode, {@code applyOnce} runs its own
 * transaction and commits it. On a connection with auto-commit off it joins the caller's
 * transaction under a savepoint: a failing effect rolls back to the savepoint (the id is not
 * recorded) and the exception is rethrown; the caller commits. Commit the Kafka offset only after
 * the database commit: a crash in between redelivers, and the redelivery is skipped here.
 *
 * <p>Record the Kafka coordinates (the {@link ConsumerRecord} overload or the one with topic,
 * partition and offset) when you can: retention ({@link InboxRetention}) purges an id only once
 * the group's committed offset is past it, and keeps ids recorded without coordinates.
 */
public final class Inbox {

    private static final Map<String, InboxSql> STATEMENTS = new ConcurrentHashMap<>();

    private Inbox() {
    }

    /** An effect that runs in the inbox's transaction: write through {@code connection} only. */
    @FunctionalInterface
    public interface Effect {
        void apply(Connection connection) throws Exception;
    }

    /**
     * Applies {@code effect} once for ({@code group}, {@code eventId}).
     *
     * @return true when the effect ran (the id was new), false when it was skipped as a duplicate
     * @throws IllegalArgumentException when {@code schema} is not a legal identifier or {@code group} is blank
     * @throws Exception                whatever the effect threw, after the id was rolled back
     */
    public static boolean applyOnce(Connection c, String schema, String group, UUID eventId, Effect effect) throws Exception {
        return apply(c, schema, group, new InboxSql.Row(Objects.requireNonNull(eventId, "eventId"), null, null, null), effect);
    }

    /** {@link #applyOnce(Connection, String, String, UUID, Effect)}, recording where the event was read from. */
    public static boolean applyOnce(Connection c, String schema, String group, UUID eventId, String topic, int partition,
                                    long offset, Effect effect) throws Exception {
        Objects.requireNonNull(eventId, "eventId");
        Objects.requireNonNull(topic, "topic");
        return apply(c, schema, group, new InboxSql.Row(eventId, topic, partition, offset), effect);
    }

    /**
     * {@link #applyOnce(Connection, String, String, UUID, Effect)} for a record read by your own
     * consumer: the id comes from its {@code id} header (a CloudEvents record's {@code ce_id}), the coordinates from
     * the record.
     *
     * @throws InvalidEventException when the record has no {@code id} (or {@code ce_id}) header or it is not a UUID:
     *                               dead-letter the record, do not retry it
     */
    public static boolean applyOnce(Connection c, String schema, String group, ConsumerRecord<?, ?> record, Effect effect)
            throws Exception {
        UUID id = RecordDecoder.eventId(record.headers(), HeaderNames.ID);
        return apply(c, schema, group, new InboxSql.Row(id, record.topic(), record.partition(), record.offset()), effect);
    }

    /**
     * {@link #applyOnce(Connection, String, String, ConsumerRecord, Effect)} with the late-arrival
     * check of {@link DedupeConsumer}: a record whose event was made (header {@code createdAt} or {@code ce_time},
     * else the time in a UUIDv7 id) before {@code lateBefore} (now minus the inbox's retention) is skipped
     * when its id is still recorded and refused with {@link LateArrivalException} when it is not.
     *
     * @param lateBefore null for no check
     * @throws InvalidEventException when the id or {@code createdAt} header cannot be read
     * @throws LateArrivalException  when the event is late and its id not recorded (nothing changed)
     */
    public static boolean applyOnce(Connection c, String schema, String group, ConsumerRecord<?, ?> record,
                                    Instant lateBefore, Effect effect) throws Exception {
        UUID id = RecordDecoder.eventId(record.headers(), HeaderNames.ID);
        InboxSql.Row row = new InboxSql.Row(id, record.topic(), record.partition(), record.offset());
        if (lateBefore == null) {
            return apply(c, schema, group, row, effect);
        }
        Instant created = RecordDecoder.eventTime(RecordDecoder.createdAt(record.headers()), id);
        if (created == null || !created.isBefore(lateBefore)) {
            return apply(c, schema, group, row, effect);
        }
        InboxSql sql = statements(schema, group);
        if (!sql.existing(Objects.requireNonNull(c, "connection"), group, List.of(id)).isEmpty()) {
            return false;   // still recorded: an ordinary duplicate
        }
        throw new LateArrivalException(id, created, lateBefore);
    }

    private static boolean apply(Connection c, String schema, String group, InboxSql.Row row, Effect effect) throws Exception {
        Objects.requireNonNull(c, "connection");
        Objects.requireNonNull(effect, "effect");
        InboxSql sql = statements(schema, group);
        if (c.getAutoCommit()) {
            c.setAutoCommit(false);
            try {
                boolean applied = insertAndApply(c, sql, group, row, effect);
                c.commit();
                return applied;
            } catch (Exception | Error e) {
                rollbackQuietly(c, e);
                throw e;
            } finally {
                c.setAutoCommit(true);
            }
        }
        Savepoint savepoint = c.setSavepoint();
        try {
            boolean applied = insertAndApply(c, sql, group, row, effect);
            c.releaseSavepoint(savepoint);
            return applied;
        } catch (Exception | Error e) {
            try {
                c.rollback(savepoint);
            } catch (SQLException rollbackFailure) {
                e.addSuppressed(rollbackFailure);
            }
            throw e;
        }
    }

    private static InboxSql statements(String schema, String group) {
        if (group == null || group.isBlank()) {
            throw new IllegalArgumentException("group must not be blank");
        }
        return STATEMENTS.computeIfAbsent(Identifiers.requireValid("schema", schema), InboxSql::new);
    }

    private static boolean insertAndApply(Connection c, InboxSql sql, String group, InboxSql.Row row, Effect effect)
            throws Exception {
        if (sql.insert(c, group, List.of(row), Instant.now(), true).isEmpty()) {
            return false;
        }
        effect.apply(c);
        return true;
    }

    private static void rollbackQuietly(Connection c, Throwable cause) {
        try {
            c.rollback();
        } catch (SQLException e) {
            cause.addSuppressed(e);
        }
    }
}
