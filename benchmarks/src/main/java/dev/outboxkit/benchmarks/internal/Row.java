package dev.outboxkit.benchmarks.internal;

import dev.outboxkit.benchmarks.Metric;

/** One line of the report: a metric and its statistics, or the reason it has none. */
public record Row(Metric metric, Stat stat, String missing) {

    /**
     * PASS: the median meets the target (and, for a headline figure, every repeat lies within
     * {@link Metric.Target#steadiness()} of the median); UNSTEADY: the median meets it but a repeat lies farther
     * off; FAIL: the median misses it.
     */
    public enum Verdict { PASS, UNSTEADY, FAIL, NO_TARGET, MISSING }

    public Verdict verdict() {
        if (stat == null) {
            return Verdict.MISSING;
        }
        Metric.Target target = metric.target();
        if (target == null) {
            return Verdict.NO_TARGET;
        }
        if (!target.isMet(stat.median())) {
            return Verdict.FAIL;
        }
        return target.isSteady(stat.median(), stat.samples()) ? Verdict.PASS : Verdict.UNSTEADY;
    }
}
