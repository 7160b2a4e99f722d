package dev.outboxkit.spring;

import dev.outboxkit.spring.spi.WriteObserver;
import dev.outboxkit.writer.OutboxMessage;
import dev.outboxkit.writer.OutboxWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import javax.sql.DataSource;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.jdbc.support.SQLExceptionTranslator;
import org.springframework.jdbc.support.SQLStateSQLExceptionTranslator;
import org.springframework.transaction.IllegalTransactionStateException;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Writes outbox events in the current Spring-managed transaction: {@code @Transactional},
 * {@code TransactionTemplate}, with a {@code DataSourceTransactionManager} (JDBC,
 * {@code JdbcTemplate}) or a {@code JpaTransactionManager} (JPA/Hibernate). The events commit
 * with the business change or not at all. Thread-safe; auto-configured as a bean.
 *
 * <pre>{@code
 * @Transactional
 * public void transfer(String from, String to, long amount) {
 *     jdbc.update("UPDATE account SET balance = balance - ? WHERE id = ?", amount, from);
 *     jdbc.update("UPDATE account SET balance = balance + ? WHERE id = ?", amount, to);
 *     outbox.write(OutboxMessage.builder("account", from, "MoneySent").payload(new Sent(from, to, amount)).build());
 * }
 * }</pre>
 *
 * <p>Called with no transaction active it refuses ({@link IllegalTransactionStateException}):
 * an event committed on its own, apart from the business change, is exactly what an outbox
 * exists to prevent.
 */
public final class SpringOutboxWriter {

    private final OutboxWriter writer;
    private final DataSource dataSource;
    private final List<WriteObserver> observers;
    private final SQLExceptionTranslator translator = new SQLStateSQLExceptionTranslator();

    public SpringOutboxWriter(OutboxWriter writer, DataSource dataSource) {
        this(writer, dataSource, List.of());
    }

    /** With {@code observers} told of every write (outbox-spring-boot-test's recorder). */
    SpringOutboxWriter(OutboxWriter writer, DataSource dataSource, List<WriteObserver> observers) {
        this.writer = Objects.requireNonNull(writer, "writer");
        this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
        this.observers = List.copyOf(observers);
    }

    /**
     * Writes {@code messages} in the current transaction (one round trip per
     * {@value OutboxWriter#EVENTS_PER_ROUND_TRIP} events).
     *
     * @return the event ids, in order
     * @throws IllegalTransactionStateException when no Spring-managed transaction is active
     * @throws dev.outboxkit.core.InvalidEventException when an event is invalid (nothing written)
     * @throws org.springframework.dao.DataAccessException when the database refused the events;
     *         the transaction must then roll back (let the exception propagate)
     */
    public List<UUID> write(Collection<OutboxMessage> messages) {
        Objects.requireNonNull(messages, "messages");
        Connection c = transactionalConnection(dataSource, "write outbox events");
        try {
            List<UUID> ids = writer.write(c, messages);
            if (!observers.isEmpty()) {
                List<OutboxMessage> written = List.copyOf(messages);
                for (WriteObserver o : observers) {
                    o.written(c, written, ids);
                }
            }
            return ids;
        } catch (SQLException e) {
            throw translate(translator, "writing " + messages.size() + " outbox event(s)", e);
        } finally {
            DataSourceUtils.releaseConnection(c, dataSource);
        }
    }

    /** {@link #write(Collection)} for a few events. */
    public List<UUID> write(OutboxMessage... messages) {
        return write(Arrays.asList(messages));
    }

    /** The underlying writer (schema, mode, limits). */
    public OutboxWriter writer() {
        return writer;
    }

    /** The connection of the current Spring-managed transaction on {@code dataSource}; refuses when there is none. */
    static Connection transactionalConnection(DataSource dataSource, String what) {
        if (!TransactionSynchronizationManager.isActualTransactionActive()) {
            throw new IllegalTransactionStateException("cannot " + what + " outside a transaction: no Spring-managed "
                    + "transaction is active on this thread, so they would commit on their own, apart from the business "
                    + "change. Call it from a @Transactional method (or inside TransactionTemplate.execute) whose "
                    + "transaction manager runs on the same DataSource (DataSourceTransactionManager or JpaTransactionManager)");
        }
        return DataSourceUtils.getConnection(dataSource);
    }

    static RuntimeException translate(SQLExceptionTranslator translator, String task, SQLException e) {
        RuntimeException translated = translator.translate(task, null, e);
        return translated != null ? translated : new org.springframework.jdbc.UncategorizedSQLException(task, null, e);
    }
}
