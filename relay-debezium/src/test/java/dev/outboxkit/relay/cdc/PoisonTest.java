package dev.outboxkit.relay.cdc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Events Kafka can never take are parked in outbox_dead_letter with the reason; the rest keeps flowing. */
@ExtendWith(OutboxTestkitExtension.class)
class PoisonTest {

    @Test
    void poisonIsParkedNotDroppedAndNotBlocking(TestDatabase db, TestKafka kafka) throws Exception {
        String topic = TestKafka.uniqueTopic("cdc-poison");
        kafka.createTopic(topic, 2);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (CdcRelay relay = CdcTestSupport.relay(db, kafka).route(TopicRoute.of(topic)).meterRegistry(registry).build()) {
            relay.start();
            await().atMost(Duration.ofSeconds(90)).until(() -> relay.health().ready());
            try (Connection c = db.connect(); Statement s = c.createStatement()) {
                c.setAutoCommit(false);
                s.execute("INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload) VALUES "
                        + "('00000000-0000-7000-8000-000000000001', 'order', 'a', 'Fine', '{\"n\": 1}')");
                // a header that reuses a reserved name: the mapping refuses it
                s.execute("INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload, headers) VALUES "
                        + "('00000000-0000-7000-8000-000000000002', 'order', 'a', 'Reserved', '{}', '{\"id\": \"spoof\"}')");
                // a topic the table's check allows but Kafka does not
                s.execute("INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload, topic) VALUES "
                        + "('00000000-0000-7000-8000-000000000003', 'order', 'a', 'BadTopic', '{}', '..')");
                // larger than the producer's max.request.size (1 MiB)
                s.execute("INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload) VALUES "
                        + "('00000000-0000-7000-8000-000000000004', 'order', 'a', 'Huge', "
                        + "jsonb_build_object('blob', repeat('x', 1200000)))");
                // a logical decoding message that is not an event at all
                s.execute("SELECT pg_logical_emit_message(true, 'outboxkit', 'not json')");
                s.execute("INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload) VALUES "
                        + "('00000000-0000-7000-8000-000000000005', 'order', 'a', 'FineToo', '{\"n\": 2}')");
                c.commit();
            }
            await().atMost(Duration.ofSeconds(90)).until(() -> CdcTestSupport.count(db, "SELECT count(*) FROM outbox_dead_letter") == 4
                    && CdcTestSupport.count(db, "SELECT count(*) FROM outbox_event") == 0);
            var records = CdcTestSupport.await(kafka, topic, 2, Duration.ofSeconds(60));
            assertThat(records).extracting(r -> CdcTestSupport.header(r, "eventType")).containsExactly("Fine", "FineToo");
            assertThat(registry.get("outbox.relay.dead_lettered").counter().count()).isEqualTo(4);
            assertThat(registry.get("outbox.relay.published").counter().count()).isEqualTo(2);
        } finally {
            CdcTestSupport.dropSlot(db);
        }
        Map<String, String> reasons = new HashMap<>();
        try (Connection c = db.connect(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(
                "SELECT event_type, error_class, error_message, parked_by, seq FROM outbox_dead_letter")) {
            while (rs.next()) {
                reasons.put(rs.getString(1), rs.getString(2) + ": " + rs.getString(3));
                assertThat(rs.getString(4)).isNotBlank();
            }
        }
        assertThat(reasons).containsOnlyKeys("Reserved", "BadTopic", "Huge", "unknown");
        assertThat(reasons.get("Reserved")).startsWith("dev.outboxkit.core.InvalidEventException").contains("reserved");
        assertThat(reasons.get("BadTopic")).startsWith("dev.outboxkit.core.InvalidEventException").contains("'..'");
        assertThat(reasons.get("Huge")).startsWith("org.apache.kafka.common.errors.RecordTooLargeException");
        assertThat(reasons.get("unknown")).startsWith("dev.outboxkit.core.InvalidEventException");
        assertThat(List.copyOf(reasons.keySet())).hasSize(4);
    }
}
