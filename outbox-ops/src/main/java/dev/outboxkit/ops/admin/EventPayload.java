package dev.outboxkit.ops.admin;

import java.nio.charset.StandardCharsets;

/**
 * The head of one event's payload ({@link OutboxAdmin#eventPayload}): what an operator reads to see what was written.
 * Payloads may hold personal data: show them only where the deployment allows it.
 *
 * @param table       where it was read: {@code outbox_event} or {@code outbox_dead_letter}
 * @param contentType the binary payload's content type; null for a JSON payload
 * @param head        the first bytes (UTF-8 text of the JSON for a JSON payload), at most the limit asked for
 * @param size        the whole payload's size in bytes
 */
public record EventPayload(String table, String contentType, byte[] head, long size) {

    public EventPayload {
        head = head.clone();
    }

    @Override
    public byte[] head() {
        return head.clone();
    }

    /** True for a JSON payload ({@code payload} column), false for a binary one ({@code payload_bytes}). */
    public boolean json() {
        return contentType == null;
    }

    /** True when {@link #head()} is only the start of the payload. */
    public boolean truncated() {
        return head.length < size;
    }

    /** The head as text: the JSON, or a binary payload decoded as UTF-8 (malformed bytes replaced). */
    public String text() {
        return new String(head, StandardCharsets.UTF_8);
    }
}
