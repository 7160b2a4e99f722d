package dev.outboxkit.relay.cdc.internal;

/** PostgreSQL log sequence numbers: text {@code 16/B374D848} and the 64-bit number behind it. */
final class Lsns {

    private Lsns() {
    }

    static long parse(String text) {
        if (text == null) {
            return -1;
        }
        int slash = text.indexOf('/');
        if (slash < 0) {
            throw new IllegalArgumentException("not an LSN: " + text);
        }
        long hi = Long.parseLong(text.substring(0, slash), 16);
        long lo = Long.parseLong(text.substring(slash + 1), 16);
        return (hi << 32) | lo;
    }

    static String format(long lsn) {
        if (lsn < 0) {
            return "none";
        }
        return Long.toHexString(lsn >>> 32).toUpperCase() + "/" + Long.toHexString(lsn & 0xFFFF_FFFFL).toUpperCase();
    }
}
