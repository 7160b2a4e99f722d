package dev.outboxkit.spring.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** Exposed but not granted more: the endpoint's default access is read-only, so its write operations do not exist. */
class OutboxkitEndpointReadOnlyTest extends OutboxkitEndpointAppTest {

    @Test
    void writeOperationsNeedUnrestrictedAccess() throws Exception {
        UUID parked = UUID.randomUUID();
        jdbc.update("INSERT INTO outbox_dead_letter (id, seq, aggregate_type, aggregate_id, event_type, payload, headers, created_at,"
                + " error_class, error_message, attempts, parked_by) VALUES (?, 900100, 'account', 'r1', 'Opened', '{}', '{}', now(),"
                + " 'E', 'm', 1, 'relay-1')", parked);
        HttpResponse<String> status = get("/actuator/outboxkit");
        assertThat(status.statusCode()).as(status.body()).isEqualTo(200);

        HttpResponse<String> retry = post("/actuator/outboxkit/retry", "{\"id\": \"" + parked + "\"}");
        // No write operation is mapped: Spring MVC answers 405, which this application's security (only /actuator/** is
        // open) turns into 401 when the error is dispatched to /error. Either way nothing is run.
        assertThat(retry.statusCode()).as(retry.body()).isIn(401, 405);
        assertThat(count("SELECT count(*) FROM outbox_dead_letter WHERE id = ?", parked)).as("nothing moved").isEqualTo(1);
    }
}
