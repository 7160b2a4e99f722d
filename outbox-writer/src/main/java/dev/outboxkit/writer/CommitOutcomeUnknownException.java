package dev.outboxkit.writer;

import java.sql.SQLException;

/**
 * The connection failed while the commit was on its way: the transaction may or may not have
 * committed, and no one can tell from this side. The outbox keeps its promise either way (events
 * are committed together with the business change or not at all); only the caller does not know
 * which. SQLState {@value #SQL_STATE} ("transaction resolution unknown").
 *
 * <p>How to recover: do not guess. Look the effect up by something the request carries (a
 * business key, an event id you supplied), or retry through {@link IdempotencyKeys} with the
 * same idempotency key: if the transaction committed, the retry replays the stored response; if
 * it did not, the retry runs the work once the claim's lease has expired (until then it gets
 * {@link RequestInProgressException}).
 */
public class CommitOutcomeUnknownException extends SQLException {
    private static final long serialVersionUID = 1L;

    /** SQL:2016 "transaction resolution unknown". */
    public static final String SQL_STATE = "08007";

    public CommitOutcomeUnknownException(String message, Throwable cause) {
        super(message, SQL_STATE, cause);
    }
}
