package dev.outboxkit.benchmarks.load;

import java.util.SortedMap;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.HdrHistogram.Histogram;

/**
 * Commit-to-ack latency on one clock: the load generator marks an event committed (right after
 * its commit returned), an observer in the same JVM marks it acknowledged (a consumer saw the
 * record, or a producer callback fired), and the difference goes into an HdrHistogram in
 * microseconds. An ack that overtakes the commit mark (the relay was faster than the
 * generator's next instruction) counts as 0 µs; a second ack of an event (at-least-once) counts
 * as a duplicate, not as a latency. Each event's state changes atomically, so the two threads
 * may meet in any order.
 */
public final class LatencyTracker {

    /** Longest latency the histogram resolves (longer ones are clamped): 5 minutes. */
    static final long HIGHEST_MICROS = TimeUnit.MINUTES.toMicros(5);
    private static final long NONE = Long.MIN_VALUE;

    private final LongSupplier nanoClock;
    private final ConcurrentHashMap<UUID, Event> events = new ConcurrentHashMap<>();
    private final Histogram micros = new Histogram(HIGHEST_MICROS, 3);
    private final AtomicLong committed = new AtomicLong();
    private final AtomicLong acked = new AtomicLong();
    private final AtomicLong duplicates = new AtomicLong();
    /** Worst measured latency (µs) per second of commit time, counted from {@link #origin}: for {@link DbSampler}. */
    private final ConcurrentSkipListMap<Long, Long> worstMicrosBySecond = new ConcurrentSkipListMap<>();
    private final long origin;

    /** Per event: when its commit returned, when it was first acked, and whether it is measured. */
    private static final class Event {
        long commitNanos = NONE;
        long ackNanos = NONE;
        boolean measured;
    }

    public LatencyTracker() {
        this(System::nanoTime);
    }

    LatencyTracker(LongSupplier nanoClock) {
        this.nanoClock = nanoClock;
        this.origin = nanoClock.getAsLong();
    }

    /** The event's commit returned now; {@code measured} false for warm-up events. */
    public void committed(UUID id, boolean measured) {
        long now = nanoClock.getAsLong();
        committed.incrementAndGet();
        events.compute(id, (k, e) -> {
            Event event = e == null ? new Event() : e;
            event.commitNanos = now;
            event.measured = measured;
            if (event.ackNanos != NONE) {
                settle(event);
            }
            return event;
        });
    }

    /** A record with this event id reached the observer now. */
    public void acked(UUID id) {
        long now = nanoClock.getAsLong();
        events.compute(id, (k, e) -> {
            Event event = e == null ? new Event() : e;
            if (event.ackNanos != NONE) {
                duplicates.incrementAndGet();
                return event;
            }
            event.ackNanos = now;
            if (event.commitNanos != NONE) {
                settle(event);
            }
            return event;
        });
    }

    private void settle(Event event) {
        acked.incrementAndGet();
        if (event.measured) {
            long us = Math.min(HIGHEST_MICROS, Math.max(0, (event.ackNanos - event.commitNanos) / 1_000));
            synchronized (micros) {
                micros.recordValue(us);
            }
            worstMicrosBySecond.merge(secondOf(event.commitNanos), us, Math::max);
        }
    }

    /** Events marked committed so far. */
    public long committedCount() {
        return committed.get();
    }

    /** Committed events acknowledged at least once. */
    public long ackedCount() {
        return acked.get();
    }

    /** Committed events not acknowledged yet. */
    public long pending() {
        return committed.get() - acked.get();
    }

    /** Acknowledgements beyond the first of an event. */
    public long duplicates() {
        return duplicates.get();
    }

    /** A copy of the measured latencies, microseconds. */
    public Histogram histogram() {
        synchronized (micros) {
            return micros.copy();
        }
    }

    /** The second (counted from this tracker's creation) that the {@code System.nanoTime()} instant falls in. */
    public long secondOf(long nanos) {
        return Math.floorDiv(nanos - origin, 1_000_000_000L);
    }

    /** Worst measured commit→ack per second of commit time ({@link #secondOf}), milliseconds. */
    public SortedMap<Long, Double> worstMillisBySecond() {
        TreeMap<Long, Double> out = new TreeMap<>();
        worstMicrosBySecond.forEach((second, us) -> out.put(second, us / 1000.0));
        return out;
    }
}
