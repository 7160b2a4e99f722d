package dev.outboxkit.core;

import java.time.Clock;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * UUIDv7 event ids (RFC 9562): 48 bits of Unix milliseconds, then a 12-bit counter, then 62
 * random bits. Ids from one JVM are strictly increasing, across threads too: the millisecond and
 * the counter advance together as one 60-bit number, so a burst of more than 4,096 ids in one
 * millisecond borrows from the next millisecond instead of repeating or going back (RFC 9562,
 * section 6.2, method 1). Ids from different JVMs stay unique through the 62 random bits.
 */
public final class EventIds {

    private static final EventIds SYSTEM = new EventIds(Clock.systemUTC());

    private final Clock clock;
    /** (unix millis << 12) | counter of the last id handed out. */
    private final AtomicLong last = new AtomicLong();

    EventIds(Clock clock) {
        this.clock = clock;
    }

    /** A new UUIDv7 from the system clock. */
    public static UUID next() {
        return SYSTEM.nextId();
    }

    UUID nextId() {
        long nowTicks = clock.millis() << 12;
        long ticks;
        long previous;
        do {
            previous = last.get();
            ticks = Math.max(nowTicks, previous + 1);
        } while (!last.compareAndSet(previous, ticks));
        long millis = ticks >>> 12;
        long counter = ticks & 0xFFF;
        long msb = (millis << 16) | 0x7000L | counter;
        long lsb = (ThreadLocalRandom.current().nextLong() & 0x3FFF_FFFF_FFFF_FFFFL) | 0x8000_0000_0000_0000L;
        return new UUID(msb, lsb);
    }

    /** Milliseconds since the Unix epoch encoded in a UUIDv7. */
    public static long unixMillis(UUID v7) {
        if (v7.version() != 7) {
            throw new IllegalArgumentException("not a UUIDv7: " + v7 + " (version " + v7.version() + ")");
        }
        return v7.getMostSignificantBits() >>> 16;
    }
}
