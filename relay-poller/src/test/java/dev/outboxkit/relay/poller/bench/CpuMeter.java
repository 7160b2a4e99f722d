package dev.outboxkit.relay.poller.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Stream;

/**
 * CPU time by component: this JVM's threads grouped by name (relay, Kafka producer, Kafka broker,
 * everything else) and one PostgreSQL server (its postmaster and children, from /proc). On a
 * machine shared with other work, CPU time per event is a steadier measure than wall time.
 */
final class CpuMeter {

    private static final long TICK_NANOS = 10_000_000L; // USER_HZ = 100 on Linux

    private final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    private final long postmaster;

    CpuMeter(long anyBackendPid) {
        this.postmaster = parentOf(anyBackendPid);
        threads.setThreadCpuTimeEnabled(true);
    }

    /** Cumulative CPU nanos per component. */
    Map<String, Long> snapshot() {
        Map<String, Long> out = new LinkedHashMap<>();
        out.put("relay", 0L);
        out.put("producer", 0L);
        out.put("broker", 0L);
        out.put("other JVM", 0L);
        for (ThreadInfo t : threads.getThreadInfo(threads.getAllThreadIds())) {
            if (t == null) {
                continue;
            }
            long cpu = threads.getThreadCpuTime(t.getThreadId());
            if (cpu < 0) {
                continue;
            }
            out.merge(group(t.getThreadName()), cpu, Long::sum);
        }
        out.put("PostgreSQL", postgresNanos());
        return out;
    }

    private static String group(String thread) {
        if (thread.startsWith("outbox-poll") || thread.startsWith("bench-pg")) {
            return "relay";
        }
        if (thread.startsWith("kafka-producer-network-thread")) {
            return "producer";
        }
        if (thread.startsWith("main")) {
            return "relay";
        }
        if (thread.contains("kafka") || thread.contains("data-plane") || thread.contains("controller")
                || thread.contains("broker") || thread.contains("raft") || thread.contains("quorum")
                || thread.contains("log-cleaner") || thread.contains("ReplicaFetcher") || thread.contains("metadata")) {
            return "broker";
        }
        return "other JVM";
    }

    private long postgresNanos() {
        long ticks = stat(postmaster, true);
        try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
            for (Path p : (Iterable<Path>) procs::iterator) {
                String name = p.getFileName().toString();
                if (name.chars().allMatch(Character::isDigit) && parentOf(Long.parseLong(name)) == postmaster) {
                    ticks += stat(Long.parseLong(name), false);
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        return ticks * TICK_NANOS;
    }

    /** utime + stime (+ cutime + cstime: children that exited) in clock ticks; 0 when gone. */
    private static long stat(long pid, boolean withChildren) {
        try {
            String s = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            String[] f = s.substring(s.lastIndexOf(')') + 2).split(" ");
            long t = Long.parseLong(f[11]) + Long.parseLong(f[12]);
            return withChildren ? t + Long.parseLong(f[13]) + Long.parseLong(f[14]) : t;
        } catch (IOException | RuntimeException e) {
            return 0;
        }
    }

    private static long parentOf(long pid) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
                if (line.startsWith("PPid:")) {
                    return Long.parseLong(line.substring(5).trim());
                }
            }
        } catch (IOException | RuntimeException e) {
            return -1;
        }
        return -1;
    }

    /** "relay 2.1 + producer 0.8 + … = 9.9 µs/event" between two snapshots. */
    static String perEvent(Map<String, Long> before, Map<String, Long> after, long events) {
        StringBuilder out = new StringBuilder("CPU per event:");
        double total = 0;
        for (Map.Entry<String, Long> e : after.entrySet()) {
            double us = (e.getValue() - before.getOrDefault(e.getKey(), 0L)) / 1000.0 / events;
            if (us >= 0.05) {
                out.append(String.format(" %s %.2f", e.getKey(), us));
            }
            total += us;
        }
        out.append(String.format(" = %.2f us (a dedicated 2-core machine would allow about %,.0f/s)", total, 2e6 / total));
        return out.toString();
    }
}
