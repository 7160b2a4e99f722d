package dev.outboxkit.relay.poller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.outboxkit.core.Secret;
import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.testkit.History;
import dev.outboxkit.testkit.OutboxRows;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** G7: rows Kafka refuses for good are parked with their reason, and everything else keeps flowing. */
@ExtendWith(OutboxTestkitExtension.class)
class PoisonTest {

    @Test
    void oversizedPayloadIllegalTopicAndReservedHeaderAreParkedAndTheRowsBehindThemArePublished(TestDatabase db, TestKafka kafka)
            throws Exception {
        String prefix = TestKafka.uniqueTopic("poison");
        String orders = prefix + ".order";
        // The topic takes at most 10 kB per batch; the relay's producer allows 1 MB, so only the broker refuses.
        kafka.createTopic(orders, 2, (short) -1, Map.of("max.message.bytes", "10000"));
        // Random hex does not compress: 40 kB stays far above the topic's limit even with lz4.
        byte[] noise = new byte[20_000];
        new SecureRandom().nextBytes(noise);
        String oversized = "{\"blob\": \"" + HexFormat.of().formatHex(noise) + "\"}";

        History history = new History();
        Map<String, UUID> poison = new HashMap<>();
        try (Connection c = db.connect()) {
            c.setAutoCommit(false);
            history.committed(OutboxRows.insert(c, "order", "o-1", "{\"step\": 1}"), "o-1", 1);
            poison.put("org.apache.kafka.common.errors.RecordTooLargeException", OutboxRows.insert(c, "order", "o-1", oversized));
            history.committed(OutboxRows.insert(c, "order", "o-1", "{\"step\": 3}"), "o-1", 3);
            // The route makes "<prefix>.bad type" of this aggregate type: not a legal topic name.
            poison.put("dev.outboxkit.core.InvalidEventException",
                    OutboxRows.insert(c, "bad type", "x-1", "created", "{}", null, null));
            UUID reservedHeader = OutboxRows.insert(c, "order", "o-2", "created", "{\"step\": 1}", "{\"id\": \"spoofed\"}", null);
            history.committed(OutboxRows.insert(c, "order", "o-2", "{\"step\": 2}"), "o-2", 2);
            for (int i = 0; i < 300; i++) {
                history.committed(OutboxRows.insert(c, "order", "o-" + (10 + i % 30), "{\"i\": " + i + "}"), "o-" + (10 + i % 30), i);
            }
            c.commit();
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            try (PollingRelay relay = PollingRelay.builder()
                    .jdbcUrl(db.jdbcUrl()).user(db.user()).password(Secret.of(db.password()))
                    .bootstrapServers(kafka.bootstrapServers())
                    .route(TopicRoute.of(prefix + ".${aggregateType}"))
                    .instanceId("poison-relay")
                    .meterRegistry(registry)
                    .build()) {
                relay.start();
                Outbox.awaitEmpty(db, Duration.ofSeconds(90));
                // the counter moves just after the parking commit that emptied the outbox: wait for it too
                await("3 parked events counted").atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                        assertThat(registry.get("outbox.relay.dead_lettered").counter().count()).isEqualTo(3));
            }
            try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(
                    "SELECT id, error_class, error_message, attempts, parked_by, payload::text = '" + oversized.replace("'", "''")
                            + "'::jsonb::text FROM outbox_dead_letter ORDER BY seq")) {
                Map<UUID, String> parked = new HashMap<>();
                while (rs.next()) {
                    UUID id = rs.getObject(1, UUID.class);
                    parked.put(id, rs.getString(2));
                    assertThat(rs.getString(3)).isNotBlank();
                    assertThat(rs.getInt(4)).isBetween(1, 2);
                    assertThat(rs.getString(5)).isEqualTo("poison-relay");
                    if (id.equals(poison.get("org.apache.kafka.common.errors.RecordTooLargeException"))) {
                        assertThat(rs.getBoolean(6)).as("the parked row keeps its payload").isTrue();
                    }
                }
                assertThat(parked).containsOnlyKeys(poison.get("org.apache.kafka.common.errors.RecordTooLargeException"),
                        poison.get("dev.outboxkit.core.InvalidEventException"), reservedHeader);
                poison.forEach((errorClass, id) -> assertThat(parked.get(id)).isEqualTo(errorClass));
                assertThat(parked.get(reservedHeader)).isEqualTo("dev.outboxkit.core.InvalidEventException");
            }
            c.commit();
        }
        Topic.check(kafka, List.of(orders), history, "poison");
    }
}
