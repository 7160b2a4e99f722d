package dev.outboxkit.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.relay.RelayOption;
import dev.outboxkit.relay.RelayOptions;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The configuration both relays share, alone: the shared options read by name and what derives from them. */
class SharedSettingsTest {

    /** The smallest relay: its producer default is the lease's ack budget, its overrides add one value. */
    private static final class Some extends SharedSettings {
        Some(Map<RelayOption<?>, Object> set) {
            super(OptionValues.of(set), "relay-1", "some relay relay-1", defaults -> {
                Map<String, Object> p = new LinkedHashMap<>(defaults);
                p.put("linger.ms", "7");
                return p;
            }, timing -> Map.of("budget", timing.ackBudget().toMillis()), TopicRoute.defaultRoute(), Clock.systemUTC(),
                    Tracing.OFF);
        }
    }

    @Test
    void theSharedOptionsAreReadByNameWithTheirDefaults() {
        Some s = new Some(Map.of());
        assertThat(s.schema()).isEqualTo(RelayOptions.SCHEMA.defaultValue());
        assertThat(s.tables().schema()).isEqualTo(RelayOptions.SCHEMA.defaultValue());
        assertThat(s.timing().lease()).isEqualTo(RelayOptions.LEASE_DURATION.defaultValue());
        assertThat(s.maxAttempts()).isEqualTo(RelayOptions.MAX_ATTEMPTS.defaultValue());
        assertThat(s.startTimeout()).isEqualTo(RelayOptions.START_TIMEOUT.defaultValue());
        assertThat(s.instanceId()).isEqualTo("relay-1");
        assertThat(s.logPrefix()).isEqualTo("some relay relay-1");
    }

    @Test
    void theProducerDefaultsComeFromTheLeaseAndTheOverridesFollowThem() {
        Some s = new Some(Map.of(RelayOptions.LEASE_DURATION, Duration.ofSeconds(6), RelayOptions.SCHEMA, "billing"));
        assertThat(s.tables().outboxEvent()).isEqualTo("\"billing\".\"outbox_event\"");
        assertThat(s.producerConfig()).containsExactly(Map.entry("budget", 2000L), Map.entry("linger.ms", "7"));
        assertThatThrownBy(() -> s.producerConfig().put("acks", "0")).isInstanceOf(UnsupportedOperationException.class);
    }
}
