package dev.outboxkit.spring.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.http.HttpResponse;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.test.context.TestPropertySource;

/**
 * The Actuator endpoint {@code outboxkit} over real HTTP (Tomcat, PostgreSQL): status, dead letters, retry, discard and
 * replay, each done by outbox-ops' OutboxAdmin in the application's database.
 */
@TestPropertySource(properties = "management.endpoint.outboxkit.access=unrestricted")
class OutboxkitEndpointTest extends OutboxkitEndpointAppTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    private void park(UUID id, long seq) {
        jdbc.update("INSERT INTO outbox_dead_letter (id, seq, aggregate_type, aggregate_id, event_type, payload, headers, created_at,"
                + " error_class, error_message, attempts, parked_by) VALUES (?, ?, 'account', 'e1', 'Opened',"
                + " '{\"secret\": \"do-not-print\"}', '{}', now(), 'org.apache.kafka.common.errors.RecordTooLargeException', 'too large', 3, 'relay-1')",
                id, seq);
    }

    @Test
    void statusDeadLettersRetryDiscardAndReplayOverHttp() throws Exception {
        UUID retried = UUID.randomUUID();
        UUID discarded = UUID.randomUUID();
        // seq values far above anything the identity column hands out in this test's database
        park(retried, 900_001);
        park(discarded, 900_002);

        HttpResponse<String> status = get("/actuator/outboxkit");
        assertThat(status.statusCode()).as(status.body()).isEqualTo(200);
        JsonNode s = JSON.readTree(status.body());
        assertThat(s.get("schema").asText()).isEqualTo("public");
        assertThat(s.get("deadLetters").asLong()).isEqualTo(count("SELECT count(*) FROM outbox_dead_letter"));
        assertThat(s.get("backlog").asLong()).isEqualTo(count("SELECT count(*) FROM outbox_event WHERE published_at IS NULL"));
        assertThat(s.has("leases")).isTrue();

        HttpResponse<String> list = get("/actuator/outboxkit/dead-letters?limit=1000");
        assertThat(list.statusCode()).as(list.body()).isEqualTo(200);
        assertThat(list.body()).contains(retried.toString()).contains("RecordTooLargeException").doesNotContain("do-not-print");

        HttpResponse<String> retry = post("/actuator/outboxkit/retry", "{\"id\": \"" + retried + "\"}");
        assertThat(retry.statusCode()).as(retry.body()).isEqualTo(200);
        assertThat(retry.body()).contains(retried.toString()).contains("900001");
        assertThat(count("SELECT seq FROM outbox_event WHERE id = ?", retried)).as("back at its seq").isEqualTo(900_001);
        assertThat(count("SELECT count(*) FROM outbox_dead_letter WHERE id = ?", retried)).isZero();

        HttpResponse<String> again = post("/actuator/outboxkit/retry", "{\"id\": \"" + retried + "\"}");
        assertThat(again.statusCode()).as("no longer parked: " + again.body()).isEqualTo(404);
        assertThat(again.body()).contains(retried.toString());

        HttpResponse<String> badId = post("/actuator/outboxkit/discard", "{\"id\": \"not-a-uuid\"}");
        assertThat(badId.statusCode()).as(badId.body()).isEqualTo(400);
        assertThat(badId.body()).contains("not an event id");

        HttpResponse<String> discard = post("/actuator/outboxkit/discard", "{\"id\": \"" + discarded + "\", \"reason\": \"topic deleted\"}");
        assertThat(discard.statusCode()).as(discard.body()).isEqualTo(200);
        assertThat(count("SELECT count(*) FROM outbox_dead_letter WHERE id = ?", discarded)).isZero();

        // replay: a row a MARK-mode relay kept
        UUID kept = UUID.randomUUID();
        jdbc.update("INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload, published_at)"
                + " VALUES (?, 'account', 'e2', 'Opened', '{}', now())", kept);
        HttpResponse<String> replay = post("/actuator/outboxkit/replay", "{\"id\": \"" + kept + "\"}");
        assertThat(replay.statusCode()).as(replay.body()).isEqualTo(200);
        assertThat(count("SELECT count(*) FROM outbox_event WHERE id = ? AND published_at IS NULL", kept)).isEqualTo(1);
        HttpResponse<String> notKept = post("/actuator/outboxkit/replay", "{\"id\": \"" + discarded + "\"}");
        assertThat(notKept.statusCode()).as(notKept.body()).isEqualTo(404);
        assertThat(notKept.body()).contains("NOT_KEPT");

        assertThat(post("/actuator/outboxkit/explode", "{}").statusCode()).isEqualTo(404);
    }
}
