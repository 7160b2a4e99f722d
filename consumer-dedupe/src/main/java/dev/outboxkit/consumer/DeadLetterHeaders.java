package dev.outboxkit.consumer;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.format.DateTimeFormatter;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;

/**
 * Headers the consumer adds when it forwards a record to the dead-letter topic or to a review
 * topic. The original key, value and headers are kept as they were; earlier headers of these
 * names (a record that was dead-lettered before and replayed) are replaced.
 */
public final class DeadLetterHeaders {

    /** Exception class of the last failure, e.g. {@code dev.outboxkit.core.InvalidEventException}. */
    public static final String ERROR_CLASS = "outboxkit.error.class";
    /** Its message (at most 2,000 characters). */
    public static final String ERROR_MESSAGE = "outboxkit.error.message";
    /** How many times the handler was tried (0 when the record could not even be decoded). */
    public static final String ATTEMPTS = "outboxkit.error.attempts";
    /** Why the record was forwarded: {@code undecodable}, {@code handler-failed} or {@code late-arrival}. */
    public static final String REASON = "outboxkit.error.reason";
    public static final String ORIGINAL_TOPIC = "outboxkit.original.topic";
    public static final String ORIGINAL_PARTITION = "outboxkit.original.partition";
    public static final String ORIGINAL_OFFSET = "outboxkit.original.offset";
    /** The original record's timestamp, epoch milliseconds. */
    public static final String ORIGINAL_TIMESTAMP = "outboxkit.original.timestamp";
    /** Consumer group that gave up on the record. */
    public static final String GROUP = "outboxkit.consumer.group";
    /** When it was forwarded, ISO-8601 UTC. */
    public static final String FORWARDED_AT = "outboxkit.forwarded.at";

    public static final String REASON_UNDECODABLE = "undecodable";
    public static final String REASON_HANDLER_FAILED = "handler-failed";
    public static final String REASON_LATE_ARRIVAL = "late-arrival";

    /** Longest {@link #ERROR_MESSAGE} kept. */
    static final int MAX_MESSAGE = 2000;

    private DeadLetterHeaders() {
    }

    /**
     * The headers of {@code original} forwarded for {@code reason}: its own headers except earlier
     * {@code outboxkit.*} ones, then these. The one format the consumer, the Spring inbox and the
     * {@code outbox} tooling share.
     *
     * @param error    the failure, or null (no class and message headers)
     * @param attempts how many times the handler was tried (0 when it never ran)
     * @param group    the consumer group that gave up on the record
     */
    public static RecordHeaders of(ConsumerRecord<?, ?> original, String reason, Throwable error, int attempts, String group,
                                   Instant forwardedAt) {
        RecordHeaders headers = new RecordHeaders();
        for (Header h : original.headers()) {
            if (!h.key().startsWith("outboxkit.")) {
                headers.add(h);
            }
        }
        add(headers, REASON, reason);
        if (error != null) {
            add(headers, ERROR_CLASS, error.getClass().getName());
            String message = error.getMessage() == null ? "" : error.getMessage();
            add(headers, ERROR_MESSAGE, message.length() > MAX_MESSAGE ? message.substring(0, MAX_MESSAGE) : message);
        }
        add(headers, ATTEMPTS, Integer.toString(attempts));
        add(headers, ORIGINAL_TOPIC, original.topic());
        add(headers, ORIGINAL_PARTITION, Integer.toString(original.partition()));
        add(headers, ORIGINAL_OFFSET, Long.toString(original.offset()));
        add(headers, ORIGINAL_TIMESTAMP, Long.toString(original.timestamp()));
        add(headers, GROUP, group);
        add(headers, FORWARDED_AT, DateTimeFormatter.ISO_INSTANT.format(forwardedAt));
        return headers;
    }

    private static void add(RecordHeaders headers, String name, String value) {
        headers.add(name, value.getBytes(StandardCharsets.UTF_8));
    }
}
