package dev.outboxkit.ops.admin;

import java.time.Instant;

/**
 * The old name of {@link CdcRelaySlot}, with the same components; {@link OutboxAdmin#walRelaySlots()} returns it.
 *
 * @param name            see {@link CdcRelaySlot#name()}
 * @param present         see {@link CdcRelaySlot#present()}
 * @param active          see {@link CdcRelaySlot#active()}
 * @param lastServer      see {@link CdcRelaySlot#lastServer()}
 * @param failoverReady   see {@link CdcRelaySlot#failoverReady()}
 * @param failoverDetail  see {@link CdcRelaySlot#failoverDetail()}
 * @param recreatedAt     see {@link CdcRelaySlot#recreatedAt()}
 * @param recreatedReason see {@link CdcRelaySlot#recreatedReason()}
 * @param walOnlySeenAt   see {@link CdcRelaySlot#walOnlySeenAt()}
 * @param walOnlySeen     see {@link CdcRelaySlot#walOnlySeen()}
 * @deprecated use {@link CdcRelaySlot} and {@link OutboxAdmin#cdcRelaySlots()}; removed in 0.2.0
 */
@Deprecated(since = "0.1.0", forRemoval = true)
public record WalRelaySlot(String name, boolean present, boolean active, String lastServer, int failoverReady,
                           String failoverDetail, Instant recreatedAt, String recreatedReason, Instant walOnlySeenAt,
                           String walOnlySeen) {

    static WalRelaySlot of(CdcRelaySlot s) {
        return new WalRelaySlot(s.name(), s.present(), s.active(), s.lastServer(), s.failoverReady(), s.failoverDetail(),
                s.recreatedAt(), s.recreatedReason(), s.walOnlySeenAt(), s.walOnlySeen());
    }
}
