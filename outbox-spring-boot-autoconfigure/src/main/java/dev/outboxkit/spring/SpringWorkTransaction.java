package dev.outboxkit.spring;

import dev.outboxkit.writer.CommitOutcomeUnknownException;
import dev.outboxkit.writer.spi.RoundTrip;
import dev.outboxkit.writer.spi.WorkTransaction;
import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionStatus;
import org.springframework.transaction.support.DefaultTransactionDefinition;

/**
 * The {@link IdempotencyFilter}'s transaction as the idempotency engine sees it: a Spring transaction around the
 * handler, the key's completion run in it just before the commit; the key's own statements on a connection of their
 * own. Not API.
 */
final class SpringWorkTransaction implements WorkTransaction {

    private final PlatformTransactionManager transactionManager;
    private final DataSource dataSource;
    private final TransactionStatus status;

    /** Begins the handler's transaction. */
    SpringWorkTransaction(PlatformTransactionManager transactionManager, DataSource dataSource) {
        this.transactionManager = transactionManager;
        this.dataSource = dataSource;
        this.status = transactionManager.getTransaction(new DefaultTransactionDefinition());
    }

    /** The handler's own {@code @Transactional} failed and marked the transaction rollback-only. */
    boolean isRollbackOnly() {
        return status.isRollbackOnly();
    }

    @Override
    public void commit(RoundTrip completion) throws SQLException {
        try {
            status.flush(); // JPA: surface the handler's constraint violations before the key is completed
            Connection c = DataSourceUtils.getConnection(dataSource);
            try {
                completion.execute(c);
            } finally {
                DataSourceUtils.releaseConnection(c, dataSource);
            }
        } catch (SQLException | RuntimeException e) {
            transactionManager.rollback(status);
            throw e;
        }
        try {
            transactionManager.commit(status);
        } catch (RuntimeException e) {
            if (outcomeUnknown(e)) {
                throw new CommitOutcomeUnknownException("the commit of the handler's transaction failed: " + e, e);
            }
            throw e;
        }
    }

    @Override
    public void rollback(Throwable cause) {
        if (!status.isCompleted()) {
            transactionManager.rollback(status);
        }
    }

    @Override
    public <T> T alone(KeyStatement<T> statement) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(true);
            return statement.run(c);
        }
    }

    /**
     * Whether a failed commit may still have committed. Only a refusal PostgreSQL sent back proves
     * a rollback (a deferred constraint, a serialization failure: SQLState classes 23 and 40), as
     * does a transaction already marked rollback-only. Anything else (the connection failed, the
     * pool closed it, the rollback after it failed too) leaves the outcome unknown.
     */
    static boolean outcomeUnknown(Throwable t) {
        if (t instanceof org.springframework.transaction.UnexpectedRollbackException) {
            return false;
        }
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof SQLException s && s.getSQLState() != null
                    && (s.getSQLState().startsWith("23") || s.getSQLState().startsWith("40"))) {
                return false;
            }
        }
        return true;
    }
}
