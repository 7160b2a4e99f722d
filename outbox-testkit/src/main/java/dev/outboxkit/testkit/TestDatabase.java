package dev.outboxkit.testkit;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.Properties;
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
