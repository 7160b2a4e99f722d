package dev.outboxkit.relay.poller.internal;

import dev.outboxkit.core.InvalidEventException;
import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.errors.RecordBatchTooLargeException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.SerializationException;

/** Which publication failures are the row's own, for good (park it), and which may pass (retry). */
final class Failures {

    private Failures() {
    }

    /**
     * True when Kafka (or the mapping) will refuse this record however often it is sent: it is
     * parked in the dead-letter table. Everything else (timeouts, leader changes, not enough
     * replicas, authorization that an operator can fix) is retried; a row that keeps failing while
     * Kafka accepts other records is parked after {@code maxAttempts}.
     */
    static boolean isPoison(Throwable error) {
        return error instanceof InvalidEventException
                || error instanceof RecordTooLargeException
                || error instanceof RecordBatchTooLargeException
                || error instanceof InvalidTopicException
                || error instanceof InvalidRecordException
                || error instanceof SerializationException;
    }

    /** One line for logs and the dead-letter table: never a payload. */
    static String message(Throwable error) {
        String m = error.getMessage();
        if (m == null || m.isBlank()) {
            m = error.getClass().getSimpleName();
        }
        return m.length() > 2000 ? m.substring(0, 2000) + "…" : m;
    }
}
