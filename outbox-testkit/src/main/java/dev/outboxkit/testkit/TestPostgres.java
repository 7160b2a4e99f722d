package dev.outboxkit.testkit;

import dev.outboxkit.core.Identifiers;
import dev.outboxkit.sql.Migrations;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A PostgreSQL server for tests. Which one is chosen by {@link OutboxTestkit}: embedded 17
 * (default), the machine's own binaries, an external server or Testcontainers. Every test asks
 * for a {@link #newDatabase() database of its own}, cloned from a template that already holds
 * the outboxkit schema, so tests neither see each other nor pay for migrations.
 */
public abstract class TestPostgres implements AutoCloseable {

    private static final AtomicInteger COUNTER = new AtomicInteger();
    private final String prefix = "t" + ProcessHandle.current().pid() + "_";
    private final String template = "outboxkit_tpl_" + ProcessHandle.current().pid();
    private volatile boolean templateReady;

    /** host:port form, e.g. {@code jdbc:postgresql://127.0.0.1:5432/}. */
    protected abstract String baseUrl();

    /** A superuser (or a role with CREATEDB and REPLICATION). */
    public abstract String adminUser();

    public abstract String adminPassword();

    /** One line for logs: kind, version, address. */
    public abstract String describe();

    public String jdbcUrl(String database) {
        return baseUrl() + database;
    }

    /** The host clients connect to (the first one when the URL names several). */
    public String host() {
        String hostPort = hostAndPort();
        int colon = hostPort.lastIndexOf(':');
        return colon < 0 ? hostPort : hostPort.substring(0, colon);
    }

    /** The port clients connect to (5432 when the URL names none). */
    public int port() {
        String hostPort = hostAndPort();
        int colon = hostPort.lastIndexOf(':');
        return colon < 0 || hostPort.endsWith("]") ? 5432 : Integer.parseInt(hostPort.substring(colon + 1));
    }

    private String hostAndPort() {
        String rest = baseUrl().substring("jdbc:postgresql://".length());
        int end = rest.indexOf('/');
        String hosts = end < 0 ? rest : rest.substring(0, end);
        int comma = hosts.indexOf(',');
        return comma < 0 ? hosts : hosts.substring(0, comma);
    }

    /** PostgreSQL's major version, e.g. 17. */
    public int majorVersion() {
        try (Connection c = connectAdmin("postgres"); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SHOW server_version_num")) {
            rs.next();
            return Integer.parseInt(rs.getString(1)) / 10000;
        } catch (SQLException e) {
            throw new IllegalStateException("cannot read the server version of " + describe(), e);
        }
    }

    public Connection connectAdmin(String database) throws SQLException {
        Properties props = new Properties();
        props.setProperty("user", adminUser());
        props.setProperty("password", adminPassword());
        return DriverManager.getConnection(jdbcUrl(database), props);
    }

    /** A new, empty database called {@code name} (a validated identifier), owned by the admin user. */
    public TestDatabase createDatabase(String name) {
        try (Connection c = connectAdmin("postgres"); Statement s = c.createStatement()) {
            s.execute("CREATE DATABASE " + Identifiers.quote("database", name) + " TEMPLATE template0");
        } catch (SQLException e) {
            throw new IllegalStateException("cannot create database " + name + " on " + describe(), e);
        }
        return new TestDatabase(this, name, jdbcUrl(name), adminUser(), adminPassword());
    }

    /** A new, empty database (no outboxkit schema). */
    public TestDatabase newEmptyDatabase() {
        return create("template0");
    }

    /** A new database with the outboxkit schema applied in {@code public}. */
    public TestDatabase newDatabase() {
        ensureTemplate();
        return create(template);
    }

    /** Drops a database made here, ending its sessions first. */
    public void drop(TestDatabase db) {
        db.close();
        try (Connection c = connectAdmin("postgres"); Statement s = c.createStatement()) {
            s.execute("DROP DATABASE IF EXISTS " + Identifiers.quote("database", db.name()) + " WITH (FORCE)");
        } catch (SQLException e) {
            throw new IllegalStateException("cannot drop " + db.name(), e);
        }
    }

    private TestDatabase create(String template) {
        String name = prefix + COUNTER.incrementAndGet();
        try (Connection c = connectAdmin("postgres"); Statement s = c.createStatement()) {
            s.execute("CREATE DATABASE " + Identifiers.quote("database", name) + " TEMPLATE "
                    + Identifiers.quote("template", template));
        } catch (SQLException e) {
            throw new IllegalStateException("cannot create test database " + name + " on " + describe(), e);
        }
        return new TestDatabase(this, name, jdbcUrl(name), adminUser(), adminPassword());
    }

    private synchronized void ensureTemplate() {
        if (templateReady) {
            return;
        }
        try (Connection c = connectAdmin("postgres"); Statement s = c.createStatement()) {
            s.execute("DROP DATABASE IF EXISTS " + template);
            s.execute("CREATE DATABASE " + template + " TEMPLATE template0");
        } catch (SQLException e) {
            throw new IllegalStateException("cannot create the template database on " + describe(), e);
        }
        try (TestDatabase db = new TestDatabase(this, template, jdbcUrl(template), adminUser(), adminPassword())) {
            Migrations.migrate(db.dataSource(), Migrations.DEFAULT_SCHEMA);
        }
        templateReady = true;
    }

    /** Stops the server (and removes its files when this process made them). */
    @Override
    public abstract void close();
}
