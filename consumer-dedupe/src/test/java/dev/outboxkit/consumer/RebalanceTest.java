package dev.outboxkit.consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Three consumer instances in one group while events keep arriving (some twice), with members
 * joining and leaving during the run: every effect exactly once, per-account order kept.
 */
@ExtendWith(OutboxTestkitExtension.class)
class RebalanceTest {

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
                    sleepQuietly(250);
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
        CountDownLatch secondMemberJoining = new CountDownLatch(1);
        BatchHandler projection = Projection.batchHandler();
        DedupeConsumer first = Consumers.builder(kafka, db, topic, group)
                .batchHandler((c, batch) -> {
                    projection.handle(c, batch);
                    if (firstBatchRunning.getCount() > 0) {
                        firstBatchRunning.countDown();
                        // a slow effect: the rebalance starts while this transaction is open
                        secondMemberJoining.await(60, TimeUnit.SECONDS);
                        Thread.sleep(2_000);
                    }
                })
                .meterRegistry(registry)
                .build();
        DedupeConsumer second = Consumers.builder(kafka, db, topic, group)
                .batchHandler(projection)
                .meterRegistry(registry)
                .build();
        try {
            first.start();
            assertThat(firstBatchRunning.await(120, TimeUnit.SECONDS)).isTrue();
            second.start();
            secondMemberJoining.countDown();
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
