package dev.outboxkit.testkit;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A {@link Clock} that stands still until the test moves it with {@link #advance}: give it to anything that takes a
 * clock (idempotency keys, external-effect leases, a fault schedule's sleeper) and expire leases or reach deadlines
 * without sleeping. Safe to read and move from several threads; its zone is UTC.
 *
 * <pre>{@code
 * ManualClock clock = ManualClock.startingAt(Instant.now());
 * IdempotencyKeys keys = IdempotencyKeys.builder().clock(clock).build();
 * clock.advance(IdempotencyKeys.DEFAULT_LEASE.plusSeconds(1));   // the lease has expired, no sleep
 * }</pre>
 *
 * <p>Where the instants end up in PostgreSQL and are compared with what it returns, start at an instant PostgreSQL
 * can store: {@code Instant.now().truncatedTo(ChronoUnit.MICROS)}.
 */
public final class ManualClock extends Clock {

    private final AtomicReference<Instant> now;

    private ManualClock(Instant start) {
        now = new AtomicReference<>(start);
    }

    /** A clock that reads {@code start} until it is moved. */
    public static ManualClock startingAt(Instant start) {
        if (start == null) {
            throw new IllegalArgumentException("ManualClock.startingAt: start must not be null");
        }
        return new ManualClock(start);
    }

    /** Moves the clock on by {@code d} (a negative duration moves it back). */
    public void advance(Duration d) {
        now.updateAndGet(t -> t.plus(d));
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    /** This clock: a manual clock has one zone, UTC. */
    @Override
    public Clock withZone(ZoneId zone) {
        return this;
    }

    @Override
    public Instant instant() {
        return now.get();
    }
}
