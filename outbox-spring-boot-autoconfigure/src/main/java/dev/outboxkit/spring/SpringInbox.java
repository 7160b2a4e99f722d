package dev.outboxkit.spring;

import dev.outboxkit.consumer.Inbox;
import dev.outboxkit.consumer.LateArrivalException;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.function.Function;
import javax.sql.DataSource;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.kafka.listener.BatchListenerFailedException;
import org.springframework.kafka.support.KafkaUtils;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Applies a consumed event once, in the same database transaction as the application's own
 * effect (JDBC or JPA): the event id goes into the inbox ({@code processed_event}, see
 * {@link Inbox}) in that transaction, and a redelivered event is skipped. Thread-safe;
 * auto-configured as a bean when consumer-dedupe and Spring Kafka are present.
 *
 * <pre>{@code
 * @KafkaListener(topics = "outbox.event.account", groupId = "projection")
 * void on(ConsumerRecord<String, String> record) {
 *     inbox.applyOnce(record, () -> projection.apply(record.value()));   // JdbcTemplate, JPA repositories: all join
 * }
 *
 * @KafkaListener(topics = "outbox.event.account", groupId = "projection", batch = "true")
 * void on(List<ConsumerRecord<String, String>> records) {
 *     inbox.applyEachOnce(records, r -> projection.apply(r.value()));    // one transaction for the batch
 * }
 * }</pre>
 *
 * <p>Which overload: {@link #applyOnce(ConsumerRecord, Runnable)} for effects through Spring's data
 * access ({@code JdbcTemplate}, JPA repositories, jOOQ on the same {@code DataSource}: they join the
 * transaction by themselves); {@link #applyOnce(ConsumerRecord, Inbox.Effect)} when the effect wants
 * the transaction's JDBC {@code Connection}; {@link #applyEachOnce} for a batch listener. Each has a
 * variant with an explicit consumer group for code that does not run inside a {@code @KafkaListener}.
 *
 * <p>Transactions: {@code applyOnce} joins the transaction active on the thread (a
 * {@code @Transactional} listener) or runs one of its own with the application's transaction
 * manager. Either way it has committed before the listener returns, and Spring Kafka commits the
 * offset only after the listener returned: a crash in between redelivers the record, and the
 * redelivery is skipped here. A listener that throws is rolled back (the id is not recorded), so
 * Spring Kafka's error handler may redeliver it or send it to its dead-letter topic. A record
 * without a valid {@code id} header throws {@link dev.outboxkit.core.InvalidEventException}; a
 * new event older than the retention window throws {@link LateArrivalException} (not applied,
 * not recorded; a late event whose id is still recorded is a duplicate). Neither is worth a retry:
 * the auto-configured error handler ({@link SpringDeadLetters}) forwards them at once, to
 * {@code <topic>.dlq} and {@code <topic>.review}, as {@code DedupeConsumer} does.
 */
public final class SpringInbox {

    private final DataSource dataSource;
    private final TransactionTemplate transactions;
    private final String schema;
    private final String defaultGroup;
    private final Duration lateAfter;

    /** An inbox with the late-arrival check of a 7-day retention (consumer-dedupe's default). */
    public SpringInbox(DataSource dataSource, PlatformTransactionManager transactionManager, String schema, String group) {
        this(dataSource, transactionManager, schema, group, Duration.ofDays(7));
    }

    /**
     * @param lateAfter the inbox's retention: a new event created longer ago is refused with
     *                  {@link LateArrivalException}; null applies every new event
     */
    public SpringInbox(DataSource dataSource, PlatformTransactionManager transactionManager, String schema, String group,
                       Duration lateAfter) {
        this.lateAfter = lateAfter;
        this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
        this.transactions = new TransactionTemplate(Objects.requireNonNull(transactionManager, "transactionManager"));
        this.schema = Objects.requireNonNull(schema, "schema");
        this.defaultGroup = group == null || group.isBlank() ? null : group;
    }

    /**
     * Runs {@code effect} once for the record's event id in the listener's consumer group.
     *
     * @return true when the effect ran, false when the event was a duplicate and was skipped
     * @throws IllegalStateException when no group is known: set {@code outboxkit.consumer.group}
     *                               or call it from a {@code @KafkaListener}
     * @throws dev.outboxkit.core.InvalidEventException when the record has no valid {@code id} (or {@code createdAt})
     * @throws LateArrivalException  when the event is new and older than the retention window
     */
    public boolean applyOnce(ConsumerRecord<?, ?> record, Inbox.Effect effect) {
        return applyOnce(group(), record, effect);
    }

    /** {@link #applyOnce(ConsumerRecord, Inbox.Effect)} under an explicit consumer group. */
    public boolean applyOnce(String group, ConsumerRecord<?, ?> record, Inbox.Effect effect) {
        Objects.requireNonNull(record, "record");
        Objects.requireNonNull(effect, "effect");
        return applyAll(group, List.of(record), r -> effect, new int[] {-1}) == 1;
    }

    /**
     * {@link #applyOnce(ConsumerRecord, Inbox.Effect)} for an effect that needs no {@code Connection}:
     * {@code JdbcTemplate}, JPA repositories and other Spring data access join the transaction.
     */
    public boolean applyOnce(ConsumerRecord<?, ?> record, Runnable effect) {
        Objects.requireNonNull(effect, "effect");
        return applyOnce(group(), record, c -> effect.run());
    }

    /** {@link #applyOnce(ConsumerRecord, Runnable)} under an explicit consumer group. */
    public boolean applyOnce(String group, ConsumerRecord<?, ?> record, Runnable effect) {
        Objects.requireNonNull(effect, "effect");
        return applyOnce(group, record, c -> effect.run());
    }

    /**
     * Applies a batch listener's records, each once by event id, in one transaction: duplicates are
     * skipped, the others' effects run in the batch's order.
     *
     * <p>When the effect of one record fails (or the record is undecodable or late), nothing of the
     * batch is recorded in that transaction. Where this call owns the transaction, the records before
     * the failing one are then applied again in a transaction of their own and committed, and a
     * {@link BatchListenerFailedException} names the failing record, so Spring Kafka's
     * {@code DefaultErrorHandler} commits the offsets before it, retries or dead-letters it
     * ({@link SpringDeadLetters}) and redelivers the rest: no record is lost and none is applied
     * twice. Inside a transaction of the listener's own ({@code @Transactional}) the exception is
     * rethrown as for a single record: the listener's transaction rolls back and the whole batch
     * comes again.
     *
     * @return how many records were applied (the rest were duplicates)
     */
    public <K, V> int applyEachOnce(List<ConsumerRecord<K, V>> records, Consumer<ConsumerRecord<K, V>> effect) {
        return applyEachOnce(group(), records, effect);
    }

    /** {@link #applyEachOnce(List, Consumer)} under an explicit consumer group. */
    public <K, V> int applyEachOnce(String group, List<ConsumerRecord<K, V>> records, Consumer<ConsumerRecord<K, V>> effect) {
        Objects.requireNonNull(records, "records");
        Objects.requireNonNull(effect, "effect");
        boolean joined = TransactionSynchronizationManager.isActualTransactionActive();
        int[] failedAt = {-1};
        try {
            return applyAll(group, records, r -> c -> effect.accept(r), failedAt);
        } catch (RuntimeException | Error e) {
            if (joined || failedAt[0] < 0) {
                throw e;
            }
            // The prefix succeeded before the failure rolled it back: commit it alone, then point Spring at the failure.
            applyAll(group, records.subList(0, failedAt[0]), r -> c -> effect.accept(r), new int[] {-1});
            throw new BatchListenerFailedException("record " + failedAt[0] + " of the batch failed: " + e.getMessage(), e,
                    records.get(failedAt[0]));
        }
    }

    /** Applies each record's effect once, in one transaction; on a failure {@code failedAt[0]} is the failing index. */
    private <R extends ConsumerRecord<?, ?>> int applyAll(String group, List<R> records, Function<R, Inbox.Effect> effects,
                                                          int[] failedAt) {
        Instant lateBefore = lateAfter == null ? null : Instant.now().minus(lateAfter);
        Integer applied = transactions.execute(status -> {
            Connection c = DataSourceUtils.getConnection(dataSource);
            int n = 0;
            int i = 0;
            try {
                for (; i < records.size(); i++) {
                    if (Inbox.applyOnce(c, schema, group, records.get(i), lateBefore, effects.apply(records.get(i)))) {
                        n++;
                    }
                }
                return n;
            } catch (RuntimeException | Error e) {
                failedAt[0] = i;
                throw e;
            } catch (Exception e) {
                failedAt[0] = i;
                ConsumerRecord<?, ?> record = records.get(i);
                throw new EffectFailedException("the effect of " + record.topic() + "-" + record.partition() + "@"
                        + record.offset() + " failed: " + e.getMessage(), e);
            } finally {
                DataSourceUtils.releaseConnection(c, dataSource);
            }
        });
        return applied == null ? 0 : applied;
    }

    private String group() {
        if (defaultGroup != null) {
            return defaultGroup;
        }
        String group = KafkaUtils.getConsumerGroupId();
        if (group == null || group.isBlank()) {
            throw new IllegalStateException("no consumer group for the inbox: call applyOnce from a @KafkaListener with a "
                    + "group id, set outboxkit.consumer.group, or pass the group to applyOnce(group, record, effect)");
        }
        return group;
    }

    /** The effect threw a checked exception; the transaction was rolled back and the event id not recorded. */
    public static final class EffectFailedException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        EffectFailedException(String message, Throwable cause) {
            super(message, cause);
        }
    }
}
