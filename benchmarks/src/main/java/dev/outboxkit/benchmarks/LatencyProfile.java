package dev.outboxkit.benchmarks;

import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;

/**
 * Commit-to-ack latency of one system at one offered rate, in milliseconds: what the latency
 * chart draws and the {@code *_ms_at_<rate>} keys are taken from.
 *
 * @param system       short name: {@code kafka}, {@code poller}, {@code cdc}
 * @param rate         offered rate, events/s (open loop)
 * @param achievedRate events/s the load generator actually committed
 * @param count        events measured (warm-up excluded)
 * @param lost         events committed but not acknowledged within the drain timeout
 */
public record LatencyProfile(String system, int rate, double achievedRate, long count, long lost,
                             double p50, double p90, double p99, double p999, double max) {

    /** Percentiles of a histogram recorded in microseconds. */
    public static LatencyProfile of(String system, int rate, double achievedRate, long lost, Histogram micros) {
        return new LatencyProfile(system, rate, achievedRate, micros.getTotalCount(), lost,
                ms(micros.getValueAtPercentile(50)), ms(micros.getValueAtPercentile(90)),
                ms(micros.getValueAtPercentile(99)), ms(micros.getValueAtPercentile(99.9)), ms(micros.getMaxValue()));
    }

    private static double ms(long micros) {
        return micros / (double) TimeUnit.MILLISECONDS.toMicros(1);
    }

    /** The JSON key of a percentile of this system at this rate, e.g. {@code poller_p99_ms_at_200}. */
    public static String key(String system, String percentile, int rate) {
        return system + "_" + percentile + "_ms_at_" + rate;
    }
}
