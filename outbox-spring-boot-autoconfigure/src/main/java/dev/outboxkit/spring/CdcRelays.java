package dev.outboxkit.spring;

import dev.outboxkit.relay.Relay;
import dev.outboxkit.relay.cdc.CdcRelay;

/** Builds the CDC relay from {@code outboxkit.relay.*} (loaded only when relay-debezium is present). */
final class CdcRelays {

    private CdcRelays() {
    }

    static Relay build(RelaySettings s) {
        return s.configure(CdcRelay.builder().meterRegistry(s.meterRegistry)).build();
    }
}
