package dev.outboxkit.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A PostgreSQL server this test owns outright: its own data directory and port, driven with
 * {@code initdb} / {@code pg_ctl}, so it can crash and come back. The binaries are the
 * PostgreSQL 17 bundle on the class path (default: nothing to install) or the machine's own
 * ({@code initdb}, {@code pg_ctl} on the PATH or in a given folder, e.g. PostgreSQL 15 here).
 *
 * <pre>{@code
 * try (LocalPostgres pg = LocalPostgres.builder().embeddedBinaries().build()) {
 *     TestDatabase db = pg.newDatabase();          // outboxkit schema applied
 *     pg.stopImmediately();                        // pg_ctl stop -m immediate: a crash
 *     pg.start();                                  // crash recovery, same port and data
 * }
 * }</pre>
 *
 * <p>PostgreSQL refuses to run as root; under root the tools run in a user namespace
 * ({@code unshare -U}) or, where that is not allowed, as the {@code postgres} OS user.
 * Synchronous commit stays on, so a transaction whose COMMIT returned survives
 * {@link #stopImmediately()} (fsync is off unless {@code durable}: that only matters when the
 * machine itself crashes).
 */
public final class LocalPostgres extends TestPostgres {

    private static final Logger log = LoggerFactory.getLogger(LocalPostgres.class);

    private final Path dataDir;
    private final Path binDir;
    private final int port;
    /** Names the server in logs and errors when it is one of several (a node of a {@code ReplicatedPostgres}). */
    private final String name;
    private final Thread stopOnExit;
    /** Null: trusts local connections. Else TLS and passwords only (see {@link Builder#secure}). */
    private final TestCertificates certificates;
    private final String adminPassword;

    /** A server over {@code dataDir}, which holds a cluster already; registers the shutdown hook, starts nothing. */
    private LocalPostgres(String name, Path binDir, Path dataDir, int port, TestCertificates certificates,
                          String adminPassword) {
        this.name = name;
        this.binDir = binDir;
        this.dataDir = dataDir;
        this.port = port;
        this.certificates = certificates;
        this.adminPassword = adminPassword;
        stopOnExit = new Thread(this::stopQuietly, "outboxkit-local-postgres-stop");
        Runtime.getRuntime().addShutdownHook(stopOnExit);
    }

    /** Runs initdb in a new temporary data directory, writes the settings and starts the server. */
    private static LocalPostgres initdbAndStart(Builder b) {
        TestCertificates certificates = b.certificates;
        String adminPassword = certificates == null ? "" : "pg-" + Long.toHexString(new java.security.SecureRandom().nextLong());
        int port = b.port > 0 ? b.port : Ports.free();
        Path dataDir;
        try {
            dataDir = Files.createTempDirectory("outboxkit-pg-");
            List<String> initdb = new ArrayList<>(List.of(bin(b.binDir, "initdb"), "-D", dataDir.toString(), "-U", "postgres",
                    "-E", "UTF8", "--no-sync", "--locale=C"));
            Path passwordFile = null;
            if (certificates == null) {
                initdb.add("--auth=trust");
            } else {
                passwordFile = Files.createTempFile("outboxkit-pg-pw-", "");
                Files.writeString(passwordFile, adminPassword + "\n");
                initdb.addAll(List.of("--auth=scram-sha-256", "--pwfile=" + passwordFile));
            }
            if (PostgresBinaries.needsChownToPostgres()) {
                run(List.of("chown", "postgres", dataDir.toString()), false, dataDir);
                if (passwordFile != null) {
                    run(List.of("chown", "postgres", passwordFile.toString()), false, dataDir);
                }
            }
            try {
                run(initdb, true, dataDir);
            } finally {
                if (passwordFile != null) {
                    Files.deleteIfExists(passwordFile);
                }
            }
            Map<String, String> settings = new LinkedHashMap<>(PostgresSettings.forTests(b.durable));
            if (certificates != null) {
                secureDataDirectory(dataDir, certificates, settings);
            }
            settings.putAll(b.serverConfig);
            appendSettings(dataDir, port, "outboxkit test settings", settings);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a PostgreSQL data directory with " + describeBinaries(b.binDir)
                    + ": " + e.getMessage(), e);
        }
        LocalPostgres pg = new LocalPostgres(b.name, b.binDir, dataDir, port, certificates, adminPassword);
        pg.start();
        return pg;
    }

    /**
     * A server over {@code dataDir}, a cluster the caller prepared (a base backup of another server), on
     * {@code port}: appends {@code port}, the Unix socket folder (the data directory) and {@code settings} to its
     * {@code postgresql.conf} under a comment naming {@code purpose}. Not started; {@link #close()} deletes
     * {@code dataDir}. Trusts local connections as the server it was copied from does.
     */
    static LocalPostgres overDataDirectory(String name, Path binDir, Path dataDir, int port, String purpose,
                                           Map<String, String> settings) {
        try {
            if (PostgresBinaries.needsChownToPostgres()) {
                run(List.of("chown", "-R", "postgres", dataDir.toString()), false, dataDir);
            }
            appendSettings(dataDir, port, purpose, settings);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot configure the PostgreSQL data directory " + dataDir + ": "
                    + e.getMessage(), e);
        }
        return new LocalPostgres(name, binDir, dataDir, port, null, "");
    }

    /** Appends settings to {@code postgresql.conf}; later lines win, so these override what the file held. */
    private static void appendSettings(Path dataDir, int port, String purpose, Map<String, String> settings)
            throws IOException {
        StringBuilder conf = new StringBuilder("\n# " + purpose + "\nport = " + port + "\n");
        settings.forEach((k, v) -> conf.append(k).append(" = '").append(v.replace("'", "''")).append("'\n"));
        conf.append("unix_socket_directories = '").append(dataDir).append("'\n");
        Files.writeString(dataDir.resolve("postgresql.conf"), conf, StandardOpenOption.APPEND);
    }

    /**
     * TLS with the run's server certificate ({@code ssl=on}) and a {@code pg_hba.conf} of {@code hostssl ...
     * scram-sha-256} lines only (databases and replication, 127.0.0.1 and ::1): no trust, no plain TCP, no Unix
     * socket. The superuser gets a password.
     */
    private static void secureDataDirectory(Path dataDir, TestCertificates certificates, Map<String, String> settings)
            throws IOException {
        Files.copy(certificates.serverCertificate(), dataDir.resolve("server.crt"));
        Files.copy(certificates.serverKey(), dataDir.resolve("server.key"));
        Files.setPosixFilePermissions(dataDir.resolve("server.key"),
                java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        if (PostgresBinaries.needsChownToPostgres()) {
            run(List.of("chown", "postgres", dataDir.resolve("server.crt").toString(),
                    dataDir.resolve("server.key").toString()), false, dataDir);
        }
        settings.put("ssl", "on");
        settings.put("ssl_cert_file", "server.crt");
        settings.put("ssl_key_file", "server.key");
        settings.put("password_encryption", "scram-sha-256");
        List<String> hba = new ArrayList<>(List.of("# outboxkit secure test server: TLS and SCRAM only"));
        for (String database : List.of("all", "replication")) {
            hba.add("hostssl " + database + " all 127.0.0.1/32 scram-sha-256");
            hba.add("hostssl " + database + " all ::1/128 scram-sha-256");
        }
        Files.writeString(dataDir.resolve("pg_hba.conf"), String.join("\n", hba) + "\n");
    }

    /** For {@link OutboxTestkit}: the machine's binaries from {@code binDir} (null or empty: the PATH). */
    static LocalPostgres machine(String binDir, int port, boolean durable) {
        return builder().binDirectory(binDir == null || binDir.isEmpty() ? null : Path.of(binDir)).port(port)
                .durable(durable).build();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Settings of a {@link LocalPostgres}; {@link #build()} runs initdb and starts the server. */
    public static final class Builder {

        private Path binDir;
        private String name;
        private boolean embedded = true;
        private int port;
        private boolean durable;
        private final Map<String, String> serverConfig = new LinkedHashMap<>();
        private TestCertificates certificates;

        private Builder() {
        }

        /**
         * A server as managed PostgreSQL (RDS, Cloud SQL) is reached: {@code ssl=on} with {@code certificates}'
         * server certificate, and a {@code pg_hba.conf} of {@code hostssl ... scram-sha-256} lines only, so every
         * role needs its password and TLS. {@link #jdbcUrl} then carries {@code sslmode=verify-full} and
         * {@code sslrootcert=} the CA's PEM file; {@link #adminPassword()} is the superuser's (random) password.
         */
        public Builder secure(TestCertificates certificates) {
            this.certificates = Objects.requireNonNull(certificates, "certificates");
            return this;
        }

        /** PostgreSQL 17 from the zonky bundle on the class path. The default. */
        public Builder embeddedBinaries() {
            this.embedded = true;
            this.binDir = null;
            return this;
        }

        /** The machine's {@code initdb}, {@code pg_ctl} and {@code postgres} on the PATH. */
        public Builder machineBinaries() {
            return binDirectory(null);
        }

        /** The machine's binaries from {@code binDir} (null: the PATH). */
        public Builder binDirectory(Path binDir) {
            this.embedded = false;
            this.binDir = binDir;
            return this;
        }

        /** Port on 127.0.0.1; 0 (default) picks a free one. It stays the same across restarts. */
        public Builder port(int port) {
            this.port = Ports.check("port", port);
            return this;
        }

        /** fsync and full-page writes on (default false: a test machine that crashes loses nothing we need). */
        public Builder durable(boolean durable) {
            this.durable = durable;
            return this;
        }

        /** An extra {@code postgresql.conf} setting, after the test defaults (logical WAL, 300 connections, ...). */
        public Builder serverConfig(String name, String value) {
            serverConfig.put(Objects.requireNonNull(name, "name"), Objects.requireNonNull(value, "value"));
            return this;
        }

        /** Runs initdb in a new temporary data directory and starts the server. */
        public LocalPostgres build() {
            if (embedded) {
                binDir = PostgresBinaries.embedded();
            }
            return initdbAndStart(this);
        }

        /** Names the server in logs and errors (a node of a {@code ReplicatedPostgres}). */
        Builder name(String name) {
            this.name = name;
            return this;
        }
    }

    /** Starts the server on its data directory and port (again, after {@link #stopImmediately()} or {@link #stop()}). */
    public void start() {
        long begin = System.nanoTime();
        pgCtl("-l", dataDir.resolve("server.log").toString(), "-w", "-t", "120", "start");
        log.info("{} started in {} ms", describe(), (System.nanoTime() - begin) / 1_000_000);
    }

    /**
     * {@code pg_ctl stop -m immediate}: every backend quits at once without a checkpoint, as in a
     * crash; the next {@link #start()} runs crash recovery. Clients see their connections drop.
     */
    public void stopImmediately() {
        pgCtl("-m", "immediate", "-w", "-t", "120", "stop");
        log.info("{} stopped immediately", describe());
    }

    /** {@code pg_ctl stop -m fast}: a clean shutdown. */
    public void stop() {
        pgCtl("-m", "fast", "-w", "-t", "120", "stop");
    }

    /** {@code pg_ctl promote -w}: a standby leaves recovery; returns once it accepts writes. */
    void promote() {
        pgCtl("-w", "-t", "120", "promote");
    }

    private void pgCtl(String... arguments) {
        List<String> command = new ArrayList<>(List.of(bin(binDir, "pg_ctl"), "-D", dataDir.toString()));
        command.addAll(List.of(arguments));
        run(command, true, dataDir);
    }

    /** {@code pg_ctl status}: is a postmaster running on the data directory? */
    public boolean isRunning() {
        return exec(List.of(bin(binDir, "pg_ctl"), "-D", dataDir.toString(), "status"), true).exitCode() == 0;
    }

    public Path dataDirectory() {
        return dataDir;
    }

    /** The folder of its binaries (null: the PATH). */
    Path binDirectory() {
        return binDir;
    }

    /** The server log ({@code server.log} in the data directory). */
    public Path logFile() {
        return dataDir.resolve("server.log");
    }

    private static String bin(Path binDir, String tool) {
        return binDir == null ? tool : binDir.resolve(tool).toString();
    }

    private static String describeBinaries(Path binDir) {
        return binDir == null ? "the PostgreSQL binaries on the PATH" : "the PostgreSQL binaries in " + binDir;
    }

    private record Result(int exitCode, String output) {
    }

    private static void run(List<String> command, boolean asServerUser, Path dataDir) {
        Result r = exec(command, asServerUser);
        if (r.exitCode() != 0) {
            throw new IllegalStateException(String.join(" ", command) + " failed (exit " + r.exitCode() + ") on "
                    + dataDir + ":\n" + r.output() + "\nSee " + dataDir.resolve("server.log"));
        }
    }

    private static Result exec(List<String> command, boolean asServerUser) {
        List<String> full = new ArrayList<>();
        if (asServerUser) {
            full.addAll(PostgresBinaries.serverUserPrefix());
        }
        full.addAll(command);
        try {
            // the server writes to its log file (-l), so this pipe ends when pg_ctl does
            Process p = new ProcessBuilder(full).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes());
            if (!p.waitFor(180, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException(String.join(" ", full) + " did not finish in 180 s:\n" + out);
            }
            return new Result(p.exitValue(), out);
        } catch (IOException e) {
            throw new UncheckedIOException(String.join(" ", full) + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted: " + String.join(" ", full), e);
        }
    }

    @Override
    protected String baseUrl() {
        return "jdbc:postgresql://127.0.0.1:" + port + "/";
    }

    @Override
    public int port() {
        return port;
    }

    @Override
    public String adminUser() {
        return "postgres";
    }

    @Override
    public String adminPassword() {
        return adminPassword;
    }

    /** With {@link Builder#secure}: {@code ?sslmode=verify-full&sslrootcert=<CA PEM>} after the database. */
    @Override
    public String jdbcUrl(String database) {
        return super.jdbcUrl(database) + clientTls();
    }

    /**
     * The JDBC URL parameters a client of a {@link Builder#secure secure} server needs
     * ({@code ?sslmode=verify-full&sslrootcert=...}); empty otherwise.
     */
    public String clientTls() {
        return certificates == null ? "" : "?sslmode=verify-full&sslrootcert=" + certificates.caCertificate();
    }

    @Override
    protected boolean checksEveryPassword() {
        return certificates != null;
    }

    @Override
    public String describe() {
        return (name == null ? "" : name + ": ") + "local PostgreSQL (" + (binDir == null ? "PATH" : binDir) + ")"
                + (certificates == null ? "" : " (TLS, SCRAM)") + " on 127.0.0.1:" + port;
    }

    private void stopQuietly() {
        if (Files.exists(dataDir.resolve("postmaster.pid"))) {
            exec(List.of(bin(binDir, "pg_ctl"), "-D", dataDir.toString(), "-m", "immediate", "-w", "stop"), true);
        }
    }

    /** Stops the server (fast) and deletes its data directory. */
    @Override
    public void close() {
        try {
            if (isRunning()) {
                stop();
            }
        } finally {
            Dirs.deleteTree(dataDir);
            try {
                Runtime.getRuntime().removeShutdownHook(stopOnExit);
            } catch (IllegalStateException e) {
                // the JVM is exiting already
            }
        }
    }
}
