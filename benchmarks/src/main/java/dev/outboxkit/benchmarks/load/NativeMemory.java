package dev.outboxkit.benchmarks.load;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What a child JVM's memory is made of, by HotSpot's Native Memory Tracking: {@code jcmd <pid>
 * VM.native_memory summary} of a JVM started with {@code -XX:NativeMemoryTracking=summary}, parsed into
 * committed KiB per category. Committed is not resident: a committed page nobody touched is not in the
 * RSS, and what the JVM does not allocate itself (libc's heap arenas, mapped jars) is outside NMT.
 */
public final class NativeMemory {

    private static final Pattern TOTAL = Pattern.compile("(?m)^Total: reserved=(\\d+)KB, committed=(\\d+)KB");
    private static final Pattern CATEGORY = Pattern.compile("(?m)^-\\s+(.+?) \\(reserved=(\\d+)KB, committed=(\\d+)KB\\)");
    // "(malloc=22KB #98) (peak=37KB #123)" or "(arena=165KB #5) (at peak)": the high-water mark of the part
    private static final Pattern PART = Pattern.compile("\\((?:malloc|arena)=(\\d+)KB #\\d+\\)(?: \\(peak=(\\d+)KB #\\d+\\))?");

    private NativeMemory() {
    }

    /**
     * One summary.
     *
     * @param totalCommittedKb NMT's total committed
     * @param committedKb      committed per category, in NMT's order ({@code Java Heap}, {@code Class}, ...)
     * @param peakKb           per category, the sum of the peaks of its malloc and arena parts (JDK 17.0.x prints
     *                         them): what a transient user such as the JIT compilers' arenas reached, freed since
     */
    public record Summary(long totalCommittedKb, Map<String, Long> committedKb, Map<String, Long> peakKb) {

        /** Committed MiB of the named categories together (0 for a category this JVM did not print). */
        public double committedMb(String... categories) {
            long kb = 0;
            for (String category : categories) {
                kb += committedKb.getOrDefault(category, 0L);
            }
            return kb / 1024.0;
        }

        public double totalCommittedMb() {
            return totalCommittedKb / 1024.0;
        }

        /** MiB of the malloc and arena peaks of {@code category}. */
        public double peakMb(String category) {
            return peakKb.getOrDefault(category, 0L) / 1024.0;
        }
    }

    /** Runs the JDK's {@code jcmd} (the one beside this JVM's {@code java}) against {@code pid} and parses it. */
    public static Summary summary(long pid) {
        Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
        try {
            Process p = new ProcessBuilder(jcmd.toString(), Long.toString(pid), "VM.native_memory", "summary", "scale=KB")
                    .redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException(jcmd + " " + pid + " VM.native_memory summary failed:\n" + out);
            }
            return parse(out);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + jcmd + " (a JDK, not a JRE, is needed)", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted waiting for jcmd " + pid, e);
        }
    }

    /** A summary printed with {@code scale=KB}. */
    static Summary parse(String text) {
        Matcher total = TOTAL.matcher(text);
        if (!total.find()) {
            throw new IllegalStateException("no 'Total: reserved=…KB, committed=…KB' line: was the JVM started with "
                    + "-XX:NativeMemoryTracking=summary, and jcmd run with scale=KB?\n" + text);
        }
        Map<String, Long> committed = new LinkedHashMap<>();
        Map<String, Long> peak = new LinkedHashMap<>();
        Matcher category = CATEGORY.matcher(text);
        int from = -1;
        String name = null;
        while (category.find()) {
            if (name != null) {
                peak.put(name, peaks(text.substring(from, category.start())));
            }
            name = category.group(1).trim();
            committed.put(name, Long.parseLong(category.group(3)));
            from = category.end();
        }
        if (name == null) {
            throw new IllegalStateException("no NMT category line ('-  Java Heap (reserved=…KB, committed=…KB)'):\n" + text);
        }
        peak.put(name, peaks(text.substring(from)));
        return new Summary(Long.parseLong(total.group(2)), Collections.unmodifiableMap(committed),
                Collections.unmodifiableMap(peak));
    }

    private static long peaks(String block) {
        long kb = 0;
        Matcher part = PART.matcher(block);
        while (part.find()) {
            kb += Long.parseLong(part.group(2) != null ? part.group(2) : part.group(1));
        }
        return kb;
    }
}
