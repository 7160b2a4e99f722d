package dev.outboxkit.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A server from the machine's own PostgreSQL binaries ({@code initdb}, {@code pg_ctl} on the
 * PATH or in {@code outboxkit.test.postgres.bin}), in a temporary data directory. PostgreSQL
 * refuses to run as root, so under root it runs as the {@code postgres} OS user.
 */
public final class LocalPostgres extends TestPostgres {

    private final Path dataDir;
    private final String binDir;
    private final int port;
    private final boolean asPostgresUser;

    LocalPostgres(String binDir, int port, boolean durable) {
        this.binDir = binDir;
        this.asPostgresUser = "root".equals(System.getProperty("user.name"));
        try {
            this.port = port > 0 ? port : freePort();
            dataDir = Files.createTempDirectory("outboxkit-pg-");
            if (asPostgresUser) {
                run(List.of("chown", "postgres", dataDir.toString()), false);
            }
            run(List.of(bin("initdb"), "-D", dataDir.toString(), "-U", "postgres", "--auth=trust", "-E", "UTF8",
                    "--no-sync", "--locale=C"), true);
            StringBuilder conf = new StringBuilder("\n# outboxkit test settings\nport = " + this.port + "\n");
            for (Map.Entry<String, String> e : PostgresSettings.forTests(durable).entrySet()) {
                conf.append(e.getKey()).append(" = '").append(e.getValue()).append("'\n");
            }
            conf.append("unix_socket_directories = '").append(dataDir).append("'\n");
            Files.writeString(dataDir.resolve("postgresql.conf"), conf,
                    java.nio.file.StandardOpenOption.APPEND);
            start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start local PostgreSQL from " + binDir + ": " + e.getMessage(), e);
        }
    }

    /** Starts the server on its data directory (again, after {@link #stopImmediately()}). */
    public void start() {
        run(List.of(bin("pg_ctl"), "-D", dataDir.toString(), "-l", dataDir.resolve("server.log").toString(),
                "-w", "-t", "60", "start"), true);
    }

    /** {@code pg_ctl stop -m immediate}: a crash as far as PostgreSQL can tell. */
    public void stopImmediately() {
        run(List.of(bin("pg_ctl"), "-D", dataDir.toString(), "-m", "immediate", "-w", "stop"), true);
    }

    private String bin(String tool) {
        return binDir == null || binDir.isEmpty() ? tool : Path.of(binDir, tool).toString();
    }

    private void run(List<String> command, boolean asServerUser) {
        List<String> full = new ArrayList<>();
        if (asServerUser && asPostgresUser) {
            full.addAll(List.of("runuser", "-u", "postgres", "--"));
        }
        full.addAll(command);
        try {
            Process p = new ProcessBuilder(full).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes());
            if (!p.waitFor(120, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException(String.join(" ", full) + " failed:\n" + out);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(String.join(" ", full) + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted: " + String.join(" ", full), e);
        }
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    @Override
    protected String baseUrl() {
        return "jdbc:postgresql://127.0.0.1:" + port + "/";
    }

    @Override
    public String adminUser() {
        return "postgres";
    }

    @Override
    public String adminPassword() {
        return "";
    }

    @Override
    public String describe() {
        return "local PostgreSQL (" + (binDir == null ? "PATH" : binDir) + ") on 127.0.0.1:" + port;
    }

    @Override
    public void close() {
        try {
            run(List.of(bin("pg_ctl"), "-D", dataDir.toString(), "-m", "fast", "-w", "stop"), true);
        } finally {
            try (Stream<Path> files = Files.walk(dataDir)) {
                files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
            } catch (IOException ignored) {
                // a leftover temp directory is harmless
            }
        }
    }
}
