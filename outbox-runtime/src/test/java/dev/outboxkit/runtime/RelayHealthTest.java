package dev.outboxkit.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxkit.relay.Relay;
import org.junit.jupiter.api.Test;

class RelayHealthTest {

    @Test
    void beforeTheStartARelayIsLiveAndNotReady() {
        assertThat(RelayHealth.beforeStart("relay poll: ", null))
                .isEqualTo(new Relay.Health(true, false, "relay poll: not started"));
    }

    @Test
    void aRunningRelayIsReadyOnlyWithoutProblemsAndNamesEachOne() {
        assertThat(RelayHealth.running("holding 4/4 partitions", true, null, null))
                .isEqualTo(new Relay.Health(true, true, "holding 4/4 partitions"));
        assertThat(RelayHealth.running("holding 4/4 partitions", true, null, "cannot reach the database", null, "Kafka failing"))
                .isEqualTo(new Relay.Health(true, false, "holding 4/4 partitions; cannot reach the database; Kafka failing"));
    }

    @Test
    void aRelayThatIsNotLiveIsNeverReady() {
        assertThat(RelayHealth.running("streaming", false)).isEqualTo(new Relay.Health(false, false, "streaming"));
    }
}
