package dev.outboxkit.console.internal;

import java.time.Instant;

/**
 * Not API: the backlog and the publish rate over the last hour as the console sampled them, for the overview's charts.
 * A ring buffer of {@link #CAPACITY} samples (one per {@link #INTERVAL_SECONDS} s), so it never grows. A value that
 * could not be read is kept as a gap (JSON null), not as a zero.
 */
public final class OverviewSamples {

    public static final int INTERVAL_SECONDS = 10;
    public static final int CAPACITY = 3600 / INTERVAL_SECONDS;

    private final long[] epochSeconds = new long[CAPACITY];
    private final Long[] backlog = new Long[CAPACITY];
    private final Double[] publishedPerSecond = new Double[CAPACITY];
    private int start;
    private int size;

    /** One sample; {@code backlog} or {@code publishedPerSecond} null when it could not be read. */
    public synchronized void add(Instant at, Long backlog, Double publishedPerSecond) {
        int slot = (start + size) % CAPACITY;
        if (size == CAPACITY) {
            start = (start + 1) % CAPACITY;
        } else {
            size++;
        }
        epochSeconds[slot] = at.getEpochSecond();
        this.backlog[slot] = backlog;
        this.publishedPerSecond[slot] = publishedPerSecond;
    }

    public synchronized int size() {
        return size;
    }

    /** {@code {"t":[…],"backlog":[…],"published":[…]}}, oldest first: the series uPlot draws. */
    public synchronized String json() {
        StringBuilder t = new StringBuilder("{\"t\":[");
        StringBuilder b = new StringBuilder("],\"backlog\":[");
        StringBuilder p = new StringBuilder("],\"published\":[");
        for (int i = 0; i < size; i++) {
            int slot = (start + i) % CAPACITY;
            if (i > 0) {
                t.append(',');
                b.append(',');
                p.append(',');
            }
            t.append(epochSeconds[slot]);
            b.append(backlog[slot] == null ? "null" : backlog[slot].toString());
            Double rate = publishedPerSecond[slot];
            p.append(rate == null ? "null" : String.format(java.util.Locale.ROOT, "%.1f", rate));
        }
        return t.append(b).append(p).append("]}").toString();
    }
}
