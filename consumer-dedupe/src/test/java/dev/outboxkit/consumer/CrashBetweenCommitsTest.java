package dev.outboxkit.consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.outboxkit.testkit.JavaProcess;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A consumer process killed with SIGKILL after its database commit and before its offset commit:
 * the batch comes back to the next member of the group, and the inbox skips every event of it.
 */
@ExtendWith(OutboxTestkitExtension.class)
class CrashBetweenCommitsTest {

    @Test
    void killedBetweenDatabaseCommitAndOffsetCommitEveryEffectStillHappensExactlyOnce(TestDatabase db, TestKafka kafka)
            throws Exception {
        Projection.Scenario run = Projection.scenario(db, kafka, "crash", 2, 400, 8);
        String topic = run.topic();
        List<Projection.Sent> events = run.events();
        String group = "g-" + topic;

        try (JavaProcess child = JavaProcess.start("crashing-consumer", CrashingConsumerMain.class,
                List.of(kafka.bootstrapServers(), db.jdbcUrl(), db.user(), db.password(), topic, group, "4"),
                List.of(), Map.of())) {
            assertThat(child.awaitOutput(CrashingConsumerMain.MARKER, Duration.ofSeconds(180)))
                    .as("child output:\n" + child.output()).isTrue();
            child.kill9();
        }

        // What the dead consumer left: applied in the database, not committed in Kafka.
        Map<TopicPartition, Long> committed = Consumers.committed(kafka, group);
        long appliedNotCommitted = 0;
        try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement(
                "SELECT count(*) FROM processed_event WHERE consumer_group = ? AND kafka_partition = ? AND kafka_offset >= ?")) {
            for (int p = 0; p < 2; p++) {
                ps.setString(1, group);
                ps.setInt(2, p);
                ps.setLong(3, committed.getOrDefault(new TopicPartition(topic, p), 0L));
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    appliedNotCommitted += rs.getLong(1);
                }
            }
        }
        assertThat(appliedNotCommitted).as("the killed batch was committed in the database only").isPositive();
        long appliedBefore = db.count("SELECT count(*) FROM effect_log");
        assertThat(appliedBefore).isLessThan(events.size());

        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (DedupeConsumer survivor = Consumers.builder(kafka, db, topic, group)
                .batchHandler(Projection.batchHandler())
                .meterRegistry(registry)
                .build()) {
            survivor.start();
            await().atMost(Duration.ofSeconds(180)).until(() -> Consumers.count(registry, "outbox.consumer.applied", group)
                    + appliedBefore >= events.size());
        }
        assertThat(Consumers.count(registry, "outbox.consumer.duplicates", group))
                .as("exactly the batch the dead consumer committed to the database came back and was skipped")
                .isEqualTo(appliedNotCommitted);
        Projection.assertExactlyOnce(events, kafka.readAll(List.of(topic)), db);
    }
}
