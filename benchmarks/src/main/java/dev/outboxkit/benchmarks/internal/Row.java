package dev.outboxkit.benchmarks.internal;

import dev.outboxkit.benchmarks.Metric;

/** One line of the report: a metric and its statistics, or the reason it has none. */
public record Row(Metric metric, Stat stat, String missing) {

    public enum Verdict { PASS, FAIL, NO_TARGET, MISSING }

    public Verdict verdict() {
        if (stat == null) {
            return Verdict.MISSING;
        }
        if (metric.target() == null) {
            return Verdict.NO_TARGET;
        }
        return metric.target().isMet(stat.median()) ? Verdict.PASS : Verdict.FAIL;
    }
}
