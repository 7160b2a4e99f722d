package dev.outboxkit.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The test kit's old names, kept until 0.2.0, give exactly what their new names give. */
class DeprecatedNamesTest {

    @Test
    @SuppressWarnings("removal")
    void theOldNamesOfTheCdcRelaysGrantsAndLeaseKeyAreTheNewOnes() {
        assertThat(DocumentedGrants.walRelay(true)).isEqualTo(DocumentedGrants.cdcRelay(true)).isNotEmpty();
        assertThat(DocumentedGrants.walRelay(false)).isEqualTo(DocumentedGrants.cdcRelay(false));
        assertThat(DocumentedGrants.reconcileProducer()).isEqualTo(DocumentedGrants.reconcileOutboxDatabase()).isNotEmpty();
        assertThat(RelayLeases.walRelayKey("s1")).isEqualTo(RelayLeases.cdcRelayKey("s1")).isEqualTo("cdc/s1");
    }
}
