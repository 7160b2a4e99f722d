package dev.outboxkit.relay.cdc.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxkit.core.InvalidEventException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The pure pieces of decoding: positions, the writer's logical decoding messages. */
class DecodingTest {

    @Test
    void onlyCommitsAndNonTransactionalMessagesAreBoundaries() {
        assertThat(position(Map.of("txId", 7L, "messageType", "COMMIT", "lsn", 10L, "lsn_proc", 10L, "lsn_commit", 10L)).boundary())
                .isTrue();
        Position insert = position(Map.of("txId", 7L, "messageType", "INSERT", "lsn", 9L, "lsn_proc", 9L, "lsn_commit", 5L));
        assertThat(insert.boundary()).isFalse();
        assertThat(insert.inTransaction()).isTrue();
        // an insert that shares the previous commit's LSN is still inside its transaction
        assertThat(position(Map.of("txId", 8L, "messageType", "INSERT", "lsn", 10L, "lsn_proc", 10L, "lsn_commit", 10L))
                .boundary()).isFalse();
        assertThat(position(Map.of("messageType", "MESSAGE", "lsn", 12L, "lsn_proc", 12L, "lsn_commit", 12L)).boundary()).isTrue();
        assertThat(position(Map.of("txId", 9L, "messageType", "MESSAGE", "lsn", 12L, "lsn_proc", 12L, "lsn_commit", 11L))
                .inTransaction()).isTrue();
        // Debezium's made-up initial offset (WAL end at start-up, nothing processed) is never a position to store
        Position initial = position(Map.of("txId", 3L, "lsn", 99L));
        assertThat(initial.boundary()).isFalse();
        assertThat(initial.inTransaction()).isFalse();
        assertThat(position(null).inTransaction()).isFalse();
    }

    @Test
    void aMessageIsCutIntoColumnsWithPayloadAndHeadersExactlyAsRendered() {
        String json = "{\"id\": \"0191f0a4-1c2b-7d3e-8f40-123456789abc\", \"topic\": null, \"headers\": {\"b\": 1, \"a\": \"x\"}, "
                + "\"payload\": {\"text\": \"h\\u00e9 \\\"q\\\"\", \"n\": [1, 2.50]}, \"event_type\": \"Placed\", "
                + "\"created_at\": \"2024-05-06T07:08:09.123456+00:00\", \"aggregate_id\": \"a-1\", \"aggregate_type\": \"order\"}";
        OutboxRow row = ChangeDecoder.fromMessage(json.getBytes(StandardCharsets.UTF_8));
        assertThat(row.payload()).isEqualTo("{\"text\": \"h\\u00e9 \\\"q\\\"\", \"n\": [1, 2.50]}");
        assertThat(row.headers()).isEqualTo("{\"b\": 1, \"a\": \"x\"}");
        assertThat(row.topic()).isNull();
        assertThat(row.toEvent().createdAt()).isEqualTo(Instant.parse("2024-05-06T07:08:09.123456Z"));
        assertThat(row.toEvent().headers()).containsExactly(Map.entry("b", "1"), Map.entry("a", "x"));
    }

    @Test
    void theWritersFormatCarriesPayloadAndHeadersAsStringsHoldingTheJsonText() {
        // LogicalMessages format 1 (the writer's LOGICAL_MESSAGE mode): "v" present, payload and headers are strings
        String body = "{\"v\": 1, \"id\": \"0190a5a4-7c2e-7b3a-8f00-000000000001\", \"topic\": null, "
                + "\"headers\": \"{\\\"tenant\\\": \\\"acme\\\"}\", \"payload\": \"{\\\"amount\\\": 10, \\\"s\\\": \\\"\\\\\\\"q\\\"}\", "
                + "\"event_type\": \"T\", \"created_at\": \"2025-03-04T05:06:07.123456Z\", \"aggregate_id\": \"acc-1\", "
                + "\"aggregate_type\": \"account\"}";
        OutboxRow row = ChangeDecoder.fromMessage(body.getBytes(StandardCharsets.UTF_8));
        assertThat(row.payload()).isEqualTo("{\"amount\": 10, \"s\": \"\\\"q\"}");
        assertThat(row.toEvent()).isEqualTo(dev.outboxkit.core.LogicalMessages.decode(body));
        // a JSON string payload of the writer's format is the string's JSON text, quotes included
        String scalar = body.replace("\"payload\": \"{\\\"amount\\\": 10, \\\"s\\\": \\\"\\\\\\\"q\\\"}\"",
                "\"payload\": \"\\\"text\\\"\"");
        assertThat(ChangeDecoder.fromMessage(scalar.getBytes(StandardCharsets.UTF_8)).payload()).isEqualTo("\"text\"");
    }

    @Test
    void scalarPayloadsKeepTheirJsonText() {
        Map<String, String> cases = new HashMap<>();
        cases.put("\"just \\\"text\\\"\"", "\"just \\\"text\\\"\"");
        cases.put("null", "null");
        cases.put("-1.5e3", "-1.5e3");
        cases.put("true", "true");
        cases.forEach((payload, expected) -> {
            String json = "{\"id\": \"0191f0a4-1c2b-7d3e-8f40-123456789abc\", \"aggregate_type\": \"t\", \"aggregate_id\": \"1\", "
                    + "\"event_type\": \"E\", \"payload\": " + payload + ", \"headers\": {}, \"created_at\": \"2024-05-06T07:08:09Z\"}";
            assertThat(ChangeDecoder.fromMessage(json.getBytes(StandardCharsets.UTF_8)).payload()).isEqualTo(expected);
        });
    }

    @Test
    void aMessageThatIsNotAnEventIsRefusedForTheDeadLetterTable() {
        // a message that is not a JSON object decodes to a row of nulls: refused for its missing id (seq 0: no row)
        OutboxRow garbage = ChangeDecoder.fromMessage("not json at all".getBytes(StandardCharsets.UTF_8));
        assertThatThrownBy(garbage::toEvent).isExactlyInstanceOf(InvalidEventException.class)
                .hasMessage("event at seq 0 has no id");
        OutboxRow noId = ChangeDecoder.fromMessage("{\"payload\": {}}".getBytes(StandardCharsets.UTF_8));
        assertThatThrownBy(noId::toEvent).isExactlyInstanceOf(InvalidEventException.class)
                .hasMessage("event at seq 0 has no id");
        OutboxRow badId = ChangeDecoder.fromMessage(message("\"nope\"", "\"2024-05-06T07:08:09Z\""));
        assertThatThrownBy(badId::toEvent).isExactlyInstanceOf(InvalidEventException.class)
                .hasMessage("event id 'nope' is not a UUID")
                .hasCauseExactlyInstanceOf(IllegalArgumentException.class);
        OutboxRow noEventType = ChangeDecoder.fromMessage(("{\"id\": \"0191f0a4-1c2b-7d3e-8f40-123456789abc\", "
                + "\"aggregate_type\": \"t\", \"aggregate_id\": \"1\", \"payload\": {}}").getBytes(StandardCharsets.UTF_8));
        assertThatThrownBy(noEventType::toEvent).isExactlyInstanceOf(InvalidEventException.class)
                .hasMessage("event 0191f0a4-1c2b-7d3e-8f40-123456789abc has no event_type");
        OutboxRow badTime = ChangeDecoder.fromMessage(message("\"0191f0a4-1c2b-7d3e-8f40-123456789abc\"", "\"last tuesday\""));
        assertThatThrownBy(badTime::toEvent).isExactlyInstanceOf(InvalidEventException.class)
                .hasMessage("created_at 'last tuesday' is not an ISO-8601 timestamp with offset")
                .hasCauseExactlyInstanceOf(DateTimeParseException.class);
    }

    /** A writer's message with every contract column, the given id and created_at (JSON values). */
    private static byte[] message(String id, String createdAt) {
        return ("{\"id\": " + id + ", \"aggregate_type\": \"t\", \"aggregate_id\": \"1\", \"event_type\": \"E\", "
                + "\"payload\": {}, \"created_at\": " + createdAt + "}").getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void lsnTextRoundTrips() {
        assertThat(Lsns.parse("16/B374D848")).isEqualTo((0x16L << 32) | 0xB374D848L);
        assertThat(Lsns.format(Lsns.parse("0/1D7F530"))).isEqualTo("0/1D7F530");
        assertThat(StateTables.flushLsn("{\"lsn_proc\":10,\"lsn_commit\":8,\"lsn\":10}")).isEqualTo(8);
        assertThat(StateTables.flushLsn("{\"lsn_proc\":10,\"lsn\":10}")).isEqualTo(10);
    }

    private static Position position(Map<String, ?> offset) {
        return Position.of(offset);
    }
}
