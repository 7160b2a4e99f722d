package dev.outboxkit.testkit;

import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Set;

/**
 * A base backup of a running server through PostgreSQL's low-level API ({@code pg_backup_start},
 * {@code pg_backup_stop}) and a file copy, for binaries that ship no {@code pg_basebackup} (the embedded bundle). The
 * same on PostgreSQL 15 and 17. The copy alone is not consistent: the server that starts on it replays the WAL
 * from the backup's start, which it must get elsewhere (a standby streams it through a replication slot created
 * before the backup).
 */
final class BaseBackup {

    /** Folders whose contents a base backup leaves out; the folders themselves are kept, empty. */
    private static final Set<String> EMPTIED = Set.of("pg_wal", "pg_replslot", "pg_dynshmem", "pg_notify", "pg_serial",
            "pg_snapshots", "pg_stat_tmp", "pg_subtrans");

    /**
     * Files at the top of the data directory a base backup leaves out: the running server's lock and options, files
     * of an earlier backup or recovery, files mid-write, and the test kit's own server log.
     */
    private static final Set<String> LEFT_OUT = Set.of("postmaster.pid", "postmaster.opts", "backup_label",
            "tablespace_map", "backup_manifest", "standby.signal", "recovery.signal", "postgresql.auto.conf.tmp",
            "current_logfiles.tmp", "server.log");

    private BaseBackup() {
    }

    /**
     * Copies the data directory {@code from} of the server {@code c} is connected to (a superuser session) into the
     * existing, empty folder {@code to} and writes the backup's label there as {@code backup_label}.
     *
     * @throws IllegalStateException when the server has tablespaces outside its data directory (not copied)
     */
    static void take(Connection c, String label, Path from, Path to) throws SQLException, IOException {
        // one session from start to stop: a non-exclusive backup belongs to the session that started it
        Sql.execute(c, "SELECT pg_backup_start(?, true)", label);
        copy(from, to);
        String labelFile;
        String tablespaceMap;
        // false: no WAL archive to wait for; the standby streams the WAL through its slot
        try (Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT labelfile, spcmapfile FROM pg_backup_stop(false)")) {
            rs.next();
            labelFile = rs.getString(1);
            tablespaceMap = rs.getString(2);
        }
        if (tablespaceMap != null && !tablespaceMap.isBlank()) {
            throw new IllegalStateException("the server in " + from + " has tablespaces outside its data directory ("
                    + tablespaceMap.strip() + "): this base backup copies the data directory only");
        }
        Files.writeString(to.resolve("backup_label"), labelFile);
        Files.createDirectories(to.resolve("pg_wal").resolve("archive_status"));
    }

    private static void copy(Path from, Path to) throws IOException {
        Files.walkFileTree(from, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) throws IOException {
                Path relative = from.relativize(dir);
                if (isTemporary(dir)) {
                    return FileVisitResult.SKIP_SUBTREE;
                }
                Files.createDirectories(to.resolve(relative.toString()));
                boolean emptied = relative.getNameCount() == 1 && EMPTIED.contains(relative.toString());
                return emptied ? FileVisitResult.SKIP_SUBTREE : FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                Path relative = from.relativize(file);
                // sockets (the server's Unix socket lives in its data directory) and links are not data
                if (!attrs.isRegularFile() || isTemporary(file) || file.getFileName().toString().startsWith(".s.PGSQL.")
                        || file.getFileName().toString().equals("pg_internal.init")
                        || relative.getNameCount() == 1 && LEFT_OUT.contains(relative.toString())) {
                    return FileVisitResult.CONTINUE;
                }
                try {
                    Files.copy(file, to.resolve(relative.toString()), StandardCopyOption.COPY_ATTRIBUTES);
                } catch (NoSuchFileException dropped) {
                    // removed while copying (a dropped table, a finished temporary file): replaying the WAL removes it too
                }
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFileFailed(Path file, IOException e) throws IOException {
                if (e instanceof NoSuchFileException) {
                    return FileVisitResult.CONTINUE;
                }
                throw e;
            }
        });
    }

    /** Temporary files and folders of queries ({@code pgsql_tmp...}) are never backed up. */
    private static boolean isTemporary(Path path) {
        Path name = path.getFileName();
        return name != null && name.toString().startsWith("pgsql_tmp");
    }
}
