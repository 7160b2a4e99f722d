package dev.outboxkit.spring;

import dev.outboxkit.relay.Relay;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * The relay's readiness as an Actuator health indicator ({@code outboxRelay}), which the
 * auto-configuration adds to the readiness group: DOWN while the relay cannot do its work
 * (database or Kafka unreachable, no lease and no healthy standby), UP when it can. Not API.
 */
final class RelayHealthIndicator implements HealthIndicator {

    private final RelayLifecycle lifecycle;

    RelayHealthIndicator(RelayLifecycle lifecycle) {
        this.lifecycle = lifecycle;
    }

    @Override
    public Health health() {
        Relay.Health h = lifecycle.relay().health();
        Health.Builder b = h.ready() ? Health.up() : Health.down();
        return b.withDetail("live", h.live()).withDetail("ready", h.ready()).withDetail("detail", h.detail()).build();
    }
}
