package dev.outboxkit.writer;

import dev.outboxkit.core.InvalidEventException;

/**
 * An event's payload is larger than {@link OutboxWriter.Builder#maxPayloadBytes(int)}; a relay
 * could never publish it (Kafka would refuse the record). Nothing was written.
 */
public class PayloadTooLargeException extends InvalidEventException {
    private static final long serialVersionUID = 1L;

    private final long size;
    private final int limit;

    public PayloadTooLargeException(String message, long size, int limit) {
        super(message);
        this.size = size;
        this.limit = limit;
    }

    /** The payload's size in bytes of UTF-8 JSON. */
    public long size() {
        return size;
    }

    /** The configured limit. */
    public int limit() {
        return limit;
    }
}
