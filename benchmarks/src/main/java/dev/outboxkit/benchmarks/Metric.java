package dev.outboxkit.benchmarks;

import java.util.List;
import java.util.Objects;

/**
 * One JSON key of {@code latest.json}: its unit, what it means, and the target it is judged by
 * (or none). Scenarios name the metrics they produce; {@link MetricCatalog} holds the ones the
 * report must always list.
 *
 * @param key     the JSON key, snake_case (for example {@code pg_drain_ceiling_eps})
 * @param unit    {@code events/s}, {@code ms}, {@code ratio}, {@code MB}, {@code ns/op}, ...
 * @param meaning one line for the report and the docs
 * @param target  the bar the median must clear (and, for a headline figure, how close every repeat must be to the
 *                median), or null when the key is informative only
 */
public record Metric(String key, String unit, String meaning, Target target) {

    public Metric {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(unit, "unit");
        Objects.requireNonNull(meaning, "meaning");
        if (!key.matches("[a-z][a-z0-9_]*")) {
            throw new IllegalArgumentException("metric key must be snake_case, got '" + key + "'");
        }
    }

    /** A metric without a target. */
    public static Metric of(String key, String unit, String meaning) {
        return new Metric(key, unit, meaning, null);
    }

    /** The same metric, judged: the median must be at least {@code bar}. */
    public Metric atLeast(double bar) {
        return new Metric(key, unit, meaning, new Target(Target.Kind.AT_LEAST, bar));
    }

    /** The same metric, judged: the median must be at most {@code bar}. */
    public Metric atMost(double bar) {
        return new Metric(key, unit, meaning, new Target(Target.Kind.AT_MOST, bar));
    }

    /**
     * The same metric as a headline figure: its target is met only when the median clears the bar and every repeat
     * lies within {@link Target#HEADLINE_STEADINESS} of the median, and the scenarios that measure it (or the two
     * sides of its ratio) run {@link Sizes#headlineRepeats()} times. Call it after {@link #atLeast} or
     * {@link #atMost}.
     */
    public Metric headline() {
        if (target == null) {
            throw new IllegalStateException(key + ": a headline figure needs a target; set it with atLeast or atMost"
                    + " first");
        }
        return new Metric(key, unit, meaning, new Target(target.kind(), target.bar(), Target.HEADLINE_STEADINESS));
    }

    /** Whether this is a headline figure ({@link #headline()}). */
    public boolean isHeadline() {
        return target != null && target.steadiness() > 0;
    }

    /** The same metric measured with another payload size: {@code key_1kb}, no target (targets are set at 200 B). */
    public Metric forPayload(int payloadBytes) {
        if (payloadBytes == Sizes.DEFAULT_PAYLOAD_BYTES) {
            return this;
        }
        return new Metric(key + payloadSuffix(payloadBytes), unit, meaning + " (" + payloadLabel(payloadBytes) + " payloads)", null);
    }

    /** {@code ""} for the default payload, else {@code _1kb} / {@code _512b}. */
    public static String payloadSuffix(int payloadBytes) {
        if (payloadBytes == Sizes.DEFAULT_PAYLOAD_BYTES) {
            return "";
        }
        return payloadBytes % 1024 == 0 ? "_" + payloadBytes / 1024 + "kb" : "_" + payloadBytes + "b";
    }

    static String payloadLabel(int payloadBytes) {
        return payloadBytes % 1024 == 0 ? payloadBytes / 1024 + " KB" : payloadBytes + " B";
    }

    /**
     * A bar a measured value must clear.
     *
     * @param steadiness 0, or how far (a share of the median, 0.1 for 10 %) each repeat may lie from the median for
     *                   the target to count as met: a median of repeats that scatter that widely is no steady figure
     */
    public record Target(Kind kind, double bar, double steadiness) {

        /** How close every repeat of a headline figure must be to the median: within 10 %. */
        public static final double HEADLINE_STEADINESS = 0.10;

        public enum Kind { AT_LEAST, AT_MOST }

        public Target {
            if (!(steadiness >= 0 && steadiness < 1)) {
                throw new IllegalArgumentException("steadiness must be 0 (not judged) or a share below 1, got "
                        + steadiness);
            }
        }

        /** A bar with no steadiness asked. */
        public Target(Kind kind, double bar) {
            this(kind, bar, 0);
        }

        public boolean isMet(double value) {
            return kind == Kind.AT_LEAST ? value >= bar : value <= bar;
        }

        /** Whether every sample lies within {@link #steadiness} of {@code median}; true when none is asked. */
        public boolean isSteady(double median, List<Double> samples) {
            return steadiness == 0
                    || samples.stream().allMatch(s -> Math.abs(s - median) <= steadiness * Math.abs(median));
        }

        @Override
        public String toString() {
            return (kind == Kind.AT_LEAST ? "≥ " : "≤ ") + Numbers.format(bar)
                    + (steadiness == 0 ? "" : ", each repeat within " + Math.round(steadiness * 100) + " %");
        }
    }
}
