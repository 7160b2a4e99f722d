package dev.outboxkit.benchmarks.load;

import dev.outboxkit.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Where the machine's CPU went during one latency phase, by who spent it ({@link CpuBudget}, with this JVM's client
 * threads split by name into the writers, the relay and the consumer). A latency phase has no events-per-second
 * budget to meet; what its evidence needs is whether the machine had CPU left, and who took it (issue 30 item 5).
 */
public final class PhaseCpu {

    private final CpuBudget budget;
    private final CpuBudget.Snapshot start;
    private volatile CpuBudget.Usage usage;

    private PhaseCpu(CpuBudget budget) {
        this.budget = budget;
        this.start = budget.snapshot();
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
            usage = budget.between(start, budget.snapshot());
        }
    }

    /**
     * One Markdown paragraph over the window from {@link #start} to {@link #stop} (or to now): the machine's busy
     * share, then each spender in cores (CPU seconds per second).
     */
    public String report(String window) {
        stop();
        CpuBudget.Usage u = usage;
        Map<String, Long> by = new LinkedHashMap<>();
        Map<CpuBudget.Part, String> labels = new EnumMap<>(CpuBudget.Part.class);
        labels.put(CpuBudget.Part.POSTGRES, "the PostgreSQL server (every backend: the writers' and the relay's)");
        labels.put(CpuBudget.Part.KAFKA, "the Kafka broker");
        labels.put(CpuBudget.Part.PRODUCER, "Kafka producers' sender threads");
        labels.put(CpuBudget.Part.DEBEZIUM, "Debezium's connector threads");
        labels.put(CpuBudget.Part.GC, "GC");
        labels.put(CpuBudget.Part.JIT, "JIT");
        labels.put(CpuBudget.Part.JVM, "the rest of the JVM (VM threads, threads that ended)");
        by.put(labels.get(CpuBudget.Part.POSTGRES), u.nanos().get(CpuBudget.Part.POSTGRES));
        for (CpuBudget.ThreadUse t : u.threads()) {
            if (t.part() == CpuBudget.Part.CLIENT) {
                by.merge(clientGroup(t.name()), t.cpuNanos(), Long::sum);
            }
        }
        for (CpuBudget.Part part : CpuBudget.Part.values()) {
            if (part != CpuBudget.Part.POSTGRES && part != CpuBudget.Part.CLIENT) {
                by.merge(labels.get(part), u.nanos().get(part), Long::sum);
            }
        }
        String spenders = by.entrySet().stream().filter(e -> e.getValue() > 0)
                .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
                .map(e -> String.format(Locale.ROOT, "%s %.2f", e.getKey(), e.getValue() / 1e9 / u.wallSeconds()))
                .collect(Collectors.joining(", "));
        return String.format(Locale.ROOT, "CPU during %s (%.0f s, `load.CpuBudget`): the machine was **%.0f %% busy** "
                + "of its %d CPUs (%.0f %% by other processes); in cores (CPU seconds per second): %s%n", window,
                u.wallSeconds(), 100 * u.machineBusy(), u.cpus(), 100 * u.othersBusy(), spenders);
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
        return "other threads of this JVM";
    }
}
