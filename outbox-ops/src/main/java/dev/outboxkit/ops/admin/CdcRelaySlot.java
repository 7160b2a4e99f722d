package dev.outboxkit.ops.admin;

import java.time.Instant;

/**
 * A CDC relay's replication slot, as the relay recorded it ({@code outbox_cdc_slot}) and as the server holds it now.
 *
 * @param name            the slot
 * @param present         the slot exists on the server read (after a failover before PostgreSQL 17 it does not,
 *                        until the relay creates it again)
 * @param active          a walsender streams it now
 * @param lastServer      where the relay last streamed it: {@code host:port (system S, timeline T)}; null before the
 *                        relay recorded one
 * @param failoverReady   whether a standby promoted now would have the slot, as far as the primary can tell: 1 yes,
 *                        0 no, -1 the server keeps no logical slot on standbys (before PostgreSQL 17); the relay's
 *                        {@code outbox.relay.cdc.slot_failover_ready}
 * @param failoverDetail  why, in one line
 * @param recreatedAt     when the relay last created the slot again (or adopted the copy a failover left); null: never
 * @param recreatedReason what it found then, in one line
 * @param walOnlySeenAt   when the relay, running with {@code deleteAfterPublish}, first streamed an event that had no
 *                        row in {@code outbox_event}; from then on it never fast-forwards the slot and stops rather than
 *                        create it again; null: never
 * @param walOnlySeen     what that event was
 */
public record CdcRelaySlot(String name, boolean present, boolean active, String lastServer, int failoverReady,
                           String failoverDetail, Instant recreatedAt, String recreatedReason, Instant walOnlySeenAt,
                           String walOnlySeen) {
}
