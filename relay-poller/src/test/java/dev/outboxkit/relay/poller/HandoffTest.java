package dev.outboxkit.relay.poller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.outboxkit.core.Secret;
import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.testkit.History;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.RelayLeases;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import dev.outboxkit.testkit.internal.Handoffs;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A graceful stop (what SIGTERM does) hands the stopping instance's partitions to the survivor without a gap: two
 * instances under a steady writer, the one holding half the partitions is closed, and the worst delay (Kafka record
 * timestamp minus createdAt) of the events created meanwhile is bounded. Then a new instance joins and the next
 * handoff follows. The default lease (15 s) keeps expiry out of it. Before, a survivor found out at its next look
 * (pg_locks every 200 ms, heartbeat every second); now the release announces itself at its commit, which the test
 * checks first.
 */
@ExtendWith(OutboxTestkitExtension.class)
class HandoffTest {

    /** The bound for a loaded CI machine; the target on a quiet one is 250 ms. */
    private static final long MAX_GAP_MILLIS = 2_000;

    @Test
    void aStoppingInstanceHandsItsPartitionsOverWithoutAGap(TestDatabase db, TestKafka kafka) throws Exception {
        String topic = TestKafka.uniqueTopic("poll-handoff");
        kafka.createTopic(topic, 4);
        History history = new History();
        List<Handoffs.Window> stops = new ArrayList<>();
        List<Handoffs.Window> joins = new ArrayList<>();
        List<PollingRelay> running = new ArrayList<>();
        try (Writers writers = new Writers(db, history, 2, 20, 10); Connection listener = db.connect()) {
            Handoffs.listen(listener);
            running.add(start(db, kafka, topic, "handoff-0"));
            running.add(start(db, kafka, topic, "handoff-1"));
            awaitShared(db, running);
            for (int i = 0; i < Handoffs.COUNT; i++) {
                Handoffs.Window stop = Handoffs.stop(running.remove(0)::close, listener);
                stops.add(stop);
                awaitShared(db, running);
                // the stop's window closes before the next join moves partitions again
                await().atMost(Duration.ofSeconds(10)).until(() -> System.currentTimeMillis() > stop.toMillis() + 1_000);
                long joined = System.currentTimeMillis();
                running.add(start(db, kafka, topic, "handoff-" + (i + 2)));
                awaitShared(db, running);
                joins.add(new Handoffs.Window(joined, System.currentTimeMillis()));
                await().atMost(Duration.ofSeconds(10)).until(() -> System.currentTimeMillis() > joins.get(joins.size() - 1)
                        .toMillis() + 1_000);
            }
            writers.close();
            Outbox.awaitEmpty(db, Duration.ofSeconds(60));
        } finally {
            running.forEach(PollingRelay::close);
        }
        List<ConsumerRecord<byte[], byte[]>> records = Topic.feed(kafka, List.of(topic), history);
        History.Report report = history.check();
        assertThat(report.ok()).as(report.summary()).isTrue();
        List<Long> stopGaps = Handoffs.worstDelays(records, stops, 0);
        List<Long> joinGaps = Handoffs.worstDelays(records, joins, 0);
        System.out.printf("HANDOFF poll graceful stop: worst delay %s; join (rebalance): worst delay %s; %d events%n",
                Handoffs.summary(stopGaps), Handoffs.summary(joinGaps), records.size());
        assertThat(stopGaps).as("worst delay across each graceful stop").allSatisfy(g -> assertThat(g).isLessThan(MAX_GAP_MILLIS));
    }

    /**
     * A release the database missed (here refused by a trigger; in production a failover mid-handoff) is given back
     * at the next heartbeat that reaches it: the joining instance gets its share long before the leases (60 s) would
     * expire. Before, it waited for the expiry.
     */
    @Test
    void aReleaseTheDatabaseMissedIsGivenBackAtTheNextHeartbeat(TestDatabase db, TestKafka kafka) throws Exception {
        String topic = TestKafka.uniqueTopic("poll-missed-release");
        kafka.createTopic(topic, 1);
        Duration lease = Duration.ofSeconds(60);
        db.execute("""
                CREATE FUNCTION refuse_release() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                  IF OLD.holder = 'missed-a' THEN RAISE EXCEPTION 'release refused by the test'; END IF;
                  RETURN OLD;
                END $$""");
        List<PollingRelay> running = new ArrayList<>();
        try {
            running.add(start(db, kafka, topic, "missed-a", lease));
            awaitShared(db, running);
            db.execute("CREATE TRIGGER refuse_release BEFORE DELETE ON outbox_relay_lease FOR EACH ROW "
                    + "EXECUTE FUNCTION refuse_release()");
            running.add(start(db, kafka, topic, "missed-b", lease));
            // a gives up half its partitions, and the database keeps its leases
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20)).untilAsserted(() -> {
                assertThat(running.get(0).health().detail()).contains("holding 32/64");
                assertThat(RelayLeases.partitionsByHolder(db)).containsEntry("missed-a", 64);
            });
            db.execute("DROP TRIGGER refuse_release ON outbox_relay_lease");
            long dropped = System.nanoTime();
            awaitShared(db, running);
            assertThat(Duration.ofNanos(System.nanoTime() - dropped)).as("b's share, after the release went through")
                    .isLessThan(Duration.ofSeconds(20));
        } finally {
            running.forEach(PollingRelay::close);
            db.execute("DROP TRIGGER IF EXISTS refuse_release ON outbox_relay_lease");
        }
    }

    private static PollingRelay start(TestDatabase db, TestKafka kafka, String topic, String id) {
        return start(db, kafka, topic, id, null);
    }

    /** {@code lease}: null for the default. */
    private static PollingRelay start(TestDatabase db, TestKafka kafka, String topic, String id, Duration lease) {
        PollingRelay.Builder builder = PollingRelay.builder()
                .jdbcUrl(db.jdbcUrl()).user(db.user()).password(Secret.of(db.password()))
                .bootstrapServers(kafka.bootstrapServers())
                .route(TopicRoute.of(topic))
                .instanceId(id);
        if (lease != null) {
            builder.leaseDuration(lease);
        }
        PollingRelay relay = builder.build();
        relay.start();
        return relay;
    }

    /** Until the running instances hold every partition, in fair shares. */
    private static void awaitShared(TestDatabase db, List<PollingRelay> running) {
        int share = 64 / running.size();
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20)).untilAsserted(() -> {
            Map<String, Integer> held = RelayLeases.partitionsByHolder(db);
            assertThat(held).hasSize(running.size()).allSatisfy((holder, n) -> assertThat(n).isEqualTo(share));
        });
    }
}
