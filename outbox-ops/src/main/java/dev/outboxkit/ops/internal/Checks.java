package dev.outboxkit.ops.internal;

import java.time.Duration;

/** Not API: public for the builders of {@code dev.outboxkit.ops.reconcile} and {@code dev.outboxkit.ops.retention}. */
public final class Checks {

    private Checks() {
    }

    /** @throws IllegalArgumentException naming the setting when {@code d} is null, zero or negative */
    public static void requirePositive(String name, Duration d) {
        if (d == null || d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(name + " must be positive, got " + d);
        }
    }
}
