package dev.outboxkit.benchmarks.internal;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** Median and spread (min, max) of one metric's samples over the repeats. */
public record Stat(double median, double min, double max, List<Double> samples) {

    public static Stat of(List<Double> samples) {
        if (samples.isEmpty()) {
            throw new IllegalArgumentException("no samples");
        }
        List<Double> sorted = new ArrayList<>(samples);
        Collections.sort(sorted);
        int n = sorted.size();
        double median = n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
        return new Stat(median, sorted.get(0), sorted.get(n - 1), List.copyOf(samples));
    }

    public int count() {
        return samples.size();
    }
}
