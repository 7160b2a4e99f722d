package dev.outboxkit.relay.cdc.internal;

/**
 * The slot is no longer where the current session streams it, in a way the next session mends on its own: the primary moved
 * to another host (a multi-host URL), or the slot must be created again (it went missing or was invalidated, and every
 * unpublished event is still a row in the table). Ends the session without stopping the relay: the next one resolves
 * the primary and checks the slot again ({@link Session#verifySlot}). Whatever could lose an event is a
 * {@link dev.outboxkit.relay.cdc.CdcStartupException} instead.
 */
final class SlotMovedException extends IllegalStateException {

    private static final long serialVersionUID = 1L;

    SlotMovedException(String message) {
        super(message);
    }
}
