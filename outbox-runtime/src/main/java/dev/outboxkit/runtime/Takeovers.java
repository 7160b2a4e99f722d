package dev.outboxkit.runtime;

import dev.outboxkit.relay.RelayMetric;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Tags;
import java.util.EnumMap;
import java.util.Map;

/**
 * Not API: {@code outbox.relay.takeovers}, one series per reason, all registered at start (a dashboard sees zeros
 * rather than nothing), counted from the leases {@link LeaseTable#take} returns.
 */
public final class Takeovers {

    private final Map<LeaseTable.From, Counter> byReason = new EnumMap<>(LeaseTable.From.class);

    public Takeovers(Meters meters) {
        for (LeaseTable.From from : LeaseTable.From.values()) {
            if (from.tag() != null) {
                byReason.put(from, meters.counter(RelayMetric.TAKEOVERS, Tags.of("reason", from.tag())));
            }
        }
    }

    /** Counts a lease taken from another holder; a free lease is no takeover. */
    public void count(LeaseTable.Taken taken) {
        Counter c = byReason.get(taken.from());
        if (c != null) {
            c.increment();
        }
    }
}
