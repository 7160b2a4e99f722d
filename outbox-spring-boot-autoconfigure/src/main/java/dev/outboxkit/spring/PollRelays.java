package dev.outboxkit.spring;

import dev.outboxkit.relay.Relay;
import dev.outboxkit.relay.poller.PollingRelay;

/** Builds the polling relay from {@code outboxkit.relay.*} (loaded only when relay-poller is present). */
final class PollRelays {

    private PollRelays() {
    }

    static Relay build(RelaySettings s) {
        return s.configure(PollingRelay.builder().meterRegistry(s.meterRegistry)).build();
    }
}
