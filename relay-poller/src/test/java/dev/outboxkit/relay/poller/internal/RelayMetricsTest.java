package dev.outboxkit.relay.poller.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxkit.relay.RelayMetric;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

class RelayMetricsTest {

    @Test
    void thePollerRegistersExactlyTheCatalogsPollMetersTaggedPoll() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        new RelayMetrics(registry, () -> 3);
        assertThat(registry.getMeters().stream().map(m -> m.getId().getName()).distinct().toList())
                .containsExactlyInAnyOrderElementsOf(RelayMetric.of(RelayMetric.POLL).stream().map(RelayMetric::meterName).toList());
        for (Meter meter : registry.getMeters()) {
            assertThat(meter.getId().getTag("relay")).isEqualTo("poll");
        }
        assertThat(registry.get(RelayMetric.LEASES_HELD.meterName()).gauge().value()).isEqualTo(3);
        assertThat(registry.get(RelayMetric.BACKLOG.meterName()).gauge().getId().getBaseUnit()).isEqualTo("rows");
        // the takeover counter: one series per reason, registered at start
        assertThat(registry.find(RelayMetric.TAKEOVERS.meterName()).counters()).extracting(c -> c.getId().getTag("reason"))
                .containsExactlyInAnyOrder("holder_gone", "expired", "same_instance");
    }
}
