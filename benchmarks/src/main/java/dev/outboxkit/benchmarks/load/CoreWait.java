package dev.outboxkit.benchmarks.load;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * How long runnable threads waited for a core, from Linux's per-task scheduler statistics: {@code schedstat} under
 * {@code /proc/<pid>/task/<tid>/} holds a task's time on a CPU and its time runnable on a run queue, in nanoseconds.
 * On a saturated machine a thread's work takes its CPU time plus that wait, which CPU time alone cannot show: this
 * tells a slow relay from a starved one.
 */
final class CoreWait {

    /** Linux keeps a task's name to this many bytes ({@code TASK_COMM_LEN} less its terminating zero). */
    static final int COMM_LENGTH = 15;

    private static final Path PROC = Path.of("/proc");

    private CoreWait() {
    }

    /** One task's label and its times at an instant, in nanoseconds. */
    record Task(String label, long runNanos, long waitNanos) {
    }

    /** A label's times over a window, in nanoseconds: on a CPU, and runnable but waiting for one. */
    record Use(String label, long runNanos, long waitNanos) {

        /** The share of the time its tasks were runnable that they spent waiting for a core (0..1). */
        double waitShare() {
            long runnable = runNanos + waitNanos;
            return runnable == 0 ? 0 : (double) waitNanos / runnable;
        }
    }

    /** The name Linux shows for a thread named {@code javaName} (HotSpot hands the name to the kernel, cut short). */
    static String comm(String javaName) {
        return javaName.length() <= COMM_LENGTH ? javaName : javaName.substring(0, COMM_LENGTH);
    }

    /**
     * Every thread of this JVM, labelled by {@code labelOfComm} of its kernel name, and every process of
     * {@code processes} with its label, by {@code pid/tid}. Empty when this kernel keeps no scheduler statistics.
     */
    static Map<String, Task> snapshot(Function<String, String> labelOfComm, Map<Long, String> processes) {
        Map<String, Task> tasks = new HashMap<>();
        if (!Files.exists(Path.of("/proc/self/schedstat"))) {
            return tasks;
        }
        Path self = PROC.resolve(Long.toString(ProcessHandle.current().pid())).resolve("task");
        try (DirectoryStream<Path> threads = Files.newDirectoryStream(self)) {
            for (Path thread : threads) {
                String comm = CpuBudget.readProcOrNull(thread.resolve("comm"));
                long[] times = comm == null ? null : times(CpuBudget.readProcOrNull(thread.resolve("schedstat")));
                if (times != null) {
                    tasks.put("self/" + thread.getFileName(), new Task(labelOfComm.apply(comm.strip()), times[0], times[1]));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list " + self, e);
        }
        for (var process : processes.entrySet()) {
            long[] times = times(CpuBudget.readProcOrNull(PROC.resolve(Long.toString(process.getKey())).resolve("schedstat")));
            if (times != null) {
                tasks.put(process.getKey() + "/", new Task(process.getValue(), times[0], times[1]));
            }
        }
        return tasks;
    }

    /**
     * Each label's times from {@code start} to {@code end}, most time on a CPU first. A task born in the window spent
     * all of its time in it; a task that ended in it is missing (its time is no longer readable).
     */
    static List<Use> between(Map<String, Task> start, Map<String, Task> end) {
        Map<String, long[]> sums = new HashMap<>();
        for (var entry : end.entrySet()) {
            Task now = entry.getValue();
            Task before = start.get(entry.getKey());
            long[] sum = sums.computeIfAbsent(now.label(), l -> new long[2]);
            sum[0] += now.runNanos() - (before == null ? 0 : before.runNanos());
            sum[1] += now.waitNanos() - (before == null ? 0 : before.waitNanos());
        }
        List<Use> uses = new ArrayList<>();
        sums.forEach((label, sum) -> uses.add(new Use(label, sum[0], sum[1])));
        uses.sort(Comparator.comparingLong(Use::runNanos).reversed());
        return uses;
    }

    /**
     * The first two fields of a {@code schedstat} line ({@code <on a CPU ns> <waiting on a run queue ns> <time
     * slices>}), or null for a task that is gone.
     */
    static long[] times(String schedstat) {
        if (schedstat == null) {
            return null;
        }
        String[] f = schedstat.trim().split("\\s+");
        if (f.length < 2) {
            throw new IllegalStateException("unexpected schedstat line: '" + schedstat.trim() + "'");
        }
        return new long[] {Long.parseLong(f[0]), Long.parseLong(f[1])};
    }
}
