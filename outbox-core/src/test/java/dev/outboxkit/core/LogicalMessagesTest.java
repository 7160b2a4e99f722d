package dev.outboxkit.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class LogicalMessagesTest {

    @Test
    void decodesTheBodyPostgresBuilds() {
        String body = "{\"v\": 1, \"id\": \"0190a5a4-7c2e-7b3a-8f00-000000000001\", \"topic\": null, "
                + "\"headers\": \"{\\\"traceparent\\\": \\\"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01\\\"}\", "
                + "\"payload\": \"{\\\"amount\\\": 10, \\\"currency\\\": \\\"EUR\\\"}\", \"event_type\": \"TransferMade\", "
                + "\"created_at\": \"2025-03-04T05:06:07.123456Z\", \"aggregate_id\": \"acc-1\", \"aggregate_type\": \"account\"}";
        OutboxEvent event = LogicalMessages.decode(body.getBytes(StandardCharsets.UTF_8));
        assertThat(event.id()).isEqualTo(UUID.fromString("0190a5a4-7c2e-7b3a-8f00-000000000001"));
        assertThat(event.aggregateType()).isEqualTo("account");
        assertThat(event.aggregateId()).isEqualTo("acc-1");
        assertThat(event.eventType()).isEqualTo("TransferMade");
        assertThat(event.topic()).isNull();
        assertThat(event.payload()).isEqualTo("{\"amount\": 10, \"currency\": \"EUR\"}");
        assertThat(event.headers()).isEqualTo(Map.of("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"));
        assertThat(event.createdAt()).isEqualTo(Instant.parse("2025-03-04T05:06:07.123456Z"));
    }

    @Test
    void refusesOtherVersionsAndMissingMembers() {
        assertThatThrownBy(() -> LogicalMessages.decode("{\"v\": 3}"))
                .isInstanceOf(InvalidEventException.class).hasMessageContaining("format version 3");
        assertThatThrownBy(() -> LogicalMessages.decode("{\"v\": 1, \"id\": \"0190a5a4-7c2e-7b3a-8f00-000000000001\"}"))
                .isInstanceOf(InvalidEventException.class).hasMessageContaining("'aggregate_type'");
        assertThatThrownBy(() -> LogicalMessages.decode("not json"))
                .isInstanceOf(InvalidEventException.class).hasMessageContaining("not JSON");
    }

    @Test
    void decodesABinaryEventOfFormatVersion2() {
        byte[] bytes = {0, 1, 2, (byte) 0xfe, (byte) 0xff, 10, 13};
        String body = "{\"v\": 2, \"id\": \"0190a5a4-7c2e-7b3a-8f00-000000000002\", \"topic\": \"orders\", \"headers\": \"{}\", "
                + "\"payload_base64\": \"" + java.util.Base64.getEncoder().encodeToString(bytes) + "\", "
                + "\"content_type\": \"application/x-protobuf\", \"event_type\": \"Placed\", "
                + "\"created_at\": \"2025-03-04T05:06:07.123456Z\", \"aggregate_id\": \"o-1\", \"aggregate_type\": \"order\"}";
        OutboxEvent event = LogicalMessages.decode(body);
        assertThat(event.isBinary()).isTrue();
        assertThat(event.payload()).isNull();
        assertThat(event.payloadBytes()).isEqualTo(bytes);
        assertThat(event.contentType()).isEqualTo("application/x-protobuf");
        assertThat(event.value()).isEqualTo(bytes);
        assertThatThrownBy(() -> LogicalMessages.decode(body.replace("\"content_type\": \"application/x-protobuf\", ", "")))
                .isInstanceOf(InvalidEventException.class).hasMessageContaining("'content_type'");
        assertThatThrownBy(() -> LogicalMessages.decode(body.replace("application/x-protobuf", "protobuf")))
                .isInstanceOf(InvalidEventException.class).hasMessageContaining("no '/'");
    }
}
