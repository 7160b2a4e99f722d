package dev.outboxkit.ops.reconcile;

import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * What one reconciliation found.
 *
 * @param since       start of the scanned window (intents created, effects processed)
 * @param until       end of the scanned window (the run's clock instant)
 * @param intents     intents scanned per consumer source (the same window is read once per source)
 * @param counts      exact number of findings per kind (every kind present, zero included)
 * @param findings    the findings, at most {@code maxFindingsPerKind} of each kind per group
 * @param took        wall time of the run
 */
public record Report(Instant since, Instant until, long intents, Map<Finding.Kind, Long> counts, List<Finding> findings,
                     Duration took) {

    public Report {
        EnumMap<Finding.Kind, Long> all = new EnumMap<>(Finding.Kind.class);
        for (Finding.Kind k : Finding.Kind.values()) {
            all.put(k, counts.getOrDefault(k, 0L));
        }
        counts = Collections.unmodifiableMap(all);
        findings = List.copyOf(findings);
    }

    /** True when nothing was found (exit status 0 of {@code outbox reconcile}). */
    public boolean clean() {
        return counts.values().stream().allMatch(n -> n == 0);
    }

    public long total() {
        return counts.values().stream().mapToLong(Long::longValue).sum();
    }
}
