package dev.outboxkit.relay.poller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.outboxkit.core.MissingGrantsException;
import dev.outboxkit.core.Secret;
import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.testkit.DocumentedGrants;
import dev.outboxkit.testkit.Grant;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Grants checked at start (issue 26, item 5): with each documented grant of relay-poller/README.md revoked in turn,
 * {@code start()} refuses with exactly the statement that gives it back; with all of them it starts
 * ({@code PipelineTest.theDocumentedLeastPrivilegeGrantsAreEnough} runs a relay on them).
 */
@ExtendWith(OutboxTestkitExtension.class)
class GrantsAtStartTest {

    @Test
    void eachMissingGrantStopsTheStartWithTheStatementToRun(TestDatabase db) throws Exception {
        List<Grant> grants = DocumentedGrants.pollingRelay();
        db.exec("REVOKE USAGE ON SCHEMA public FROM PUBLIC"); // PUBLIC holds it by default: then it is never missing
        List<String> named = new ArrayList<>();
        for (Grant missing : grants) {
            String role = "poll_" + db.name() + "_" + named.size();
            Grant.roleWith(db, "public", role, "pw", grants, missing);
            try (PollingRelay relay = relay(db, role).build()) {
                MissingGrantsException e = catchThrowableOfType(MissingGrantsException.class, relay::start);
                assertThat(e).as("start without " + missing).isNotNull();
                assertThat(e.grants()).as("without " + missing).containsExactly(missing.statement("public", role));
                assertThat(e.role()).isEqualTo(role);
                assertThat(e.getMessage()).contains("poll relay grants-test", missing.statement("public", role));
                named.add(e.grants().get(0));
            } finally {
                Grant.dropRole(db, role);
            }
        }
        assertThat(named).hasSize(grants.size());

        String role = "poll_" + db.name() + "_all";
        Grant.roleWith(db, "public", role, "pw", grants, null);
        try (PollingRelay relay = relay(db, role).build()) {
            relay.start(); // every documented grant: no complaint
        } finally {
            Grant.dropRole(db, role);
        }
    }

    private static PollingRelay.Builder relay(TestDatabase db, String role) {
        return PollingRelay.builder().jdbcUrl(db.jdbcUrl()).user(role).password(Secret.of("pw"))
                .bootstrapServers("127.0.0.1:9").route(TopicRoute.of("grants")).instanceId("grants-test")
                .producerFactory(config -> new MockProducer<>(true, null, new ByteArraySerializer(), new ByteArraySerializer()));
    }
}
