package dev.outboxkit.core;

/**
 * This instance lost its lease: a newer holder with a larger fencing token owns the work. The
 * operation was rejected and nothing it would have changed was changed. Not retriable by the
 * same holder; the instance must step down and re-acquire.
 */
public class FencedException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public FencedException(String message) {
        super(message);
    }
}
