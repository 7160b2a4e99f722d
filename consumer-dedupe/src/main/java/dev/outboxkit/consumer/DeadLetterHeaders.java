package dev.outboxkit.consumer;

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

    private DeadLetterHeaders() {
    }
}
