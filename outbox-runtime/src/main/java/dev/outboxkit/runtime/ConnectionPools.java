package dev.outboxkit.runtime;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.util.DriverDataSource;
import dev.outboxkit.core.Secret;
import java.time.Duration;

/**
 * Not API: shared by the relays and the CLI.
 *
 * <p>The one way outboxkit opens a HikariCP pool of its own, so the polling relay, the CDC relay and the CLI
 * wait as long for a connection, name their sessions the same way and never print a password.
 */
public final class ConnectionPools {

    /** How long a caller waits for a connection before the pool gives up (and says so, with its counts). */
    public static final Duration CONNECTION_TIMEOUT = Duration.ofSeconds(10);

    private ConnectionPools() {
    }

    /**
     * A pool of up to {@code maxSize} connections (one kept idle) for {@code login}. It connects lazily: an
     * unreachable database fails the first {@code getConnection()}, where the caller can say what to check,
     * not the constructor. {@code applicationName} becomes the sessions' {@code application_name} unless the
     * URL sets {@code ApplicationName}; TCP keepalive is on ({@code tcpKeepAlive=true}) unless the URL says
     * {@code tcpKeepAlive=false}.
     *
     * @throws IllegalStateException when HikariCP refuses the configuration (the URL masked in the message)
     */
    public static HikariDataSource open(DatabaseLogin login, String poolName, int maxSize, String applicationName) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(login.jdbcUrl());
        if (login.user() != null) {
            config.setUsername(login.user());
        }
        if (login.password() != null) {
            config.setPassword(login.password().reveal());
        }
        config.setPoolName(poolName);
        config.setMaximumPoolSize(maxSize);
        config.setMinimumIdle(Math.min(1, maxSize));
        config.setConnectionTimeout(CONNECTION_TIMEOUT.toMillis());
        config.setInitializationFailTimeout(-1);
        // TCP keepalive probes on every session (the URL's tcpKeepAlive wins: the driver prefers it to a property), so
        // that a connection to a server gone without a FIN (lost node, partition) is detected by the OS and not
        // only by a statement's timeout; the server's own settings (tcp_keepalives_*, tcp_user_timeout) end this
        // relay's sessions when it is the one that vanished: docs/runbook.md.
        config.addDataSourceProperty("tcpKeepAlive", "true");
        if (!login.urlNamesApplication()) {
            config.addDataSourceProperty("ApplicationName", applicationName);
        }
        try {
            // The pool connects (with the user and password above) through PromptReconnect; half the callers' wait,
            // so that the pool learns why it cannot connect before they give up, and can say so.
            DriverDataSource driver = new DriverDataSource(login.jdbcUrl(), null, config.getDataSourceProperties(), null, null);
            config.setDataSource(new PromptReconnect(driver, CONNECTION_TIMEOUT.dividedBy(2)));
            return new HikariDataSource(config);
        } catch (RuntimeException e) {
            throw new IllegalStateException("cannot open connection pool " + poolName + " for "
                    + Secret.maskUrl(login.jdbcUrl()) + ": " + Secret.maskUrl(String.valueOf(e.getMessage())), e);
        }
    }
}
