package dev.outboxkit.console.internal;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;

/** Not API: how the pages write times, ages and sizes. */
public final class Fmt {

    private static final DateTimeFormatter UTC = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss 'UTC'").withZone(ZoneOffset.UTC);

    private Fmt() {
    }

    /** {@code 2026-12-07 03:12:09 UTC}; "–" for null. */
    public static String time(Instant t) {
        return t == null ? "–" : UTC.format(t);
    }

    /** {@code 1h 02m}, {@code 3m 05s}, {@code 12.4s}, {@code -4s} (expired); "–" for null. */
    public static String age(Duration d) {
        if (d == null) {
            return "–";
        }
        String sign = d.isNegative() ? "-" : "";
        Duration a = d.abs();
        long s = a.toSeconds();
        if (s >= 86_400) {
            return sign + (s / 86_400) + "d " + String.format("%02dh", (s % 86_400) / 3600);
        }
        if (s >= 3600) {
            return sign + (s / 3600) + "h " + String.format("%02dm", (s % 3600) / 60);
        }
        if (s >= 60) {
            return sign + (s / 60) + "m " + String.format("%02ds", s % 60);
        }
        return sign + String.format("%.1fs", a.toMillis() / 1000.0);
    }

    /** {@code 12 ms}: a short wait. */
    public static String millis(Duration d) {
        return d.toMillis() + " ms";
    }

    /** {@code 1,234,567}. */
    public static String count(long n) {
        return String.format("%,d", n);
    }

    /** {@code 812 B}, {@code 19.6 KiB}, {@code 1.2 MiB}. */
    public static String bytes(long n) {
        if (n < 1024) {
            return n + " B";
        }
        if (n < 1024 * 1024) {
            return String.format("%.1f KiB", n / 1024.0);
        }
        return String.format("%.1f MiB", n / (1024.0 * 1024));
    }
}
