package dev.outboxkit.core;

import dev.outboxkit.core.spi.Checks;
import java.util.Set;

/** Kafka header names every outboxkit record carries. Users' headers may not reuse them. */
public final class HeaderNames {

    /** Event id, lowercase canonical UUID; the same header Debezium's outbox router sets. */
    public static final String ID = "id";
    public static final String EVENT_TYPE = "eventType";
    public static final String AGGREGATE_TYPE = "aggregateType";
    /** ISO-8601 UTC, always six fractional digits (PostgreSQL's microseconds). */
    public static final String CREATED_AT = "createdAt";

    /**
     * Media type of a binary event's value. Set by the relays on binary events only, so a JSON event's
     * user header of this name passes through as before, while a binary event may not carry one of its own.
     */
    public static final String CONTENT_TYPE = "content-type";

    public static final Set<String> RESERVED = Set.of(ID, EVENT_TYPE, AGGREGATE_TYPE, CREATED_AT);

    private HeaderNames() {
    }

    /** Null when {@code name} may be used as a user header, else the reason it may not. */
    public static String problem(String name) {
        if (name == null || name.isBlank()) {
            return "header names must not be blank";
        }
        if (RESERVED.contains(name)) {
            return "header '" + name + "' is reserved by outboxkit (reserved: id, eventType, aggregateType, createdAt); "
                    + "choose another name";
        }
        if (name.length() > 255) {
            return "header name is " + name.length() + " characters long; at most 255 are allowed";
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c < 0x21 || c > 0x7e) {
                return "header name '" + Checks.printable(name) + "' must be printable ASCII without spaces";
            }
        }
        return null;
    }
}
