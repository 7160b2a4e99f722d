package dev.outboxkit.consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Timestamp;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(OutboxTestkitExtension.class)
class RetentionTest {

    private static final Duration WEEK = Duration.ofDays(7);

    @Test
    void purgesOnlyOldIdsTheGroupHasCommittedPast(TestDatabase db, TestKafka kafka) throws Exception {
        String topic = TestKafka.uniqueTopic("retention");
        kafka.createTopic(topic, 3);
        String group = "g-" + topic;
        Instant now = Instant.now();
        Instant old = now.minus(Duration.ofDays(10));
        // partition 0: offsets 0..9, old; the group committed offset 6 (records 0..5 are behind it)
        for (int offset = 0; offset < 10; offset++) {
            record(db, group, old, topic, 0, offset);
        }
        // partition 1: old, but the group never committed anything there
        record(db, group, old, topic, 1, 0);
        // partition 2: committed past, but recent
        record(db, group, now.minus(Duration.ofDays(1)), topic, 2, 0);
        // old, but recorded without coordinates
        record(db, group, old, null, null, null);
        // another group's old ids are not ours to purge
        record(db, "other-" + group, old, topic, 0, 0);
        try (Admin admin = kafka.admin()) {
            admin.alterConsumerGroupOffsets(group, Map.of(
                    new TopicPartition(topic, 0), new OffsetAndMetadata(6),
                    new TopicPartition(topic, 2), new OffsetAndMetadata(1))).all().get(60, TimeUnit.SECONDS);

            // the dry run counts by the same rule and deletes nothing
            InboxRetention.Result dry = InboxRetention.dryRun(db.dataSource(), "public", group, WEEK, admin,
                    Clock.fixed(now, ZoneOffset.UTC));
            assertThat(dry).isEqualTo(new InboxRetention.Result(6, 5, 1));
            assertThat(db.count("SELECT count(*) FROM processed_event")).isEqualTo(14);

            InboxRetention.Result result = InboxRetention.purge(db.dataSource(), "public", group, WEEK, admin,
                    Clock.fixed(now, ZoneOffset.UTC));

            assertThat(result.purged()).isEqualTo(6);
            assertThat(result.keptNotCommitted()).as("offsets 6..9 of partition 0 and partition 1").isEqualTo(5);
            assertThat(result.keptWithoutCoordinates()).isEqualTo(1);
            assertThat(db.count("SELECT count(*) FROM processed_event WHERE consumer_group = '" + group
                    + "' AND kafka_partition = 0 AND kafka_offset < 6")).isZero();
            assertThat(db.count("SELECT count(*) FROM processed_event")).isEqualTo(14 - 6);

            // the group moves on: the rest of partition 0 becomes purgeable
            admin.alterConsumerGroupOffsets(group, Map.of(new TopicPartition(topic, 0), new OffsetAndMetadata(10)))
                    .all().get(60, TimeUnit.SECONDS);
            InboxRetention.Result second = InboxRetention.purge(db.dataSource(), "public", group, WEEK, admin,
                    Clock.fixed(now, ZoneOffset.UTC));
            assertThat(second.purged()).isEqualTo(4);
            assertThat(second.keptNotCommitted()).isEqualTo(1);
        }
    }

    @Test
    void theConsumersOwnPurgeRemovesWhatItAppliedAndCommittedLongAgo(TestDatabase db, TestKafka kafka) throws Exception {
        Projection.Scenario run = Projection.scenario(db, kafka, "retention-run", 2, 50, 3);
        String topic = run.topic();
        List<Projection.Sent> events = run.events();
        String group = "g-" + topic;
        // applied "ten days ago" (the clock says so); events themselves are fresh, so not late
        Instant tenDaysAgo = Instant.now().minus(Duration.ofDays(10));
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (DedupeConsumer consumer = Consumers.builder(kafka, db, topic, group)
                .batchHandler(Projection.batchHandler())
                .clock(Clock.fixed(tenDaysAgo, ZoneOffset.UTC))
                .retention(Duration.ofDays(30))
                .meterRegistry(registry)
                .build()) {
            consumer.start();
            await().atMost(Duration.ofSeconds(120)).until(
                    () -> Consumers.count(registry, "outbox.consumer.applied", group) == 50);
        }
        // a consumer with today's clock and a week of retention: everything is old and committed
        try (DedupeConsumer consumer = Consumers.builder(kafka, db, topic, group)
                .batchHandler(Projection.batchHandler())
                .retention(WEEK)
                .build()) {
            InboxRetention.Result result = consumer.purgeExpired();
            assertThat(result.purged()).isEqualTo(50);
            assertThat(result.keptNotCommitted()).isZero();
        }
        assertThat(db.count("SELECT count(*) FROM processed_event")).isZero();
    }

    private static void record(TestDatabase db, String group, Instant processedAt, String topic, Integer partition,
                               Integer offset) throws Exception {
        try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement("INSERT INTO processed_event "
                + "(consumer_group, event_id, processed_at, topic, kafka_partition, kafka_offset) VALUES (?, ?, ?, ?, ?, ?)")) {
            ps.setString(1, group);
            ps.setObject(2, UUID.randomUUID());
            ps.setTimestamp(3, Timestamp.from(processedAt));
            ps.setString(4, topic);
            ps.setObject(5, partition);
            ps.setObject(6, offset == null ? null : offset.longValue());
            ps.executeUpdate();
        }
    }
}
