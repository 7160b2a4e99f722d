package dev.outboxkit.spring;

import dev.outboxkit.core.Relay;
import dev.outboxkit.relay.poller.AfterPublish;
import dev.outboxkit.relay.poller.ParkPolicy;
import dev.outboxkit.relay.poller.PollingRelay;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/** Builds the polling relay from {@code outboxkit.relay.*} (loaded only when relay-poller is present). */
final class PollRelays {

    static final Set<String> OPTIONS = Set.of("partitions", "batch-size", "after-publish", "park-policy", "max-attempts",
            "max-poll-delay", "listen-notify", "pipeline-claims");

    private PollRelays() {
    }

    static Relay build(RelaySettings s) {
        PollingRelay.Builder b = PollingRelay.builder().meterRegistry(s.meterRegistry);
        Map<String, String> options = s.applyShared(b, OPTIONS);
        options.forEach((name, value) -> {
            switch (name) {
                case "partitions" -> b.partitions(RelaySettings.integer(name, value));
                case "batch-size" -> b.batchSize(RelaySettings.integer(name, value));
                case "after-publish" -> b.afterPublish(AfterPublish.valueOf(value.trim().toUpperCase(Locale.ROOT)));
                case "park-policy" -> b.parkPolicy(ParkPolicy.valueOf(value.trim().toUpperCase(Locale.ROOT).replace('-', '_')));
                case "max-attempts" -> b.maxAttempts(RelaySettings.integer(name, value));
                case "max-poll-delay" -> b.maxPollDelay(RelaySettings.duration(name, value));
                case "listen-notify" -> b.listenNotify(RelaySettings.bool(name, value));
                case "pipeline-claims" -> b.pipelineClaims(RelaySettings.bool(name, value));
                default -> throw new IllegalStateException("unhandled option " + name);
            }
        });
        return b.build();
    }
}
