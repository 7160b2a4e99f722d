package dev.outboxkit.testkit.fault;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A randomized but reproducible plan of faults for a soak or a randomized scenario: from a
 * seed, a duration and the fault types a test can cause (each with the targets it may hit), a
 * list of {@link Step steps} — at this offset, put this fault on this target, heal it after
 * this long. The same seed and settings give the same steps on every JVM (the generator is
 * {@link java.util.Random}, whose algorithm is specified), so a failing seed printed by CI can
 * be replayed on a laptop.
 *
 * <p>Steps never overlap: one fault at a time, separated by healthy gaps, and the last one is
 * healed before the duration ends, so the system under test can drain afterwards.
 *
 * <pre>{@code
 * FaultSchedule schedule = FaultSchedule.builder(seed)
 *         .duration(Duration.ofMinutes(2))
 *         .fault("kill9", "relay-1", "relay-2")
 *         .fault("blackhole", 2, List.of("relay-kafka", "relay-pg"))   // twice as likely
 *         .gap(Duration.ofSeconds(2), Duration.ofSeconds(8))
 *         .hold(Duration.ofSeconds(1), Duration.ofSeconds(5))
 *         .build();
 * log.info(schedule.describe());
 * FaultSchedule.Report report = schedule.run(Map.of(
 *         "kill9", FaultAction.of(t -> relays.get(t).kill9(), t -> relays.get(t).start()),
 *         "blackhole", FaultAction.of(t -> proxies.get(t).blackhole(), t -> proxies.get(t).heal())));
 * }</pre>
 */
public final class FaultSchedule {

    private static final Logger log = LoggerFactory.getLogger(FaultSchedule.class);

    /** One fault: injected {@code at} after the run starts on {@code target}, healed {@code hold} later. */
    public record Step(int index, Duration at, String fault, String target, Duration hold) {

        @Override
        public String toString() {
            return "#" + index + " at " + millis(at) + " " + fault + " on " + target + " for " + millis(hold);
        }
    }

    /** A step as it ran: when (since the start) it was injected and healed. */
    public record Executed(Step step, Duration injectedAt, Duration healedAt) {
    }

    /** What a {@link #run} did: every step executed and the count per fault type (sorted by name). */
    public record Report(long seed, List<Executed> executed, Map<String, Integer> injectedByFault) {

        /** One line: seed, number of faults, faults by type. */
        public String summary() {
            return "seed " + seed + ": " + executed.size() + " fault(s) injected and healed " + injectedByFault;
        }
    }

    /** Sleeps for a duration; tests pass one that advances a fake clock instead. */
    @FunctionalInterface
    public interface Sleeper {
        void sleep(Duration duration) throws InterruptedException;
    }

    private record FaultType(String name, int weight, List<String> targets) {
    }

    private final long seed;
    private final Duration duration;
    private final List<FaultType> types;
    private final Duration gapMin;
    private final Duration gapMax;
    private final Duration holdMin;
    private final Duration holdMax;
    private final List<Step> steps;

    private FaultSchedule(Builder b) {
        this.seed = b.seed;
        this.duration = b.duration;
        this.types = List.copyOf(b.types.values());
        this.gapMin = b.gapMin;
        this.gapMax = b.gapMax;
        this.holdMin = b.holdMin;
        this.holdMax = b.holdMax;
        this.steps = plan();
    }

    /** A schedule drawn from {@code seed}. */
    public static Builder builder(long seed) {
        return new Builder(seed);
    }

    /** Settings of a {@link FaultSchedule}. */
    public static final class Builder {

        private final long seed;
        private Duration duration;
        private final Map<String, FaultType> types = new LinkedHashMap<>();
        private Duration gapMin = Duration.ofSeconds(2);
        private Duration gapMax = Duration.ofSeconds(10);
        private Duration holdMin = Duration.ofSeconds(1);
        private Duration holdMax = Duration.ofSeconds(5);

        private Builder(long seed) {
            this.seed = seed;
        }

        /** How long the faulty period lasts (required). The last fault is healed by then. */
        public Builder duration(Duration duration) {
            this.duration = Objects.requireNonNull(duration, "duration");
            return this;
        }

        /** A fault type that may hit any of {@code targets}, with weight 1. */
        public Builder fault(String fault, String... targets) {
            return fault(fault, 1, List.of(targets));
        }

        /**
         * A fault type that may hit any of {@code targets} (chosen uniformly); {@code weight}
         * makes it that many times as likely as a weight-1 type. Types are drawn in the order
         * they were added, so the order is part of what a seed reproduces.
         */
        public Builder fault(String fault, int weight, List<String> targets) {
            Objects.requireNonNull(fault, "fault");
            if (fault.isBlank()) {
                throw new IllegalArgumentException("fault name must not be blank");
            }
            if (weight < 1 || weight > 1000) {
                throw new IllegalArgumentException("weight of fault " + fault + " must be between 1 and 1000, got " + weight);
            }
            if (targets.isEmpty() || targets.stream().anyMatch(t -> t == null || t.isBlank())) {
                throw new IllegalArgumentException("fault " + fault + " needs at least one target, and no blank one; got " + targets);
            }
            if (types.containsKey(fault)) {
                throw new IllegalArgumentException("fault " + fault + " is already configured");
            }
            types.put(fault, new FaultType(fault, weight, List.copyOf(targets)));
            return this;
        }

        /** Healthy time before each fault, drawn uniformly from [min, max] (ms resolution). Default 2–10 s. */
        public Builder gap(Duration min, Duration max) {
            checkRange("gap", min, max, false);
            this.gapMin = min;
            this.gapMax = max;
            return this;
        }

        /** How long each fault lasts before it is healed, uniformly from [min, max]. Default 1–5 s. */
        public Builder hold(Duration min, Duration max) {
            checkRange("hold", min, max, true);
            this.holdMin = min;
            this.holdMax = max;
            return this;
        }

        private static void checkRange(String what, Duration min, Duration max, boolean positive) {
            Objects.requireNonNull(min, what + " min");
            Objects.requireNonNull(max, what + " max");
            if (min.isNegative() || (positive && min.isZero())) {
                throw new IllegalArgumentException(what + " min must be " + (positive ? "positive" : "zero or more") + ", got " + min);
            }
            if (max.compareTo(min) < 0) {
                throw new IllegalArgumentException(what + " max must not be less than min, got " + min + " .. " + max);
            }
            if (max.toMillis() > Integer.MAX_VALUE / 2) {
                throw new IllegalArgumentException(what + " max must be under 12 days, got " + max);
            }
        }

        public FaultSchedule build() {
            if (duration == null || duration.isNegative() || duration.isZero()) {
                throw new IllegalArgumentException("duration must be positive, got " + duration);
            }
            if (types.isEmpty()) {
                throw new IllegalArgumentException("at least one fault type is needed: call fault(name, targets...)");
            }
            return new FaultSchedule(this);
        }
    }

    private List<Step> plan() {
        Random random = new Random(seed);
        int totalWeight = types.stream().mapToInt(FaultType::weight).sum();
        long end = duration.toMillis();
        List<Step> planned = new ArrayList<>();
        long t = 0;
        while (true) {
            t += uniform(random, gapMin, gapMax);
            if (t >= end) {
                break;
            }
            int pick = random.nextInt(totalWeight);
            FaultType type = types.get(0);
            for (FaultType candidate : types) {
                if (pick < candidate.weight()) {
                    type = candidate;
                    break;
                }
                pick -= candidate.weight();
            }
            String target = type.targets().get(random.nextInt(type.targets().size()));
            long hold = Math.min(uniform(random, holdMin, holdMax), end - t);
            planned.add(new Step(planned.size(), Duration.ofMillis(t), type.name(), target, Duration.ofMillis(hold)));
            t += hold;
        }
        return List.copyOf(planned);
    }

    /** Uniform in [min, max] milliseconds, with {@link Random#nextInt(int)} (its algorithm is specified). */
    private static long uniform(Random random, Duration min, Duration max) {
        long lo = min.toMillis();
        long span = max.toMillis() - lo;
        return lo + (span == 0 ? 0 : random.nextInt((int) span + 1));
    }

    public long seed() {
        return seed;
    }

    public Duration duration() {
        return duration;
    }

    /** The planned steps, in time order. */
    public List<Step> steps() {
        return steps;
    }

    /** How many steps each fault type has, in the order the types were configured. */
    public Map<String, Integer> countsByFault() {
        Map<String, Integer> counts = new LinkedHashMap<>();
        types.forEach(t -> counts.put(t.name(), 0));
        steps.forEach(s -> counts.merge(s.fault(), 1, Integer::sum));
        return counts;
    }

    /** The seed, the settings and every step, one per line: enough to reproduce a run. */
    public String describe() {
        StringBuilder s = new StringBuilder("fault schedule seed=" + seed + " duration=" + millis(duration)
                + " gap=" + millis(gapMin) + ".." + millis(gapMax) + " hold=" + millis(holdMin) + ".." + millis(holdMax)
                + " faults=");
        types.forEach(t -> s.append(t.name()).append("(w").append(t.weight()).append(')').append(t.targets()).append(' '));
        s.append("-> ").append(steps.size()).append(" step(s)");
        steps.forEach(step -> s.append("\n  ").append(step));
        return s.toString();
    }

    /** Runs the steps in real time, from now. */
    public Report run(Map<String, FaultAction> actions) throws InterruptedException {
        return run(actions, Clock.systemUTC(), d -> Thread.sleep(d.toMillis(), (int) (d.toNanos() % 1_000_000)));
    }

    /**
     * Runs the steps: waits until each step's offset, injects it, waits its hold (counted from
     * when the injection returned, so a slow injection does not shorten the fault), heals it.
     * A step whose offset has passed (an earlier heal was slow) runs at once. Every injection
     * is followed by its heal — also when the injection throws or the thread is interrupted
     * meanwhile; then the exception is rethrown and no further step runs.
     *
     * @param actions an action for every fault type of this schedule
     * @throws IllegalArgumentException before anything runs, when a fault type has no action
     * @throws FaultInjectionException  when an inject or heal threw
     */
    public Report run(Map<String, FaultAction> actions, Clock clock, Sleeper sleeper) throws InterruptedException {
        List<String> missing = types.stream().map(FaultType::name).filter(n -> !actions.containsKey(n)).toList();
        if (!missing.isEmpty()) {
            throw new IllegalArgumentException("no FaultAction for fault type(s) " + missing + "; given: " + actions.keySet());
        }
        Instant start = clock.instant();
        log.info("fault schedule seed={} starts: {} step(s) over {}", seed, steps.size(), millis(duration));
        List<Executed> executed = new ArrayList<>();
        Map<String, Integer> counts = new TreeMap<>();
        for (Step step : steps) {
            sleepUntil(start.plus(step.at()), clock, sleeper);
            FaultAction action = actions.get(step.fault());
            log.info("fault {}: injecting", step);
            Duration injectedAt;
            try {
                action.inject(step.target());
                injectedAt = Duration.between(start, clock.instant());
                counts.merge(step.fault(), 1, Integer::sum);
                sleepUntil(start.plus(injectedAt).plus(step.hold()), clock, sleeper);
            } catch (InterruptedException e) {
                healAfterFailure(action, step, e);
                throw e;
            } catch (Exception e) {
                healAfterFailure(action, step, e);
                throw new FaultInjectionException("fault " + step + " (seed " + seed + ") could not be injected: " + e, e);
            }
            try {
                action.heal(step.target());
            } catch (Exception e) {
                throw new FaultInjectionException("fault " + step + " (seed " + seed + ") could not be healed: " + e, e);
            }
            Duration healedAt = Duration.between(start, clock.instant());
            log.info("fault {}: healed at {}", step, millis(healedAt));
            executed.add(new Executed(step, injectedAt, healedAt));
        }
        Report report = new Report(seed, List.copyOf(executed), Collections.unmodifiableMap(counts));
        log.info("fault schedule {}", report.summary());
        return report;
    }

    private static void healAfterFailure(FaultAction action, Step step, Exception cause) {
        try {
            action.heal(step.target());
            log.info("fault {}: healed after {}", step, cause.toString());
        } catch (Exception e) {
            cause.addSuppressed(e);
        }
    }

    private static void sleepUntil(Instant when, Clock clock, Sleeper sleeper) throws InterruptedException {
        Duration wait = Duration.between(clock.instant(), when);
        if (!wait.isNegative() && !wait.isZero()) {
            sleeper.sleep(wait);
        }
        if (Thread.interrupted()) {
            throw new InterruptedException("fault schedule interrupted");
        }
    }

    private static String millis(Duration d) {
        return d.toMillis() + "ms";
    }

    /** An inject or heal of a scheduled fault threw. */
    public static final class FaultInjectionException extends RuntimeException {
        FaultInjectionException(String message, Throwable cause) {
            super(message, cause);
        }
    }
}
