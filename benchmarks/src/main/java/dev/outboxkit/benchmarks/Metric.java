package dev.outboxkit.benchmarks;

import java.util.Objects;

/**
 * One JSON key of {@code latest.json}: its unit, what it means, and the target it is judged by
 * (or none). Scenarios name the metrics they produce; {@link MetricCatalog} holds the ones the
 * report must always list.
 *
 * @param key     the JSON key, snake_case (for example {@code pg_drain_ceiling_eps})
 * @param unit    {@code events/s}, {@code ms}, {@code ratio}, {@code MB}, {@code ns/op}, ...
 * @param meaning one line for the report and the docs
 * @param target  the bar the median must clear, or null when the key is informative only
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

    /** A bar a measured value must clear. */
    public record Target(Kind kind, double bar) {

        public enum Kind { AT_LEAST, AT_MOST }

        public boolean isMet(double value) {
            return kind == Kind.AT_LEAST ? value >= bar : value <= bar;
        }

        @Override
        public String toString() {
            return (kind == Kind.AT_LEAST ? "≥ " : "≤ ") + Numbers.format(bar);
        }
    }
}
