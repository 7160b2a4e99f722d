package dev.outboxkit.writer;

/**
 * The connection handed to the writer has autocommit on, so each event would commit on its own,
 * apart from the business change it belongs to. Nothing was written. Fix: call
 * {@code connection.setAutoCommit(false)} (or let your framework open a transaction) before
 * writing, or let {@link OutboxWriter#inTransaction} run the transaction for you.
 */
public class AutoCommitEnabledException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    public AutoCommitEnabledException(String message) {
        super(message);
    }
}
