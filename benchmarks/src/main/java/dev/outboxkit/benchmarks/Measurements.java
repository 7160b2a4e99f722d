package dev.outboxkit.benchmarks;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What one run of a scenario measured: numbers by JSON key, and latency profiles for the
 * latency chart. Keys are written without a payload suffix; the runner adds {@code _1kb} when
 * a payload-sensitive scenario ran with 1 KB payloads.
 */
public final class Measurements {

    private final Map<String, Double> values = new LinkedHashMap<>();
    private final List<LatencyProfile> latencies = new ArrayList<>();

    /** Records {@code value} under {@code key}; NaN and infinities are refused (never a fake number). */
    public Measurements put(String key, double value) {
        if (Double.isNaN(value) || Double.isInfinite(value)) {
            throw new IllegalArgumentException(key + " measured " + value + "; a scenario that cannot measure must throw");
        }
        values.put(key, value);
        return this;
    }

    /** Records a latency profile and its p50 / p99 keys ({@code <system>_p50_ms_at_<rate>}, ...). */
    public Measurements latency(LatencyProfile profile) {
        latencies.add(profile);
        put(LatencyProfile.key(profile.system(), "p50", profile.rate()), profile.p50());
        put(LatencyProfile.key(profile.system(), "p99", profile.rate()), profile.p99());
        return this;
    }

    public Map<String, Double> values() {
        return Collections.unmodifiableMap(values);
    }

    public List<LatencyProfile> latencies() {
        return Collections.unmodifiableList(latencies);
    }
}
