package dev.outboxkit.spring;

import dev.outboxkit.core.Relay;
import dev.outboxkit.relay.cdc.CdcRelay;
import java.util.Map;
import java.util.Set;

/** Builds the WAL relay from {@code outboxkit.relay.*} (loaded only when relay-debezium is present). */
final class CdcRelays {

    static final Set<String> OPTIONS = Set.of("slot-name", "publication-name", "delete-after-publish", "heartbeat-interval",
            "offset-flush-interval", "max-batch-size", "poll-interval", "shutdown-timeout");

    private CdcRelays() {
    }

    static Relay build(RelaySettings s) {
        CdcRelay.Builder b = CdcRelay.builder().meterRegistry(s.meterRegistry);
        Map<String, String> options = s.applyShared(b, OPTIONS);
        options.forEach((name, value) -> {
            switch (name) {
                case "slot-name" -> b.slotName(value.trim());
                case "publication-name" -> b.publicationName(value.trim());
                case "delete-after-publish" -> b.deleteAfterPublish(RelaySettings.bool(name, value));
                case "heartbeat-interval" -> b.heartbeatInterval(RelaySettings.duration(name, value));
                case "offset-flush-interval" -> b.offsetFlushInterval(RelaySettings.duration(name, value));
                case "max-batch-size" -> b.maxBatchSize(RelaySettings.integer(name, value));
                case "poll-interval" -> b.pollInterval(RelaySettings.duration(name, value));
                case "shutdown-timeout" -> b.shutdownTimeout(RelaySettings.duration(name, value));
                default -> throw new IllegalStateException("unhandled option " + name);
            }
        });
        return b.build();
    }
}
