package dev.outboxkit.relay.cdc.internal;

import dev.outboxkit.core.FencedException;

/** A write of the relay was refused because another instance holds the lease with a newer token. */
final class FencedWriteException extends FencedException {
    private static final long serialVersionUID = 1L;

    public FencedWriteException(String message) {
        super(message);
    }
}
