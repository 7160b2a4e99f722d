package dev.outboxkit.benchmarks.load;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/** Waiting for a benchmark condition with a deadline and a way to fail early. */
public final class Await {

    private Await() {
    }

    /** A condition that may throw (a query, a metric). */
    @FunctionalInterface
    public interface Condition {
        boolean met() throws Exception;
    }

    /**
     * Polls {@code condition} every {@code pollMillis} until it holds. Throws when {@code timeout}
     * passes, or as soon as {@code failure} gives a non-null reason (a relay died, a child exited).
     */
    public static void until(String what, Condition condition, Duration timeout, long pollMillis,
                             Supplier<String> failure) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.met()) {
            String reason = failure.get();
            if (reason != null) {
                throw new IllegalStateException(what + ": " + reason);
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(what + ": not done after " + timeout.toSeconds() + " s");
            }
            TimeUnit.MILLISECONDS.sleep(pollMillis);
        }
    }
}
