package dev.outboxkit.relay.poller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.outboxkit.core.Secret;
import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.testkit.History;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.Sql;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Several claim loops in one instance ({@link PollerOptions#CLAIM_LOOPS}), each over its share of the held
 * partitions: order per aggregate under concurrent writers against real Kafka, the fence of one loop's partitions
 * refusing that loop's commit alone, a stop that finishes every loop's batch in flight, and liveness that ends with
 * any loop.
 */
@ExtendWith(OutboxTestkitExtension.class)
class ClaimLoopsTest {

    private final PipelineTest.ManualProducer kafka = new PipelineTest.ManualProducer();

    private PollingRelay.Builder relay(TestDatabase db) {
        return PollingRelay.builder()
                .jdbcUrl(db.jdbcUrl()).user(db.user()).password(Secret.of(db.password()))
                .bootstrapServers("unused:9092")
                .route(TopicRoute.of("claim-loops-test"))
                .leaseDuration(Duration.ofSeconds(45))
                .producerFactory(config -> kafka);
    }

    @Test
    void fourLoopsUnderConcurrentWritersPublishEveryEventInOrderPerAggregate(TestDatabase db, TestKafka broker)
            throws Exception {
        String topic = TestKafka.uniqueTopic("poll-loops");
        broker.createTopic(topic, 6);
        History history = new History();
        try (PollingRelay relay = PollingRelay.builder()
                .jdbcUrl(db.jdbcUrl()).user(db.user()).password(Secret.of(db.password()))
                .bootstrapServers(broker.bootstrapServers())
                .route(TopicRoute.of(topic))
                .partitions(16)
                .claimLoops(4)
                .batchSize(200) // small batches: many claims per loop, interleaved with the other loops' claims
                .build()) {
            relay.start();
            try (Writers writers = new Writers(db, history, 4, 30, 1)) {
                await().atMost(Duration.ofSeconds(90)).until(() -> writers.committed() > 6000);
                assertThat(relay.health().live()).as(relay.health().detail()).isTrue();
            }
            Outbox.awaitEmpty(db, Duration.ofSeconds(120));
            assertThat(relay.health().live()).as(relay.health().detail()).isTrue();
            // the four loops ran side by side: each one's thread is there
            assertThat(threadNames()).contains("outbox-poll-relay-0", "outbox-poll-relay-1", "outbox-poll-relay-2",
                    "outbox-poll-relay-3");
        }
        History.Report report = Topic.check(broker, List.of(topic), history, "claim loops");
        assertThat(report.lost()).as(report.summary()).isZero();
        assertThat(report.orderViolations()).as(report.summary()).isZero();
        assertThat(report.unexpected()).as(report.summary()).isZero();
        assertThat(report.intents()).isGreaterThan(6000);
    }

    @Test
    void unsetTwoLoopsClaimSideBySide(TestDatabase db) throws Exception {
        Set<Integer> shares = new HashSet<>();
        for (int i = 0; i < 24; i++) {
            UUID id = PipelineTest.insert(db, "D" + i);
            shares.add(partition(db, id, PollerOptions.PARTITIONS.defaultValue()) % 2);
        }
        assertThat(shares).as("rows in both loops' shares").containsExactlyInAnyOrder(0, 1);
        try (PollingRelay relay = relay(db).build()) { // neither partitions nor claimLoops set
            relay.start();
            await().atMost(Duration.ofSeconds(30)).until(() -> kafka.history().size() == 24);
            assertThat(claimTransactions(db)).as("each of the two default loops holds a claim").isEqualTo(2);
            assertThat(threadNames()).contains("outbox-poll-relay-0", "outbox-poll-relay-1");
            acknowledgeUntilEmpty(db);
        }
        assertThat(PipelineTest.sentIds(kafka)).hasSize(24).doesNotHaveDuplicates();
    }

    @Test
    void oneUnsetPartitionRunsOneLoopAndTwoLoopsGivenAreRefused(TestDatabase db) throws Exception {
        assertThatThrownBy(() -> relay(db).partitions(1).claimLoops(2).build())
                .hasMessageStartingWith("claimLoops must be at most partitions (1), got 2");
        for (int i = 0; i < 10; i++) {
            PipelineTest.insert(db, "O" + i);
        }
        try (PollingRelay relay = relay(db).partitions(1).build()) { // claimLoops not set: one loop, no error
            relay.start();
            await().atMost(Duration.ofSeconds(30)).until(() -> kafka.history().size() == 10);
            assertThat(claimTransactions(db)).isEqualTo(1);
            // one loop's thread carries no number
            assertThat(threadNames()).contains("outbox-poll-relay").doesNotContain("outbox-poll-relay-0");
            acknowledgeUntilEmpty(db);
        }
        assertThat(PipelineTest.sentIds(kafka)).hasSize(10).doesNotHaveDuplicates();
    }

    private void acknowledgeUntilEmpty(TestDatabase db) {
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
            while (kafka.completeNext()) {
                // acknowledge every batch sent so far
            }
            try (Connection c = db.connect()) {
                assertThat(Sql.count(c, "SELECT count(*) FROM outbox_event")).isZero();
            }
        });
    }

    private static Set<String> threadNames() {
        Set<String> threads = new HashSet<>();
        Thread.getAllStackTraces().keySet().forEach(t -> threads.add(t.getName()));
        return threads;
    }

    @Test
    void aLoopWhoseLeasesWereTakenHasItsCommitRefusedAndOnlyItsRowsArePublishedAgain(TestDatabase db) throws Exception {
        Map<UUID, Integer> partitionOf = new HashMap<>();
        for (int i = 0; i < 24; i++) {
            UUID id = PipelineTest.insert(db, "F" + i);
            partitionOf.put(id, partition(db, id, 4));
        }
        assertThat(new HashSet<>(partitionOf.values())).as("rows in every partition").hasSize(4);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (PollingRelay relay = relay(db).partitions(4).claimLoops(2).meterRegistry(registry).build()) {
            relay.start();
            // both loops hold a claim: loop 0 the rows of partitions 0 and 2, loop 1 those of 1 and 3
            await().atMost(Duration.ofSeconds(30)).until(() -> kafka.history().size() == 24);
            assertThat(claimTransactions(db)).isEqualTo(2);
            long fenceBefore;
            try (Connection c = db.connect(); Statement s = c.createStatement()) {
                fenceBefore = Sql.count(c, "SELECT max(fence) FROM outbox_relay_lease");
                // loop 1's leases run out while its batch waits for Kafka (as after a pause): a new holder may have them
                s.execute("UPDATE outbox_relay_lease SET expires_at = now() - interval '1 second'"
                        + " WHERE lease_key IN ('poll/1', 'poll/3')");
            }
            while (kafka.completeNext()) {
                // acknowledge both loops' batches
            }
            await().atMost(Duration.ofSeconds(30)).until(() ->
                    registry.get("outbox.relay.fence.rejections").counter().count() >= 1);
            acknowledgeUntilEmpty(db); // what is published again too
            assertThat(registry.get("outbox.relay.fence.rejections").counter().count()).isEqualTo(1);
            try (Connection c = db.connect()) {
                assertThat(Sql.count(c, "SELECT min(fence) FROM outbox_relay_lease WHERE lease_key IN ('poll/1', 'poll/3')"))
                        .isGreaterThan(fenceBefore);
            }
        }
        List<UUID> sent = PipelineTest.sentIds(kafka);
        List<UUID> again = sent.subList(24, sent.size());
        Set<UUID> stale = new HashSet<>();
        partitionOf.forEach((id, p) -> {
            if (p % 2 == 1) {
                stale.add(id);
            }
        });
        // loop 0's commit went through (its rows once); loop 1's was rolled back (its rows again, in their order)
        assertThat(again).containsExactlyInAnyOrderElementsOf(stale);
        assertThat(again).isSortedAccordingTo((a, b) -> Integer.compare(sent.indexOf(a), sent.indexOf(b)));
    }

    @Test
    void closeFinishesEveryLoopsBatchInFlightAndReleasesTheLeases(TestDatabase db) throws Exception {
        for (int i = 0; i < 40; i++) {
            PipelineTest.insert(db, "C" + i);
        }
        PollingRelay relay = relay(db).partitions(8).claimLoops(4).build();
        relay.start();
        await().atMost(Duration.ofSeconds(30)).until(() -> kafka.history().size() == 40);
        assertThat(claimTransactions(db)).as("each of the four loops holds a claim").isEqualTo(4);
        PipelineTest.closeWaitsForTheAcknowledgementsThenForgetsAndReleases(db, relay, kafka, 40);
    }

    /** An error no loop catches, thrown from the second loop's producer only. */
    static final class InjectedFault extends Error {
        InjectedFault() {
            super("injected: claim loop 1's producer fails");
        }
    }

    @Test
    void anyLoopThatDiesMakesTheInstanceNotLive(TestDatabase db) throws Exception {
        for (int i = 0; i < 20; i++) {
            PipelineTest.insert(db, "L" + i);
        }
        AtomicInteger made = new AtomicInteger();
        try (PollingRelay relay = relay(db).partitions(2).claimLoops(2).producerFactory(config ->
                made.getAndIncrement() == 1 ? new MockProducer<byte[], byte[]>(false, null, new ByteArraySerializer(), new ByteArraySerializer()) {
                    @Override
                    public synchronized Future<RecordMetadata> send(ProducerRecord<byte[], byte[]> record, Callback callback) {
                        throw new InjectedFault();
                    }
                } : new MockProducer<byte[], byte[]>(true, null, new ByteArraySerializer(), new ByteArraySerializer()))
                .build()) {
            relay.start();
            // the loop's thread ends with the error (as the log says); Awaitility must not take it for the test's own
            await().dontCatchUncaughtExceptions().atMost(Duration.ofSeconds(30)).until(() -> !relay.health().live());
            assertThat(relay.health().detail()).contains("outbox-poll-relay-1");
        }
    }

    /** The row's partition, as the relay computes it. */
    private static int partition(TestDatabase db, UUID id, int partitions) throws Exception {
        try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement("SELECT (hashtext(aggregate_type"
                + " || '/' || aggregate_id) & 2147483647) % ? FROM outbox_event WHERE id = ?")) {
            ps.setInt(1, partitions);
            ps.setObject(2, id);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }

    /** Open transactions that deleted outbox rows (claims waiting for Kafka). */
    private static long claimTransactions(TestDatabase db) throws Exception {
        try (Connection c = db.connect()) {
            return Sql.count(c, "SELECT count(DISTINCT pid) FROM pg_locks WHERE locktype = 'relation'"
                    + " AND relation = 'outbox_event'::regclass AND mode = 'RowExclusiveLock' AND pid <> pg_backend_pid()");
        }
    }
}
