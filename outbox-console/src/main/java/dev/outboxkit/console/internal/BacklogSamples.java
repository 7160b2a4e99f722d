package dev.outboxkit.console.internal;

import java.time.Instant;

/**
 * Not API: the backlog over the last hour as the console sampled it, for the overview's chart. A ring buffer of
 * {@link #CAPACITY} samples (one per {@link #INTERVAL_SECONDS} s), so it never grows.
 */
public final class BacklogSamples {

    public static final int INTERVAL_SECONDS = 10;
    public static final int CAPACITY = 3600 / INTERVAL_SECONDS;

    private final long[] epochSeconds = new long[CAPACITY];
    private final long[] backlog = new long[CAPACITY];
    private int start;
    private int size;

    public synchronized void add(Instant at, long value) {
        int slot = (start + size) % CAPACITY;
        if (size == CAPACITY) {
            start = (start + 1) % CAPACITY;
        } else {
            size++;
        }
        epochSeconds[slot] = at.getEpochSecond();
        backlog[slot] = value;
    }

    public synchronized int size() {
        return size;
    }

    /** {@code {"t":[…],"backlog":[…]}}, oldest first: the two series uPlot draws. */
    public synchronized String json() {
        StringBuilder t = new StringBuilder("{\"t\":[");
        StringBuilder b = new StringBuilder("],\"backlog\":[");
        for (int i = 0; i < size; i++) {
            int slot = (start + i) % CAPACITY;
            if (i > 0) {
                t.append(',');
                b.append(',');
            }
            t.append(epochSeconds[slot]);
            b.append(backlog[slot]);
        }
        return t.append(b).append("]}").toString();
    }
}
