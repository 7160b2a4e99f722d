package dev.outboxkit.testkit;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;

/**
 * A database of its own for one test: name, URL, credentials, and a small pool that is closed
 * with the database. Created by {@link TestPostgres#newDatabase()}.
 */
public final class TestDatabase implements AutoCloseable {

    private final TestPostgres server;
    private final String name;
    private final String jdbcUrl;
    private final String user;
    private final String password;
    private volatile HikariDataSource pool;

    TestDatabase(TestPostgres server, String name, String jdbcUrl, String user, String password) {
        this.server = server;
        this.name = name;
        this.jdbcUrl = jdbcUrl;
        this.user = user;
        this.password = password;
    }

    public String name() {
        return name;
    }

    public String jdbcUrl() {
        return jdbcUrl;
    }

    /**
     * This database's URL through another address, e.g. a
     * {@link dev.outboxkit.testkit.fault.TcpFaultProxy} in front of the server.
     */
    public String jdbcUrlVia(String host, int port) {
        return "jdbc:postgresql://" + host + ":" + port + "/" + name;
    }

    public String user() {
        return user;
    }

    public String password() {
        return password;
    }

    /** The server this database lives on. */
    public TestPostgres server() {
        return server;
    }

    /** A new connection (autocommit on), outside any pool. */
    public Connection connect() throws SQLException {
        Properties props = new Properties();
        props.setProperty("user", user);
        props.setProperty("password", password);
        return DriverManager.getConnection(jdbcUrl, props);
    }

    /** {@link Sql#count(Connection, String)} on a new connection. */
    public long count(String sql) throws SQLException {
        try (Connection c = connect()) {
            return Sql.count(c, sql);
        }
    }

    /**
     * {@link Sql#count(Connection, String, Object...)} on a new connection: {@code params} bound to the
     * {@code ?} of {@code sql}, for values (a slot's name) that are not to be spliced into the SQL.
     */
    public long count(String sql, Object... params) throws SQLException {
        try (Connection c = connect()) {
            return Sql.count(c, sql, params);
        }
    }

    /** {@link Sql#exec(Connection, String...)} on a new connection (autocommit on: each statement commits). */
    public void exec(String... sql) throws SQLException {
        try (Connection c = connect()) {
            Sql.exec(c, sql);
        }
    }

    /** {@link Sql#execute(Connection, String, Object...)} on a new connection (autocommit on). */
    public void execute(String sql, Object... params) throws SQLException {
        try (Connection c = connect()) {
            Sql.execute(c, sql, params);
        }
    }

    /** {@link Sql#strings(Connection, String)} on a new connection. */
    public List<String> strings(String sql) throws SQLException {
        try (Connection c = connect()) {
            return Sql.strings(c, sql);
        }
    }

    /**
     * {@link Sql#strings(Connection, String, Object...)} on a new connection: {@code params} bound as in
     * {@link #count(String, Object...)}.
     */
    public List<String> strings(String sql, Object... params) throws SQLException {
        try (Connection c = connect()) {
            return Sql.strings(c, sql, params);
        }
    }

    /**
     * Drops the logical replication slot {@code slot} if it exists (slots are server-wide: one left
     * behind pins WAL for every later test), ending the session that streams from it first. Retried
     * for up to 30 s, since an ended walsender takes a moment to release the slot.
     *
     * @throws IllegalStateException when the slot could not be dropped in time
     */
    public void dropReplicationSlot(String slot) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            try (Connection c = connect();
                 PreparedStatement end = c.prepareStatement("SELECT pg_terminate_backend(active_pid) "
                         + "FROM pg_replication_slots WHERE slot_name = ? AND active");
                 PreparedStatement drop = c.prepareStatement("SELECT pg_drop_replication_slot(slot_name) "
                         + "FROM pg_replication_slots WHERE slot_name = ?")) {
                end.setString(1, slot);
                end.executeQuery().close();
                drop.setString(1, slot);
                drop.executeQuery().close();
                return;
            } catch (SQLException e) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("cannot drop replication slot " + slot + " in " + name + ": "
                            + e.getMessage(), e);
                }
                try {
                    TimeUnit.MILLISECONDS.sleep(200);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    /** A shared pool of up to 10 connections, created on first use. */
    public DataSource dataSource() {
        HikariDataSource p = pool;
        if (p == null) {
            synchronized (this) {
                if (pool == null) {
                    pool = newPool(10);
                }
                p = pool;
            }
        }
        return p;
    }

    /** A new pool of your own (close it yourself). */
    public HikariDataSource newPool(int size) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(jdbcUrl);
        config.setUsername(user);
        config.setPassword(password);
        config.setMaximumPoolSize(size);
        config.setMinimumIdle(0);
        config.setPoolName("test-" + name);
        config.setConnectionTimeout(10_000);
        return new HikariDataSource(config);
    }

    @Override
    public void close() {
        HikariDataSource p = pool;
        if (p != null) {
            p.close();
        }
    }

    @Override
    public String toString() {
        return "TestDatabase[" + name + " on " + server.describe() + "]";
    }
}
