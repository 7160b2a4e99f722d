package dev.outboxkit.benchmarks.load;

import dev.outboxkit.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Where the machine's CPU went during one latency phase, by who spent it ({@link CpuBudget}, with this JVM's client
 * threads split by name into the writers, the relay and the consumer). A latency phase has no events-per-second
 * budget to meet; what its evidence needs is whether the machine had CPU left, and who took it.
 */
public final class PhaseCpu {

    private static final Map<CpuBudget.Part, String> LABELS = new EnumMap<>(Map.of(
            CpuBudget.Part.POSTGRES, "the PostgreSQL server (every backend: the writers' and the relay's)",
            CpuBudget.Part.KAFKA, "the Kafka broker",
            CpuBudget.Part.PRODUCER, "Kafka producers' sender threads",
            CpuBudget.Part.DEBEZIUM, "Debezium's connector threads",
            CpuBudget.Part.GC, "GC",
            CpuBudget.Part.JIT, "JIT",
            CpuBudget.Part.JVM, "the rest of the JVM (VM threads, threads that ended)"));
    private static final String OTHER = "other threads of this JVM";

    private final CpuBudget budget;
    private final CpuBudget.Snapshot start;
    private final Map<String, CoreWait.Task> startWaits;
    private volatile CpuBudget.Usage usage;
    private volatile List<CoreWait.Use> waits;

    private PhaseCpu(CpuBudget budget) {
        this.budget = budget;
        this.start = budget.snapshot();
        this.startWaits = waits(start);
    }

    /** Starts counting now, for the PostgreSQL server behind {@code db} and this JVM. */
    public static PhaseCpu start(TestDatabase db) throws SQLException {
        try (Connection c = db.connect()) {
            return new PhaseCpu(CpuBudget.forServerOf(c));
        }
    }

    /**
     * Ends the window now. Call it while the threads to be told apart are alive: an ended thread's time can no longer be
     * read per thread and goes to the rest of the JVM.
     */
    public void stop() {
        if (usage == null) {
            CpuBudget.Snapshot end = budget.snapshot();
            waits = CoreWait.between(startWaits, waits(end));
            usage = budget.between(start, end);
        }
    }

    /**
     * One Markdown paragraph over the window from {@link #start} to {@link #stop} (or to now): the machine's busy
     * share, then each spender in cores (CPU seconds per second), then how long each one's runnable threads waited for
     * a core ({@link CoreWait}).
     */
    public String report(String window) {
        stop();
        CpuBudget.Usage u = usage;
        Map<String, Long> by = new LinkedHashMap<>();
        by.put(LABELS.get(CpuBudget.Part.POSTGRES), Math.max(0, u.nanos().get(CpuBudget.Part.POSTGRES)));
        for (CpuBudget.ThreadUse t : u.threads()) {
            if (t.part() == CpuBudget.Part.CLIENT) {
                by.merge(clientGroup(t.name()), t.cpuNanos(), Long::sum);
            }
        }
        for (CpuBudget.Part part : CpuBudget.Part.values()) {
            if (part != CpuBudget.Part.POSTGRES && part != CpuBudget.Part.CLIENT) {
                by.merge(LABELS.get(part), u.nanos().get(part), Long::sum);
            }
        }
        // The server is always named, 0.00 included: the kernel counts each process's time in clock ticks (10 ms), so a
        // short window of light work can leave every backend below one tick, and the report must still say so.
        String server = LABELS.get(CpuBudget.Part.POSTGRES);
        String spenders = by.entrySet().stream().filter(e -> e.getValue() > 0 || e.getKey().equals(server))
                .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
                .map(e -> String.format(Locale.ROOT, "%s %.2f", e.getKey(), e.getValue() / 1e9 / u.wallSeconds()))
                .collect(Collectors.joining(", "));
        return String.format(Locale.ROOT, "CPU during %s (%.0f s, `load.CpuBudget`): the machine was **%.0f %% busy** "
                + "of its %d CPUs (%.0f %% by other processes); in cores (CPU seconds per second): %s%n%n%s", window,
                u.wallSeconds(), 100 * u.machineBusy(), u.cpus(), 100 * u.othersBusy(), spenders, waitReport(u));
    }

    /** The wait for a core of each spender that used at least 0.01 cores, as a share of its runnable time. */
    private String waitReport(CpuBudget.Usage u) {
        if (waits.isEmpty()) {
            return "Waiting for a core: not measured (this kernel keeps no `/proc/<pid>/schedstat`).\n";
        }
        double minimum = 0.01 * 1e9 * u.wallSeconds();
        String each = waits.stream().filter(w -> w.runNanos() >= minimum)
                .map(w -> String.format(Locale.ROOT, "%s %.0f %% (%.0f ms waited per second)", w.label(),
                        100 * w.waitShare(), w.waitNanos() / 1e6 / u.wallSeconds()))
                .collect(Collectors.joining(", "));
        return "Waiting for a core (runnable but not running, from the kernel's `schedstat`; a thread's work takes its "
                + "CPU time plus this wait), as a share of the time each one was runnable: " + each + "\n";
    }

    /**
     * Each task's wait for a core, with this JVM's threads labelled as in {@link #report} by their kernel names (a
     * name the kernel cut short to one shared by threads of different labels goes to the other threads) and the
     * server's processes as the PostgreSQL server.
     */
    private static Map<String, CoreWait.Task> waits(CpuBudget.Snapshot s) {
        Map<String, String> byComm = new HashMap<>();
        for (CpuBudget.ThreadTime t : s.threads().values()) {
            byComm.merge(CoreWait.comm(t.name()), label(t.name()), (a, b) -> a.equals(b) ? a : OTHER);
        }
        byComm.putIfAbsent("java", label("main")); // the main thread keeps the launcher's name in the kernel
        Map<Long, String> server = new HashMap<>();
        for (long pid : s.postgres().keySet()) {
            if (pid > 0) { // 0: the server's ended processes, not a process
                server.put(pid, LABELS.get(CpuBudget.Part.POSTGRES));
            }
        }
        return CoreWait.snapshot(comm -> {
            CpuBudget.Part vm = CpuBudget.Part.ofNative(comm);
            return vm != null ? LABELS.get(vm) : byComm.getOrDefault(comm, LABELS.get(CpuBudget.Part.JVM));
        }, server);
    }

    /** The label of one of this JVM's threads by its name. */
    private static String label(String thread) {
        CpuBudget.Part part = CpuBudget.Part.of(thread);
        return part == CpuBudget.Part.CLIENT ? clientGroup(thread) : LABELS.get(part);
    }

    /** This JVM's client threads by who runs them: the load's writers, the relay, the consumer that sees the acks. */
    static String clientGroup(String thread) {
        if (thread.startsWith("open-loop-writer")) {
            return "the writers' threads";
        }
        if (thread.startsWith("outbox-") || thread.startsWith("outboxkit-")) {
            return "the relay's own threads";
        }
        if (thread.startsWith("kafka-ack-observer") || thread.startsWith("kafka-coordinator-heartbeat")
                || thread.startsWith("consumer_background")) {
            return "the consumer that sees the records";
        }
        return OTHER;
    }
}
