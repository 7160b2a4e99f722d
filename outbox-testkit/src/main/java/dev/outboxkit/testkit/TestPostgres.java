package dev.outboxkit.testkit;

import dev.outboxkit.core.Identifiers;
import dev.outboxkit.sql.Migrations;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
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

    /**
     * Creates login role {@code role} (a validated identifier) with {@code password} and {@code attributes} (for
     * example {@code "REPLICATION"}), and makes the server check that password: test servers trust local
     * connections, so where this server's {@code pg_hba.conf} is a file here (embedded and local servers), lines
     * requiring {@code scram-sha-256} for this role, replication connections included, go in front of the others
     * and the configuration is reloaded. Returns once a connection with a wrong password is refused.
     *
     * @throws IllegalStateException when the role cannot be created, or a wrong password is still accepted after 10 s
     */
    public void createPasswordRole(String role, String password, String attributes) {
        Identifiers.requireValid("role", role);
        try (Connection c = connectAdmin("postgres"); Statement s = c.createStatement()) {
            s.execute("CREATE ROLE " + Identifiers.quote("role", role) + " LOGIN " + attributes + " PASSWORD '"
                    + password.replace("'", "''") + "'");
        } catch (SQLException e) {
            throw new IllegalStateException("cannot create password role " + role + " on " + describe() + ": " + e.getMessage(), e);
        }
        if (!checksEveryPassword()) {
            requirePassword(role);
        }
        awaitPasswordChecked(jdbcUrl("postgres"), role, password, describe());
    }

    /**
     * Puts lines requiring {@code role}'s password in front of this server's {@code pg_hba.conf} (where it is a file
     * here) and reloads the configuration. A server of several nodes writes each node's file.
     */
    void requirePassword(String role) {
        try (Connection c = connectAdmin("postgres"); Statement s = c.createStatement()) {
            String hbaFile;
            try (ResultSet rs = s.executeQuery("SHOW hba_file")) {
                rs.next();
                hbaFile = rs.getString(1);
            }
            if (prependPasswordRules(Path.of(hbaFile), role)) {
                s.execute("SELECT pg_reload_conf()");
            }
        } catch (SQLException | IOException e) {
            throw new IllegalStateException("cannot require the password of role " + role + " on " + describe() + ": "
                    + e.getMessage(), e);
        }
    }

    /**
     * Puts {@code scram-sha-256} lines for {@code role} (databases and replication, TCP and Unix socket) in front of
     * {@code hba}; false, changing nothing, when {@code hba} is not a writable file here.
     */
    static boolean prependPasswordRules(Path hba, String role) throws IOException {
        if (!Files.isRegularFile(hba) || !Files.isWritable(hba)) {
            return false;
        }
        List<String> rules = new ArrayList<>();
        for (String database : List.of("all", "replication")) {
            rules.add("host " + database + " " + role + " 127.0.0.1/32 scram-sha-256");
            rules.add("host " + database + " " + role + " ::1/128 scram-sha-256");
            rules.add("local " + database + " " + role + " scram-sha-256");
        }
        Files.writeString(hba, String.join("\n", rules) + "\n" + Files.readString(hba));
        return true;
    }

    /**
     * Returns once a connection to {@code url} as {@code role} with a wrong password is refused (SQLSTATE 28P01):
     * the postmaster reloads {@code pg_hba.conf} asynchronously.
     */
    static void awaitPasswordChecked(String url, String role, String password, String server) {
        Properties wrong = new Properties();
        wrong.setProperty("user", role);
        wrong.setProperty("password", password + "-wrong");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (true) {
            try (Connection c = DriverManager.getConnection(url, wrong)) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException(server + " still accepts role " + role + " with a wrong password after"
                            + " 10 s (its pg_hba.conf trusts it)");
                }
            } catch (SQLException refused) {
                if ("28P01".equals(refused.getSQLState())) {
                    return;
                }
                throw new IllegalStateException("checking the password of " + role + " on " + server + ": "
                        + refused.getMessage(), refused);
            }
            try {
                TimeUnit.MILLISECONDS.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
            }
        }
    }

    /** True when this server's {@code pg_hba.conf} requires a password of every role already (nothing to add). */
    protected boolean checksEveryPassword() {
        return false;
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
