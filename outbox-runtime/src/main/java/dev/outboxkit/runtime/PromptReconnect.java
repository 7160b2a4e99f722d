package dev.outboxkit.runtime;

import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.time.Duration;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * Not API: where {@link ConnectionPools}' pools get their connections. While the database cannot be reached
 * (SQLState class 08: refused, reset, no route) it tries again every {@link #RETRY}, for up to {@code window}, before
 * it reports the failure to the pool. HikariCP's own retries back off to 5 s apart, which kept a relay not ready for
 * up to 5 s after the database returned (readiness promises 2 s). Any other failure (a wrong password, a missing
 * database) is reported at once.
 */
final class PromptReconnect implements DataSource {

    static final Duration RETRY = Duration.ofMillis(250);

    private final DataSource delegate;
    private final Duration window;

    PromptReconnect(DataSource delegate, Duration window) {
        this.delegate = delegate;
        this.window = window;
    }

    @Override
    public Connection getConnection() throws SQLException {
        return retrying(delegate::getConnection);
    }

    @Override
    public Connection getConnection(String username, String password) throws SQLException {
        return retrying(() -> delegate.getConnection(username, password));
    }

    /** One attempt straight from the driver, never retried (a caller with a retry rule of its own). */
    Connection connectOnce(String username, String password) throws SQLException {
        return username == null ? delegate.getConnection() : delegate.getConnection(username, password);
    }

    private Connection retrying(Attempt attempt) throws SQLException {
        long deadline = System.nanoTime() + window.toNanos();
        while (true) {
            try {
                return attempt.connect();
            } catch (SQLException e) {
                if (!unreachable(e) || System.nanoTime() + RETRY.toNanos() > deadline) {
                    throw e;
                }
                try {
                    Thread.sleep(RETRY.toMillis());
                } catch (InterruptedException stop) { // the pool is closing
                    Thread.currentThread().interrupt();
                    throw e;
                }
            }
        }
    }

    /** One connection attempt. */
    @FunctionalInterface
    private interface Attempt {
        Connection connect() throws SQLException;
    }

    /** The database did not answer (SQLState class 08), as opposed to answering no. */
    static boolean unreachable(SQLException e) {
        return e.getSQLState() != null && e.getSQLState().startsWith("08");
    }

    @Override
    public PrintWriter getLogWriter() throws SQLException {
        return delegate.getLogWriter();
    }

    @Override
    public void setLogWriter(PrintWriter out) throws SQLException {
        delegate.setLogWriter(out);
    }

    @Override
    public void setLoginTimeout(int seconds) throws SQLException {
        delegate.setLoginTimeout(seconds);
    }

    @Override
    public int getLoginTimeout() throws SQLException {
        return delegate.getLoginTimeout();
    }

    @Override
    public Logger getParentLogger() throws SQLFeatureNotSupportedException {
        return delegate.getParentLogger();
    }

    @Override
    public <T> T unwrap(Class<T> iface) throws SQLException {
        return iface.isInstance(this) ? iface.cast(this) : delegate.unwrap(iface);
    }

    @Override
    public boolean isWrapperFor(Class<?> iface) throws SQLException {
        return iface.isInstance(this) || delegate.isWrapperFor(iface);
    }
}
