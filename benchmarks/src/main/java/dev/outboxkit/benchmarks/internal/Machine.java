package dev.outboxkit.benchmarks.internal;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** The machine a run measured: the header of every report, because these numbers depend on it. */
public record Machine(int cores, double memoryGib, String cpu, String os, String jdk, String loadAverage) {

    public static Machine describe() {
        return new Machine(Runtime.getRuntime().availableProcessors(), readMemoryGib(), readCpuModel(),
                System.getProperty("os.name") + " " + System.getProperty("os.version") + " " + System.getProperty("os.arch"),
                System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"),
                loadAverageNow());
    }

    /** 1, 5 and 15 minute load averages from /proc/loadavg ("unknown" elsewhere). */
    public static String loadAverageNow() {
        List<String> lines = read("/proc/loadavg");
        if (lines.isEmpty()) {
            return "unknown";
        }
        String[] f = lines.get(0).trim().split("\\s+");
        return f.length >= 3 ? f[0] + " " + f[1] + " " + f[2] : "unknown";
    }

    private static double readMemoryGib() {
        for (String line : read("/proc/meminfo")) {
            if (line.startsWith("MemTotal:")) {
                String[] f = line.split("\\s+");
                return Long.parseLong(f[1]) / 1024.0 / 1024.0;
            }
        }
        return Runtime.getRuntime().maxMemory() / 1024.0 / 1024.0 / 1024.0;
    }

    private static String readCpuModel() {
        for (String line : read("/proc/cpuinfo")) {
            if (line.startsWith("model name")) {
                return line.substring(line.indexOf(':') + 1).trim();
            }
        }
        return System.getProperty("os.arch");
    }

    private static List<String> read(String file) {
        try {
            return Files.readAllLines(Path.of(file));
        } catch (IOException | RuntimeException e) {
            return List.of();
        }
    }
}
