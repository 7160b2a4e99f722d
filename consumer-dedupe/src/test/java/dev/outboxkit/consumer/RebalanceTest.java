package dev.outboxkit.consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.common.GroupState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Three consumer instances in one group while events keep arriving (some twice), with members
 * joining and leaving during the run: every effect exactly once, per-account order kept.
 */
@ExtendWith(OutboxTestkitExtension.class)
class RebalanceTest {

    private static final Duration REBALANCE_WAIT = Duration.ofSeconds(180);
    /** A rebalance in progress: the classic protocol's two phases and the consumer protocol's (KIP-848). */
    private static final Set<GroupState> REBALANCING = EnumSet.of(GroupState.PREPARING_REBALANCE,
            GroupState.COMPLETING_REBALANCE, GroupState.ASSIGNING, GroupState.RECONCILING);

    @Test
    void threeInstancesWithRebalancesDuringTheRunApplyEveryEventExactlyOnce(TestDatabase db, TestKafka kafka) throws Exception {
        Projection.create(db);
        String topic = TestKafka.uniqueTopic("rebalance");
        kafka.createTopic(topic, 6);
        String group = "g-" + topic;
        List<Projection.Sent> events = Projection.events(topic, 6000, 30);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        List<DedupeConsumer> members = new ArrayList<>();
        ExecutorService producer = Executors.newSingleThreadExecutor();
        try {
            // a steady stream, in slices; every fifth slice is published twice (relay crash duplicates)
            Future<?> producing = producer.submit(() -> {
                int slice = 200;
                for (int from = 0, n = 0; from < events.size(); from += slice, n++) {
                    List<Projection.Sent> part = events.subList(from, Math.min(events.size(), from + slice));
                    Projection.send(kafka, part);
                    if (n % 5 == 0) {
                        Projection.send(kafka, part);
                    }
                    sleepQuietly(250); // pacing: a stream arriving over the run, not a race
                }
            });
            members.add(start(kafka, db, topic, group, registry));
            awaitApplied(registry, group, 300);
            members.add(start(kafka, db, topic, group, registry));
            awaitApplied(registry, group, 1200);
            members.add(start(kafka, db, topic, group, registry));
            awaitApplied(registry, group, 2400);
            members.remove(0).close();                   // graceful leave: revoke commits
            awaitApplied(registry, group, 3600);
            members.add(start(kafka, db, topic, group, registry));
            producing.get(180, TimeUnit.SECONDS);
            awaitApplied(registry, group, events.size());
        } finally {
            producer.shutdownNow();
            members.forEach(DedupeConsumer::close);
        }
        Projection.assertExactlyOnce(events, kafka.readAll(List.of(topic)), db);
        assertThat(registry.get("outbox.consumer.duplicates").tag("group", group).counter().count())
                .as("the republished slices were delivered and skipped").isGreaterThanOrEqualTo(1200);
    }

    @Test
    void aRevokedPartitionsBatchInFlightIsFinishedAndCommittedBeforeTheNewOwnerReadsIt(TestDatabase db, TestKafka kafka)
            throws Exception {
        Projection.Scenario run = Projection.scenario(db, kafka, "inflight", 4, 400, 8);
        String topic = run.topic();
        List<Projection.Sent> events = run.events();
        String group = "g-" + topic;
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        CountDownLatch firstBatchRunning = new CountDownLatch(1);
        CountDownLatch rebalanceUnderWay = new CountDownLatch(1);
        BatchHandler projection = Projection.batchHandler();
        DedupeConsumer first = Consumers.builder(kafka, db, topic, group)
                .batchHandler((c, batch) -> {
                    projection.handle(c, batch);
                    if (firstBatchRunning.getCount() > 0) {
                        firstBatchRunning.countDown();
                        // a slow effect: this transaction stays open until the coordinator has begun the rebalance
                        rebalanceUnderWay.await(REBALANCE_WAIT.toSeconds() + 60, TimeUnit.SECONDS);
                    }
                })
                .meterRegistry(registry)
                .build();
        DedupeConsumer second = Consumers.builder(kafka, db, topic, group)
                .batchHandler(projection)
                .meterRegistry(registry)
                .build();
        try (Admin admin = kafka.admin()) {
            first.start();
            assertThat(firstBatchRunning.await(120, TimeUnit.SECONDS)).isTrue();
            second.start();
            // the group's own state, not a guess at how long the join takes: the second member has joined and the
            // first cannot finish the rebalance before its batch commits (PreparingRebalance in the classic protocol)
            awaitGroup(admin, group, "both members in it and a rebalance under way while the first batch is open",
                    d -> REBALANCING.contains(d.groupState()) && d.members().size() == 2);
            rebalanceUnderWay.countDown();
            awaitGroup(admin, group, "Stable, both members owning some of the topic's 4 partitions, all 4 owned",
                    d -> d.groupState() == GroupState.STABLE && d.members().size() == 2
                            && d.members().stream().noneMatch(m -> m.assignment().topicPartitions().isEmpty())
                            && d.members().stream().mapToInt(m -> m.assignment().topicPartitions().size()).sum() == 4);
            awaitApplied(registry, group, events.size());
        } finally {
            first.close();
            second.close();
        }
        Projection.assertExactlyOnce(events, kafka.readAll(List.of(topic)), db);
        assertThat(registry.get("outbox.consumer.duplicates").tag("group", group).counter().count())
                .as("the batch in flight was committed on revoke, so the new owner did not read it again").isZero();
    }

    private static DedupeConsumer start(TestKafka kafka, TestDatabase db, String topic, String group,
                                        SimpleMeterRegistry registry) {
        DedupeConsumer consumer = Consumers.builder(kafka, db, topic, group)
                .batchHandler(Projection.batchHandler())
                .meterRegistry(registry)
                .build();
        consumer.start();
        return consumer;
    }

    /** Waits until {@code group}'s description (from its coordinator) satisfies {@code expected}; says the last one if not. */
    private static void awaitGroup(Admin admin, String group, String expectation, Predicate<ConsumerGroupDescription> expected) {
        await(group + ": " + expectation).atMost(REBALANCE_WAIT).pollInterval(Duration.ofMillis(200)).ignoreExceptions()
                .untilAsserted(() -> {
                    ConsumerGroupDescription d = admin.describeConsumerGroups(List.of(group)).all()
                            .get(30, TimeUnit.SECONDS).get(group);
                    assertThat(d).as(expectation).matches(expected, expectation);
                });
    }

    private static void awaitApplied(SimpleMeterRegistry registry, String group, long atLeast) {
        await().atMost(Duration.ofSeconds(180)).until(
                () -> registry.get("outbox.consumer.applied").tag("group", group).counter().count() >= atLeast);
    }

    private static void sleepQuietly(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
