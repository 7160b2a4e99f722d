package dev.outboxkit.relay.cdc.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxkit.core.Secret;
import dev.outboxkit.relay.RelayOption;
import dev.outboxkit.relay.RelayOptions;
import dev.outboxkit.relay.cdc.CdcOptions;
import dev.outboxkit.runtime.DatabaseLogin;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The CDC relay's configuration, alone: read by option name, and what it derives (no database, no Kafka). */
class CdcSettingsTest {

    private static final DatabaseLogin LOGIN = new DatabaseLogin("jdbc:postgresql://db/shop", "relay", Secret.of("pw"));

    private static CdcSettings settings(Map<RelayOption<?>, Object> set) {
        // the relay's defaults plus one override, as RelayBuilder.producerConfig adds the user's
        return TestSettings.exactly(LOGIN, "relay-1", set, defaults -> {
            Map<String, Object> p = new LinkedHashMap<>(defaults);
            p.put("linger.ms", "7");
            return p;
        });
    }

    @Test
    void everyOptionIsReadByNameWithItsDefault() {
        CdcSettings s = settings(Map.of());
        assertThat(s.schema()).isEqualTo(RelayOptions.SCHEMA.defaultValue());
        assertThat(s.timing().lease()).isEqualTo(RelayOptions.LEASE_DURATION.defaultValue());
        assertThat(s.maxAttempts()).isEqualTo(RelayOptions.MAX_ATTEMPTS.defaultValue());
        assertThat(s.startTimeout()).isEqualTo(RelayOptions.START_TIMEOUT.defaultValue());
        assertThat(s.slotName()).isEqualTo(CdcOptions.SLOT_NAME.defaultValue());
        assertThat(s.publicationName()).isEqualTo(CdcOptions.PUBLICATION_NAME.defaultValue());
        assertThat(s.deleteAfterPublish()).isEqualTo(CdcOptions.DELETE_AFTER_PUBLISH.defaultValue());
        assertThat(s.heartbeatInterval()).isEqualTo(CdcOptions.HEARTBEAT_INTERVAL.defaultValue());
        assertThat(s.offsetFlushInterval()).isEqualTo(CdcOptions.OFFSET_FLUSH_INTERVAL.defaultValue());
        assertThat(s.maxBatchSize()).isEqualTo(CdcOptions.MAX_BATCH_SIZE.defaultValue());
        assertThat(s.maxInFlight()).isEqualTo(CdcOptions.MAX_IN_FLIGHT.defaultValue());
        assertThat(s.pollInterval()).isEqualTo(CdcOptions.POLL_INTERVAL.defaultValue());
        assertThat(s.shutdownTimeout()).isEqualTo(CdcOptions.SHUTDOWN_TIMEOUT.defaultValue());
    }

    @Test
    void everyCdcRelayAndSharedOptionSetIsTheOneUsed() {
        Map<RelayOption<?>, Object> set = new LinkedHashMap<>();
        set.put(CdcOptions.SLOT_NAME, "billing_slot");
        set.put(CdcOptions.PUBLICATION_NAME, "billing_pub");
        set.put(CdcOptions.DELETE_AFTER_PUBLISH, false);
        set.put(CdcOptions.HEARTBEAT_INTERVAL, Duration.ofSeconds(2));
        set.put(CdcOptions.OFFSET_FLUSH_INTERVAL, Duration.ofMillis(300));
        set.put(CdcOptions.MAX_BATCH_SIZE, 50);
        set.put(CdcOptions.MAX_IN_FLIGHT, 20);
        set.put(CdcOptions.POLL_INTERVAL, Duration.ofMillis(9));
        set.put(CdcOptions.SHUTDOWN_TIMEOUT, Duration.ofSeconds(4));
        set.put(RelayOptions.SCHEMA, "billing");
        set.put(RelayOptions.LEASE_DURATION, Duration.ofSeconds(6));
        set.put(RelayOptions.MAX_ATTEMPTS, 3);
        set.put(RelayOptions.START_TIMEOUT, Duration.ofSeconds(7));
        CdcSettings s = settings(set);
        assertThat(s.schema()).isEqualTo("billing");
        assertThat(s.timing().lease()).isEqualTo(Duration.ofSeconds(6));
        assertThat(s.maxAttempts()).isEqualTo(3);
        assertThat(s.startTimeout()).isEqualTo(Duration.ofSeconds(7));
        assertThat(s.slotName()).isEqualTo("billing_slot");
        assertThat(s.publicationName()).isEqualTo("billing_pub");
        assertThat(s.deleteAfterPublish()).isFalse();
        assertThat(s.heartbeatInterval()).isEqualTo(Duration.ofSeconds(2));
        assertThat(s.offsetFlushInterval()).isEqualTo(Duration.ofMillis(300));
        assertThat(s.maxBatchSize()).isEqualTo(50);
        assertThat(s.maxInFlight()).isEqualTo(20);
        assertThat(s.pollInterval()).isEqualTo(Duration.ofMillis(9));
        assertThat(s.shutdownTimeout()).isEqualTo(Duration.ofSeconds(4));
        assertThat(s.leaseKey()).isEqualTo("cdc/billing_slot");
        assertThat(s.outboxTable()).isEqualTo("\"billing\".\"outbox_event\"");
    }

    @Test
    void aValueTheOptionRefusesIsRefusedByName() {
        assertThatThrownBy(() -> settings(Map.of(CdcOptions.SLOT_NAME, "no-dashes")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("slotName");
        assertThatThrownBy(() -> settings(Map.of(RelayOptions.LEASE_DURATION, Duration.ofMillis(500))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("leaseDuration");
    }

    @Test
    void theLoginAndTheProducerConfigurationAreTheResolvedOnes() {
        CdcSettings s = settings(Map.of());
        assertThat(s.jdbcUrl()).isEqualTo("jdbc:postgresql://db/shop");
        assertThat(s.user()).isEqualTo("relay");
        assertThat(s.password().reveal()).isEqualTo("pw");
        assertThat(s.producerConfig()).containsEntry("linger.ms", "7");
    }

    @Test
    void logLinesNameTheRelayBySlotAndDescribeMasksTheUrl() {
        CdcSettings s = settings(Map.of(CdcOptions.SLOT_NAME, "shop_slot"));
        assertThat(s.instanceId()).isEqualTo("relay-1");
        assertThat(s.logPrefix()).isEqualTo("CDC relay on slot shop_slot");
        assertThat(s.describe()).contains("slot=shop_slot", "instance=relay-1").doesNotContain("pw");
    }
}
