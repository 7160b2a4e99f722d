package dev.outboxkit.writer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.json.JsonMapper;
import dev.outboxkit.core.InvalidEventException;
import org.junit.jupiter.api.Test;

/** The writer serialises object payloads with the serializer it was given, and checks what that returns. No database. */
class PayloadSerializerTest {

    record Opened(String accountId, long openingBalance) {
    }

    private static OutboxMessage opened() {
        return OutboxMessage.builder("account", "acc-1", "Opened").payload(new Opened("acc-1", 5)).build();
    }

    @Test
    void theGivenSerializerWritesThePayloadAndTheHeadersStayPlain() {
        JsonMapper snake = JsonMapper.builder().propertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE).build();
        OutboxWriter writer = OutboxWriter.builder().payloadSerializer(snake::writeValueAsString).build();
        OutboxMessage m = OutboxMessage.builder("account", "acc-1", "Opened").payload(new Opened("acc-1", 5))
                .header("tenantId", "t-1").build();
        assertThat(writer.prepare(m).payload()).isEqualTo("{\"account_id\":\"acc-1\",\"opening_balance\":5}");
        assertThat(writer.prepare(m).headers()).isEqualTo("{\"tenantId\":\"t-1\"}");
        assertThat(OutboxWriter.builder().build().prepare(opened()).payload())
                .isEqualTo("{\"accountId\":\"acc-1\",\"openingBalance\":5}");
    }

    @Test
    void whatTheSerializerReturnsIsCheckedAndItsFailuresAreInvalidEvents() {
        assertThatThrownBy(() -> OutboxWriter.builder().payloadSerializer(p -> "{\"a\":").build().prepare(opened()))
                .isInstanceOf(InvalidEventException.class).hasMessageContaining("payload of OutboxMessage[");
        assertThatThrownBy(() -> OutboxWriter.builder().payloadSerializer(p -> null).build().prepare(opened()))
                .isInstanceOf(InvalidEventException.class).hasMessageContaining("serialised to null");
        assertThatThrownBy(() -> OutboxWriter.builder().payloadSerializer(p -> {
            throw new IllegalStateException("no serializer for Opened");
        }).build().prepare(opened()))
                .isInstanceOf(InvalidEventException.class)
                .hasMessageContaining("could not be serialised by the writer's payload serializer: no serializer for Opened");
    }
}
