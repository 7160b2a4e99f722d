package dev.outboxkit.relay.cdc;

/**
 * The relay cannot start without risking to skip or re-send events (slot missing, invalidated or
 * ahead of the stored offset; publication incomplete; missing privilege). Fatal: the message says
 * what to do. Never retried automatically.
 */
public final class CdcStartupException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    public CdcStartupException(String message) {
        super(message);
    }

    public CdcStartupException(String message, Throwable cause) {
        super(message, cause);
    }
}
