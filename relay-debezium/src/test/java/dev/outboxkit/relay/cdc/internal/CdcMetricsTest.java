package dev.outboxkit.relay.cdc.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxkit.relay.RelayMetric;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

class CdcMetricsTest {

    @Test
    void theCdcRelayRegistersExactlyTheCatalogsCdcMetersTaggedCdcAndSlot() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        new CdcMetrics(registry, "s1");
        assertThat(registry.getMeters().stream().map(m -> m.getId().getName()).distinct().toList())
                .containsExactlyInAnyOrderElementsOf(RelayMetric.of(RelayMetric.CDC).stream().map(RelayMetric::meterName).toList());
        for (Meter meter : registry.getMeters()) {
            assertThat(meter.getId().getTag("relay")).isEqualTo("cdc");
            assertThat(meter.getId().getTag("slot")).isEqualTo("s1");
        }
        assertThat(registry.get(RelayMetric.WAL_STATUS.meterName()).gauge().value()).isEqualTo(CdcMetrics.WAL_NO_SLOT);
        // the takeover counter: one series per reason, registered at start
        assertThat(registry.find(RelayMetric.TAKEOVERS.meterName()).counters()).extracting(c -> c.getId().getTag("reason"))
                .containsExactlyInAnyOrder("holder_gone", "expired", "same_instance");
    }
}
