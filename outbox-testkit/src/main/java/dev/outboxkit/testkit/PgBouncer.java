package dev.outboxkit.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A real PgBouncer (the machine's {@code pgbouncer}, Debian package {@code pgbouncer}) on a loopback port in front of a
 * {@link TestPostgres}, in the pool mode a test asks for, so a test proves what works through it and what is refused.
 *
 * <pre>{@code
 * try (PgBouncer bouncer = PgBouncer.builder(db.server()).poolMode(PgBouncer.PoolMode.TRANSACTION).build()) {
 *     String url = bouncer.jdbcUrl(db) + "?prepareThreshold=0";   // pgjdbc through transaction pooling
 *     ...
 * }
 * }</pre>
 *
 * <p><b>Authentication.</b> Clients authenticate to PgBouncer with SCRAM-SHA-256 ({@code auth_type = scram-sha-256}).
 * Every database name is routed to the server ({@code * = host=… port=…}). The server's admin user is in PgBouncer's
 * {@code auth_file} with its password, and PgBouncer looks every other role up with {@code auth_query} as that admin
 * ({@code pg_shadow}, which needs a superuser): a role made with {@link TestPostgres#createPasswordRole} (before or after
 * the start) logs in with its password, and PgBouncer logs in to the server with the same SCRAM keys. A wrong password
 * is refused by PgBouncer. Roles without a password (those the test server trusts) cannot log in through it; give such
 * a role a password, or name it with {@link Builder#user(String, String)} (an {@code auth_file} entry).
 *
 * <p><b>Root.</b> PgBouncer refuses to run as root; under root it runs in a user namespace ({@code unshare -U}) or,
 * where that is not allowed, as the {@code postgres} OS user, as {@link LocalPostgres} runs PostgreSQL.
 *
 * <p><b>Not installed.</b> {@link #requireInstalled()} (called by {@link Builder#build()}) reports a test that needs
 * PgBouncer as skipped, naming the package to install, or fails it where {@code OUTBOXKIT_REQUIRE_TOOLS=true} (CI,
 * whose {@code .ci/run} installs the package).
 *
 * <p>Otherwise PgBouncer's defaults: no {@code ignore_startup_parameters} (pgjdbc's login needs none; a URL with
 * {@code options=…} is refused, "unsupported startup parameter: options", as by a stock PgBouncer 1.18), last released
 * server session reused first. Plain TCP on both sides: it does not sit in front of a
 * {@link LocalPostgres.Builder#secure secure} server. Its log (PgBouncer's stderr) is {@link #logFile()}.
 */
public final class PgBouncer implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(PgBouncer.class);

    /** Where {@code pgbouncer} is looked for after the PATH (Debian installs it in /usr/sbin, off a user's PATH). */
    private static final List<String> SBIN = List.of("/usr/sbin", "/usr/local/sbin");

    /** PgBouncer's {@code pool_mode}: when a server connection goes back to the pool. */
    public enum PoolMode {
        /** When the client disconnects: a client keeps one server session for its life. */
        SESSION,
        /** When a transaction ends: consecutive transactions of one client may run on different server sessions. */
        TRANSACTION,
        /** After every statement; transactions of several statements are refused. */
        STATEMENT;

        String setting() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    private final TestPostgres server;
    private final PoolMode mode;
    private final Path dir;
    private final Path logFile;
    private final int port;
    private final Process process;
    private final Thread stopOnExit;

    private PgBouncer(Builder b, Path executable) {
        this.server = b.server;
        this.mode = b.mode;
        try {
            dir = Files.createTempDirectory("outboxkit-pgbouncer-");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a directory for PgBouncer: " + e.getMessage(), e);
        }
        logFile = dir.resolve("pgbouncer.log");
        Process started = null;
        int chosen = 0;
        // a free port may be taken by another process before PgBouncer binds it: then try another (not a given one)
        for (int attempt = 1; started == null; attempt++) {
            chosen = b.port > 0 ? b.port : Ports.free();
            try {
                started = start(b, executable, chosen);
            } catch (IllegalStateException e) {
                if (b.port > 0 || attempt == 3 || !log().contains("Address already in use")) {
                    Dirs.deleteTree(dir);
                    throw e;
                }
            }
        }
        this.port = chosen;
        this.process = started;
        stopOnExit = new Thread(process::destroy, "outboxkit-pgbouncer-stop");
        Runtime.getRuntime().addShutdownHook(stopOnExit);
        log.info("{} started", describe());
    }

    /** A PgBouncer in front of {@code server}; {@link Builder#build()} starts it. */
    public static Builder builder(TestPostgres server) {
        return new Builder(Objects.requireNonNull(server, "server"));
    }

    /** Settings of a {@link PgBouncer}. */
    public static final class Builder {

        private final TestPostgres server;
        private PoolMode mode = PoolMode.TRANSACTION;
        private int port;
        private int poolSize = 20;
        private int maxClientConnections = 200;
        private final Map<String, String> users = new LinkedHashMap<>();
        private final Map<String, String> settings = new LinkedHashMap<>();

        private Builder(TestPostgres server) {
            this.server = server;
        }

        /** {@code pool_mode}; default {@link PoolMode#TRANSACTION}, the mode most fleets run. */
        public Builder poolMode(PoolMode mode) {
            this.mode = Objects.requireNonNull(mode, "mode");
            return this;
        }

        /** Port on 127.0.0.1; 0 (default) picks a free one. */
        public Builder port(int port) {
            this.port = Ports.check("port", port);
            return this;
        }

        /**
         * {@code default_pool_size}: server connections per database and user; default 20. A pool of 1 makes every
         * client of a database and user share one server session, which makes pooling effects deterministic.
         */
        public Builder poolSize(int poolSize) {
            if (poolSize < 1) {
                throw new IllegalArgumentException("poolSize must be at least 1, got " + poolSize);
            }
            this.poolSize = poolSize;
            return this;
        }

        /** {@code max_client_conn}: client connections PgBouncer accepts in all; default 200. */
        public Builder maxClientConnections(int maxClientConnections) {
            if (maxClientConnections < 1) {
                throw new IllegalArgumentException("maxClientConnections must be at least 1, got " + maxClientConnections);
            }
            this.maxClientConnections = maxClientConnections;
            return this;
        }

        /**
         * An {@code auth_file} entry: {@code role} logs in with {@code password} (checked by PgBouncer, which logs in to
         * the server with it). Needed only for roles that {@code auth_query} cannot find (a server whose admin is not
         * a superuser) or that have no password on the server.
         */
        public Builder user(String role, String password) {
            users.put(Objects.requireNonNull(role, "role"), Objects.requireNonNull(password, "password"));
            return this;
        }

        /**
         * Any other {@code [pgbouncer]} setting, after the fixture's own (for example {@code server_round_robin=1},
         * {@code min_pool_size}, {@code reserve_pool_size}).
         */
        public Builder setting(String name, String value) {
            if (!name.matches("[a-z_]+") || value.contains("\n")) {
                throw new IllegalArgumentException("not a PgBouncer setting: " + name + " = " + value);
            }
            settings.put(name, value);
            return this;
        }

        /**
         * Writes the configuration and starts PgBouncer; returns once it accepts connections.
         *
         * @throws IllegalStateException when PgBouncer exits or does not listen within 30 s (its log in the message)
         */
        public PgBouncer build() {
            if (server.checksEveryPassword()) {
                throw new IllegalStateException("the PgBouncer fixture connects to the server over plain TCP; "
                        + server.describe() + " takes TLS only");
            }
            return new PgBouncer(this, requireInstalled());
        }
    }

    /**
     * The {@code pgbouncer} executable (on the PATH, else in /usr/sbin or /usr/local/sbin). When it is missing the
     * calling test is reported skipped with the command that installs it; where {@code OUTBOXKIT_REQUIRE_TOOLS=true}
     * it fails instead.
     */
    public static Path requireInstalled() {
        return RequiredTools.require("pgbouncer", "pgbouncer", SBIN);
    }

    /** {@link #requireInstalled()} looking in {@code dirs}; {@code required}: fail rather than skip. */
    static Path requireInstalled(List<String> dirs, boolean required) {
        return RequiredTools.require("pgbouncer", "pgbouncer", dirs, SBIN, required);
    }

    private Process start(Builder b, Path executable, int port) {
        try {
            Path config = dir.resolve("pgbouncer.ini");
            Path authFile = dir.resolve("userlist.txt");
            Map<String, String> users = new LinkedHashMap<>();
            users.put(server.adminUser(), server.adminPassword());
            users.putAll(b.users);
            StringBuilder userList = new StringBuilder();
            users.forEach((role, password) -> userList.append(quoted(role)).append(' ').append(quoted(password)).append('\n'));
            Files.writeString(authFile, userList, StandardCharsets.UTF_8);
            Files.setPosixFilePermissions(authFile, PosixFilePermissions.fromString("rw-------"));

            Map<String, String> settings = new LinkedHashMap<>();
            settings.put("listen_addr", "127.0.0.1");
            settings.put("listen_port", Integer.toString(port));
            settings.put("unix_socket_dir", "");
            settings.put("pool_mode", mode.setting());
            settings.put("auth_type", "scram-sha-256");
            settings.put("auth_file", authFile.toString());
            settings.put("auth_user", server.adminUser());
            settings.put("auth_query", "SELECT usename, passwd FROM pg_catalog.pg_shadow WHERE usename = $1");
            settings.put("admin_users", server.adminUser());
            settings.put("default_pool_size", Integer.toString(b.poolSize));
            settings.put("max_client_conn", Integer.toString(b.maxClientConnections));
            settings.putAll(b.settings);
            StringBuilder ini = new StringBuilder("[databases]\n* = host=" + server.host() + " port=" + server.port() + "\n");
            ini.append("\n[pgbouncer]\n");
            settings.forEach((k, v) -> ini.append(k).append(" = ").append(v).append('\n'));
            Files.writeString(config, ini, StandardCharsets.UTF_8);
            if (PostgresBinaries.needsChownToPostgres()) {
                run(List.of("chown", "-R", "postgres", dir.toString()));
            }

            List<String> command = new ArrayList<>(PostgresBinaries.serverUserPrefix());
            command.add(executable.toString());
            command.add(config.toString());
            Files.deleteIfExists(logFile);
            Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(logFile.toFile()).start();
            awaitListening(p, port);
            return p;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start PgBouncer in " + dir + ": " + e.getMessage(), e);
        }
    }

    /** An auth_file field: double quotes, a quote inside doubled. */
    private static String quoted(String value) {
        return "\"" + value.replace("\"", "\"\"") + "\"";
    }

    private void awaitListening(Process p, int port) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            if (!p.isAlive()) {
                throw new IllegalStateException("PgBouncer exited (status " + p.exitValue() + ") on port " + port
                        + " in front of " + server.describe() + ":\n" + log());
            }
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", port), 1000);
                return;
            } catch (IOException notYet) {
                // not listening yet
            }
            if (System.nanoTime() > deadline) {
                p.destroyForcibly();
                throw new IllegalStateException("PgBouncer did not listen on 127.0.0.1:" + port + " within 30 s:\n" + log());
            }
            try {
                // spaces out connection attempts to a process that is starting; the condition is the connect above
                TimeUnit.MILLISECONDS.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                p.destroyForcibly();
                throw new IllegalStateException("interrupted while PgBouncer started", e);
            }
        }
    }

    private static void run(List<String> command) throws IOException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        try {
            if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IOException(String.join(" ", command) + " failed: " + out);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted: " + String.join(" ", command), e);
        }
    }

    /** Always 127.0.0.1. */
    public String host() {
        return "127.0.0.1";
    }

    public int port() {
        return port;
    }

    public PoolMode poolMode() {
        return mode;
    }

    /** The server it pools connections to. */
    public TestPostgres server() {
        return server;
    }

    /** {@code jdbc:postgresql://127.0.0.1:<port>/<database>}, no parameters: add the ones the client needs. */
    public String jdbcUrl(String database) {
        return "jdbc:postgresql://" + host() + ":" + port + "/" + database;
    }

    /** {@link #jdbcUrl(String)} of {@code db}'s database. */
    public String jdbcUrl(TestDatabase db) {
        return jdbcUrl(db.name());
    }

    /** PgBouncer's log (its stderr), for a failing test's message. */
    public Path logFile() {
        return logFile;
    }

    private String log() {
        try {
            return Files.exists(logFile) ? Files.readString(logFile, StandardCharsets.UTF_8) : "(no log)";
        } catch (IOException e) {
            return "(cannot read " + logFile + ": " + e.getMessage() + ")";
        }
    }

    /** One line for logs: mode, address and server. */
    public String describe() {
        return "PgBouncer (pool_mode=" + mode.setting() + ") on 127.0.0.1:" + port + " in front of " + server.describe();
    }

    /** Stops PgBouncer (SIGTERM: it closes every connection at once) and deletes its files. */
    @Override
    public void close() {
        try {
            process.destroy();
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        } finally {
            Dirs.deleteTree(dir);
            try {
                Runtime.getRuntime().removeShutdownHook(stopOnExit);
            } catch (IllegalStateException e) {
                // the JVM is exiting already
            }
        }
    }

    @Override
    public String toString() {
        return describe();
    }
}
