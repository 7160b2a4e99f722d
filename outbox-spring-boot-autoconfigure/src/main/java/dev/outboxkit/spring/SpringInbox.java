package dev.outboxkit.spring;

import dev.outboxkit.consumer.Inbox;
import dev.outboxkit.consumer.LateArrivalException;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import javax.sql.DataSource;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.kafka.support.KafkaUtils;
import org.springframework.transaction.PlatformTransactionManager;
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
 *     inbox.applyOnce(record, c -> projection.apply(record.value()));   // JdbcTemplate, JPA repositories: all join
 * }
 * }</pre>
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
        Instant lateBefore = lateAfter == null ? null : Instant.now().minus(lateAfter);
        Boolean applied = transactions.execute(status -> {
            Connection c = DataSourceUtils.getConnection(dataSource);
            try {
                return Inbox.applyOnce(c, schema, group, record, lateBefore, effect);
            } catch (RuntimeException | Error e) {
                throw e;
            } catch (Exception e) {
                throw new EffectFailedException("the effect of " + record.topic() + "-" + record.partition() + "@"
                        + record.offset() + " failed: " + e.getMessage(), e);
            } finally {
                DataSourceUtils.releaseConnection(c, dataSource);
            }
        });
        return Boolean.TRUE.equals(applied);
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
