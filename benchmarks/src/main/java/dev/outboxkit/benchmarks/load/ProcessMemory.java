package dev.outboxkit.benchmarks.load;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/**
 * Resident memory of a process from Linux's {@code /proc/<pid>/status}: {@code VmRSS} (now) and
 * {@code VmHWM} (the peak so far). What {@code relay_rss_mb} reports for a relay running in a
 * child JVM ({@code JavaProcess#pid()}): read the peak just before stopping it.
 */
public final class ProcessMemory {

    private ProcessMemory() {
    }

    /** Current resident set of {@code pid}, MiB. */
    public static double rssMb(long pid) {
        return fieldMb(pid, "VmRSS");
    }

    /** The anonymous part of {@link #rssMb}: heaps, stacks, malloc arenas (what NMT can account for, and more). */
    public static double rssAnonMb(long pid) {
        return fieldMb(pid, "RssAnon");
    }

    /** The file-backed part of {@link #rssMb}: mapped libraries, the JDK's modules image, the CDS archive. */
    public static double rssFileMb(long pid) {
        return fieldMb(pid, "RssFile");
    }

    /** Peak resident set of {@code pid} since it started, MiB. */
    public static double peakRssMb(long pid) {
        return fieldMb(pid, "VmHWM");
    }

    static double fieldMb(long pid, String field) {
        Path status = Path.of("/proc", Long.toString(pid), "status");
        try {
            for (String line : Files.readAllLines(status)) {
                if (line.startsWith(field + ":")) {
                    return parseKb(line) / 1024.0;
                }
            }
        } catch (NoSuchFileException e) {
            throw new IllegalStateException("process " + pid + " is gone (no " + status + ")", e);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + status, e);
        }
        throw new IllegalStateException(status + " has no " + field + " line (not Linux, or a kernel thread?)");
    }

    /** {@code "VmRSS:     12345 kB"} → 12345. */
    static long parseKb(String line) {
        String[] parts = line.substring(line.indexOf(':') + 1).trim().split("\\s+");
        if (parts.length != 2 || !parts[1].equals("kB")) {
            throw new IllegalStateException("unexpected /proc status line: " + line);
        }
        return Long.parseLong(parts[0]);
    }
}
