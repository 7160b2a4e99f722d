package dev.outboxkit.benchmarks;

import java.time.Duration;
import java.util.List;
import java.util.Locale;

/**
 * How big and how long each kind of measurement is, per mode. Scenarios read their sizes from
 * here, so {@code --quick}, the full run and the CI smoke test stay consistent.
 *
 * @param mode            which preset this is
 * @param repeats         how often every measurement runs (the report gives median and spread)
 * @param headlineRepeats how often the scenarios that feed a headline figure run ({@link Metric#headline()},
 *                        {@link Scenario#headline()}): at least {@code repeats}, so that a headline figure is the
 *                        median of several interleaved repeats even when the rest of the run measures once
 * @param payloadSizes    payload sizes in bytes; payload-sensitive scenarios run once per size
 * @param backlogEvents   rows pre-filled for a drain measurement
 * @param warmup          time excluded before a timed window (JIT, caches, connections)
 * @param window          a timed throughput window (producer ceiling, closed-loop clients)
 * @param latencyWindow   how long one open-loop latency measurement offers load at a fixed rate
 * @param latencyRates    offered rates for latency, events/s
 * @param clients         concurrent clients of the closed-loop writer workloads
 * @param jmhForks        JMH forks per benchmark (0: in this JVM, for the smoke test)
 * @param jmhWarmups      JMH warm-up iterations
 * @param jmhIterations   JMH measured iterations
 * @param jmhIteration    length of one JMH iteration
 */
public record Sizes(Mode mode, int repeats, int headlineRepeats, List<Integer> payloadSizes, int backlogEvents,
                    Duration warmup, Duration window, Duration latencyWindow, List<Integer> latencyRates, int clients,
                    int jmhForks, int jmhWarmups, int jmhIterations, Duration jmhIteration) {

    /** Payload of every event unless a scenario says otherwise: 200 bytes of JSON. */
    public static final int DEFAULT_PAYLOAD_BYTES = 200;
    /** The rates the latency keys are named after ({@code _at_200}, {@code _at_5000}). */
    public static final List<Integer> LATENCY_RATES = List.of(200, 5000);

    public enum Mode {
        /** Tiny sizes, seconds: proves the harness runs (CI). No number from it means anything. */
        SMOKE,
        /** One repeat, three of the scenarios behind the headline figures, short windows. */
        QUICK,
        /** Three repeats, longer windows, 200 B and 1 KB payloads. */
        FULL,
        /**
         * The drain of a huge backlog after an outage, per relay ({@code ScenarioCatalog.backlog()}): its own
         * scenarios only, which no other mode runs.
         */
        BACKLOG;

        public static Mode parse(String s) {
            try {
                return valueOf(s.trim().toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("mode must be smoke, quick, full or backlog, got '" + s + "'");
            }
        }

        public String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    public Sizes {
        if (repeats < 1 || headlineRepeats < repeats) {
            throw new IllegalArgumentException("repeats must be at least 1 and the headline repeats at least the"
                    + " repeats, got " + repeats + " and " + headlineRepeats);
        }
    }

    public static Sizes of(Mode mode) {
        return switch (mode) {
            case SMOKE -> new Sizes(mode, 1, 1, List.of(DEFAULT_PAYLOAD_BYTES), 3_000, Duration.ofMillis(300),
                    Duration.ofMillis(700), Duration.ofMillis(500), LATENCY_RATES, 8, 0, 1, 1, Duration.ofMillis(100));
            case QUICK -> new Sizes(mode, 1, 3, List.of(DEFAULT_PAYLOAD_BYTES), 300_000, Duration.ofSeconds(3),
                    Duration.ofSeconds(8), Duration.ofSeconds(15), LATENCY_RATES, 8, 1, 3, 3, Duration.ofSeconds(1));
            case FULL -> new Sizes(mode, 3, 3, List.of(DEFAULT_PAYLOAD_BYTES, 1024), 1_000_000, Duration.ofSeconds(5),
                    Duration.ofSeconds(20), Duration.ofSeconds(60), LATENCY_RATES, 8, 1, 3, 5, Duration.ofSeconds(2));
            case BACKLOG -> new Sizes(mode, 1, 1, List.of(DEFAULT_PAYLOAD_BYTES), 10_000_000, Duration.ofSeconds(3),
                    Duration.ofSeconds(8), Duration.ofSeconds(15), LATENCY_RATES, 8, 1, 3, 3, Duration.ofSeconds(1));
        };
    }

    /**
     * Events of the peers' backlogs (Spring Modulith, namastack-outbox): smaller than {@link #backlogEvents()},
     * because they drain two orders of magnitude slower (one or two row updates per event, one send waited for per
     * executor thread) and the run must stay within its time; a drain's rate does not depend on its size.
     */
    public int peerBacklogEvents() {
        return switch (mode) {
            case SMOKE -> 300;
            case QUICK -> 10_000;
            case FULL, BACKLOG -> 30_000;
        };
    }

    /** How long a latency measurement waits for the last acknowledgements before it counts the rest as lost. */
    public Duration ackTimeout() {
        return mode == Mode.SMOKE ? Duration.ofSeconds(5) : Duration.ofSeconds(30);
    }

    /**
     * JVM options of the publishing child JVMs the crash and failover scenarios start. The smoke's children compile
     * with C1 only: their start-up (class loading and the code that runs once) is what the smoke waits for, and C2's
     * compilations of it cost CPU that a 2-core CI machine does not have, which slows their start to READY; they are
     * never measured for speed. The measuring modes keep the JVM's defaults.
     */
    public List<String> publisherJvmOptions() {
        return mode == Mode.SMOKE ? List.of("-XX:TieredStopAtLevel=1") : List.of();
    }

    /**
     * How often {@code scenario} runs: {@link #headlineRepeats} when it feeds a headline figure, else {@link #repeats}.
     */
    public int repeatsOf(Scenario scenario) {
        return scenario.headline() ? headlineRepeats : repeats;
    }

    /** The same sizes with a backlog of {@code n} events (at least 1): {@code --backlog-events}. */
    public Sizes withBacklogEvents(int n) {
        if (n < 1) {
            throw new IllegalArgumentException("the backlog must hold at least 1 event, got " + n);
        }
        return new Sizes(mode, repeats, headlineRepeats, payloadSizes, n, warmup, window, latencyWindow, latencyRates,
                clients, jmhForks, jmhWarmups, jmhIterations, jmhIteration);
    }

    /** The same sizes with another repeat count (at least 1) for every scenario, the headline ones included. */
    public Sizes withRepeats(int n) {
        if (n < 1) {
            throw new IllegalArgumentException("repeats must be at least 1, got " + n);
        }
        return new Sizes(mode, n, n, payloadSizes, backlogEvents, warmup, window, latencyWindow, latencyRates, clients,
                jmhForks, jmhWarmups, jmhIterations, jmhIteration);
    }
}
