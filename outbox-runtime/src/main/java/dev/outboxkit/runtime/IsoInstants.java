package dev.outboxkit.runtime;

import java.time.Instant;
import java.time.format.DateTimeParseException;

/**
 * Not API: public for the CDC relay and the consumer.
 *
 * <p>ISO-8601 instants with an offset ({@code 2024-05-06T07:08:09.123456Z}, {@code ...+02:00}), as the relays write
 * {@code createdAt} and as Debezium and PostgreSQL's JSON render {@code timestamptz}, to an {@link Instant} with every
 * fractional digit. The CDC relay parses one per row and the consumer one per record, so the common shapes take a
 * hand-written path (the general parser costs more than the rest of decoding a record); anything else goes through
 * {@link Instant#parse} (which also takes RFC 3339's leap second and any offset).
 */
public final class IsoInstants {

    private IsoInstants() {
    }

    /** @throws DateTimeParseException if {@code s} is not an ISO-8601 date-time with an offset */
    public static Instant parse(String s) {
        Instant fast = fast(s);
        return fast != null ? fast : Instant.parse(s);
    }

    private static Instant fast(String s) {
        int n = s.length();
        if (n < 20 || s.charAt(4) != '-' || s.charAt(7) != '-' || s.charAt(10) != 'T' || s.charAt(13) != ':'
                || s.charAt(16) != ':') {
            return null;
        }
        int year = digits(s, 0, 4);
        int month = digits(s, 5, 7);
        int day = digits(s, 8, 10);
        int hour = digits(s, 11, 13);
        int minute = digits(s, 14, 16);
        int second = digits(s, 17, 19);
        if (year < 0 || month < 1 || month > 12 || day < 1 || day > 31 || hour < 0 || hour > 23 || minute < 0
                || minute > 59 || second < 0 || second > 59) {
            return null;
        }
        int i = 19;
        int nanos = 0;
        if (i < n && s.charAt(i) == '.') {
            int start = ++i;
            while (i < n && Character.isDigit(s.charAt(i))) {
                i++;
            }
            int len = i - start;
            if (len == 0 || len > 9) {
                return null;
            }
            nanos = digits(s, start, i);
            for (int k = len; k < 9; k++) {
                nanos *= 10;
            }
        }
        int offsetSeconds;
        if (i == n - 1 && s.charAt(i) == 'Z') {
            offsetSeconds = 0;
        } else if (i + 6 == n && (s.charAt(i) == '+' || s.charAt(i) == '-') && s.charAt(i + 3) == ':') {
            int oh = digits(s, i + 1, i + 3);
            int om = digits(s, i + 4, i + 6);
            if (oh < 0 || om < 0) {
                return null;
            }
            offsetSeconds = (oh * 3600 + om * 60) * (s.charAt(i) == '-' ? -1 : 1);
        } else {
            return null;
        }
        try {
            long days = java.time.LocalDate.of(year, month, day).toEpochDay();
            long epochSecond = days * 86_400 + hour * 3600L + minute * 60L + second - offsetSeconds;
            return Instant.ofEpochSecond(epochSecond, nanos);
        } catch (java.time.DateTimeException e) {
            throw new DateTimeParseException("not a date: " + s, s, 0, e);
        }
    }

    private static int digits(String s, int from, int to) {
        int v = 0;
        for (int i = from; i < to; i++) {
            char c = s.charAt(i);
            if (c < '0' || c > '9') {
                return -1;
            }
            v = v * 10 + (c - '0');
        }
        return v;
    }
}
