package dev.outboxkit.core.spi;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Not API: the W3C Trace Context {@code traceparent} header (https://www.w3.org/TR/trace-context/): the writer checks
 * an explicit one ({@code OutboxMessage}), the operations library reads the trace id of a stored one
 * ({@code OutboxAdmin.traceEvent}).
 */
public final class Traceparent {

    public static final String HEADER = TraceContext.TRACEPARENT;
    private static final Pattern FORMAT = Pattern.compile("([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?");
    private static final String EXAMPLE = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    private Traceparent() {
    }

    /** Null when {@code value} is a valid traceparent, else why it is not. */
    public static String problem(String value) {
        if (value == null) {
            return "traceparent must not be null";
        }
        Matcher m = FORMAT.matcher(value);
        String hint = " (expected version-traceid-parentid-flags in lowercase hex, for example " + EXAMPLE + ")";
        if (!m.matches()) {
            return "traceparent '" + printable(value) + "' is not a W3C traceparent" + hint;
        }
        String version = m.group(1);
        if (version.equals("ff")) {
            return "traceparent version ff is forbidden by the W3C specification" + hint;
        }
        if (version.equals("00") && m.group(5) != null) {
            return "traceparent version 00 has exactly four fields" + hint;
        }
        if (m.group(2).chars().allMatch(c -> c == '0')) {
            return "traceparent trace-id must not be all zeros" + hint;
        }
        if (m.group(3).chars().allMatch(c -> c == '0')) {
            return "traceparent parent-id must not be all zeros" + hint;
        }
        return null;
    }

    /**
     * The trace id (32 lower-case hex digits) of {@code value}; null when {@code value} is null or not a valid
     * traceparent ({@link #problem}), so a malformed value is never shown as a trace id.
     */
    public static String traceId(String value) {
        return value == null || problem(value) != null ? null : value.substring(3, 35);
    }

    private static String printable(String value) {
        String cut = value.length() > 80 ? value.substring(0, 80) + "…" : value;
        return cut.replaceAll("\\p{Cntrl}", "?");
    }
}
