package dev.outboxkit.relay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxkit.core.OutboxTables;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ProducerSafetyTest {

    @Test
    void unsafeProducerOverridesAreRefusedByKey() {
        assertThatThrownBy(() -> ProducerSafety.producerConfig("b:9092", Map.of("acks", "1")))
                .isInstanceOf(UnsafeConfigurationException.class).hasMessageContaining("acks=1");
        assertThatThrownBy(() -> ProducerSafety.producerConfig("b:9092", Map.of("enable.idempotence", "false")))
                .hasMessageContaining("enable.idempotence");
        assertThatThrownBy(() -> ProducerSafety.producerConfig("b:9092", Map.of("max.in.flight.requests.per.connection", "6")))
                .hasMessageContaining("max.in.flight.requests.per.connection");
        assertThatThrownBy(() -> ProducerSafety.producerConfig("b:9092", Map.of("transactional.id", "x")))
                .hasMessageContaining("transactional.id");
        assertThat(ProducerSafety.producerConfig("b:9092", Map.of("acks", "-1", "linger.ms", "1")))
                .containsEntry("linger.ms", "1").containsEntry("bootstrap.servers", "b:9092");
    }

    @Test
    void bothRelaysStartFromOneRequestInFlightAndMayRaiseItToFive() {
        assertThat(ProducerSafety.defaults()).containsEntry("max.in.flight.requests.per.connection", "1");
        assertThat(ProducerSafety.producerConfig("b:9092", Map.of()))
                .containsEntry("max.in.flight.requests.per.connection", "1");
        assertThat(ProducerSafety.producerConfig("b:9092", Map.of("max.in.flight.requests.per.connection", "5")))
                .containsEntry("max.in.flight.requests.per.connection", "5");
    }

    @Test
    void theRelaysDefaultSchemaIsTheTablesDefault() {
        assertThat(RelayOptions.SCHEMA.defaultValue()).isEqualTo(OutboxTables.DEFAULT_SCHEMA);
    }
}
