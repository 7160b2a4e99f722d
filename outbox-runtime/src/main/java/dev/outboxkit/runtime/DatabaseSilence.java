package dev.outboxkit.runtime;

import java.time.Duration;

/**
 * Not API: shared by both relays.
 *
 * <p>How readiness judges the database: each relay touches it about every second or two (lease renewal, slot
 * reading); a last error, or no success for {@link #LIMIT}, means it does not answer now. The limit is shorter than
 * the pool's connection timeout ({@link ConnectionPools#CONNECTION_TIMEOUT}), so a connection attempt that hangs
 * makes the relay not ready before it fails.
 */
public final class DatabaseSilence {

    /** No success for this long: not ready (well within the 10 s a probe may take to see a lost database). */
    public static final Duration LIMIT = Duration.ofSeconds(5);

    private DatabaseSilence() {
    }

    /**
     * Null while the database answers, else why not, for the health detail.
     *
     * @param lastSuccessNanos {@link System#nanoTime()} of the last successful round trip (0: none yet)
     * @param lastError        the last round trip's error, null when it succeeded
     * @param limit            the silence allowed ({@link #LIMIT}, or less for a relay that touches it more often)
     */
    public static String problem(long lastSuccessNanos, String lastError, Duration limit) {
        if (lastError != null) {
            return "database not reachable: " + lastError;
        }
        long silent = System.nanoTime() - lastSuccessNanos;
        if (lastSuccessNanos == 0 || silent > limit.toNanos()) {
            return "database not reachable: no answer for " + (lastSuccessNanos == 0 ? "any" : silent / 1_000_000_000L + " s of")
                    + " the relay's round trips (limit " + limit.toSeconds() + " s)";
        }
        return null;
    }
}
