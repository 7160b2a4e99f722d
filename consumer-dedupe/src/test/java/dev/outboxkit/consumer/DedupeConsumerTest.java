package dev.outboxkit.consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.outboxkit.core.EventIds;
import dev.outboxkit.core.OutboxEvent;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.sql.SQLTransientConnectionException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(OutboxTestkitExtension.class)
class DedupeConsumerTest {

    private static final Duration WAIT = Duration.ofSeconds(120);

    @Test
    void sameEventsDeliveredTwiceAreAppliedOnceAndCloseCommitsAndLeaves(TestDatabase db, TestKafka kafka) throws Exception {
        Projection.Scenario run = Projection.scenario(db, kafka, "twice", 3, 600, 12);
        String topic = run.topic();
        List<Projection.Sent> events = run.events();
        // a relay that crashed after publishing but before forgetting publishes the same rows again
        Projection.send(kafka, events.subList(0, 300));

        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        String group = "g-" + topic;
        DedupeConsumer consumer = Consumers.builder(kafka, db, topic, group)
                .batchHandler(Projection.batchHandler())
                .meterRegistry(registry)
                .build();
        assertThat(consumer.health().live()).isFalse();
        consumer.start();
        try {
            await().atMost(WAIT).until(() -> Consumers.count(registry, "outbox.consumer.applied", group)
                    + Consumers.count(registry, "outbox.consumer.duplicates", group) >= 900);
            await().atMost(WAIT).until(() -> consumer.health().ready());
            assertThat(consumer.health().live()).isTrue();
            assertThat(consumer.health().detail()).contains("applied 600");
        } finally {
            consumer.close();
        }
        assertThat(consumer.health().live()).isFalse();

        Projection.assertExactlyOnce(events, kafka.readAll(List.of(topic)), db);
        assertThat(Consumers.count(registry, "outbox.consumer.applied", group)).isEqualTo(600);
        assertThat(Consumers.count(registry, "outbox.consumer.duplicates", group)).isEqualTo(300);
        assertThat(Consumers.count(registry, "outbox.consumer.dead_lettered", group)).isZero();
        assertThat(registry.get("outbox.consumer.handler").tag("group", group).timer().count()).isPositive();
        assertThat(registry.get("outbox.consumer.lag").tag("group", group).gauge().value()).isZero();
        assertThat(db.count("SELECT count(*) FROM processed_event WHERE consumer_group = '" + group
                + "' AND topic IS NOT NULL AND kafka_offset IS NOT NULL")).isEqualTo(600);
        // close committed every finished offset and left the group
        assertThat(Consumers.committed(kafka, group)).isEqualTo(Consumers.endOffsets(kafka, topic, 3));
        try (var admin = kafka.admin()) {
            var description = admin.describeConsumerGroups(List.of(group)).all().get().get(group);
            assertThat(description.members()).isEmpty();
        }
    }

    @Test
    void poisonGoesToTheDeadLetterTopicWithErrorHeadersAndLaterRecordsAreApplied(TestDatabase db, TestKafka kafka)
            throws Exception {
        Projection.create(db);
        String topic = TestKafka.uniqueTopic("poison");
        String dlq = topic + ".dlq";
        kafka.createTopic(topic, 1);
        kafka.createTopic(dlq, 1);
        List<Projection.Sent> good = Projection.events(topic, 5, 2);
        OutboxEvent failing = new OutboxEvent(EventIds.next(), "account", "acct-0", "deposited", topic,
                "{\"amount\":13}", Map.of(), Instant.now());

        List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
        records.add(Projection.RECORDS.toRecord(good.get(0).event()));
        records.add(raw(topic, "k-no-id", "{\"amount\":1}", new RecordHeaders().add("eventType", utf8("deposited"))));
        records.add(Projection.RECORDS.toRecord(good.get(1).event()));
        records.add(raw(topic, "k-bad-id", "{\"amount\":1}", new RecordHeaders().add("id", utf8("1-2-3-4-5"))));
        records.add(Projection.RECORDS.toRecord(good.get(2).event()));
        records.add(Projection.RECORDS.toRecord(failing));
        records.add(Projection.RECORDS.toRecord(good.get(3).event()));
        records.add(raw(topic, "k-bad-time", "{\"amount\":1}", new RecordHeaders()
                .add("id", utf8(UUID.randomUUID().toString())).add("createdAt", utf8("yesterday"))));
        records.add(Projection.RECORDS.toRecord(good.get(4).event()));
        Projection.sendRaw(kafka, records);

        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        String group = "g-" + topic;
        BatchHandler projection = Projection.batchHandler();
        AtomicInteger failingCalls = new AtomicInteger();
        try (DedupeConsumer consumer = Consumers.builder(kafka, db, topic, group)
                .batchHandler((c, events) -> {
                    for (InboxEvent e : events) {
                        if (e.payloadJson().get("amount").asLong() == 13) {
                            failingCalls.incrementAndGet();
                            throw new IllegalStateException("amount 13 is unlucky");
                        }
                    }
                    projection.handle(c, events);
                })
                .maxAttempts(3)
                .meterRegistry(registry)
                .build()) {
            consumer.start();
            await().atMost(WAIT).until(() -> db.count("SELECT count(*) FROM effect_log") == 5
                    && Consumers.count(registry, "outbox.consumer.dead_lettered", group) == 4);
        }
        Projection.assertExactlyOnce(good, kafka.readAll(List.of(topic)), db);
        // the batch try, then three isolated tries
        assertThat(failingCalls.get()).isEqualTo(4);
        assertThat(db.count("SELECT count(*) FROM processed_event WHERE event_id = '" + failing.id() + "'"))
                .as("a dead-lettered event is not recorded, so a replay from the DLQ applies it").isZero();

        List<ConsumerRecord<byte[], byte[]>> dead = kafka.readAll(List.of(dlq));
        assertThat(dead).hasSize(4);
        assertThat(dead).extracting(r -> header(r, DeadLetterHeaders.ORIGINAL_OFFSET)).containsExactly("1", "3", "5", "7");
        ConsumerRecord<byte[], byte[]> noId = dead.get(0);
        assertThat(new String(noId.key(), StandardCharsets.UTF_8)).isEqualTo("k-no-id");
        assertThat(new String(noId.value(), StandardCharsets.UTF_8)).isEqualTo("{\"amount\":1}");
        assertThat(header(noId, "eventType")).isEqualTo("deposited");
        assertThat(header(noId, DeadLetterHeaders.REASON)).isEqualTo(DeadLetterHeaders.REASON_UNDECODABLE);
        assertThat(header(noId, DeadLetterHeaders.ERROR_CLASS)).isEqualTo("dev.outboxkit.core.InvalidEventException");
        assertThat(header(noId, DeadLetterHeaders.ERROR_MESSAGE)).contains("no 'id' header");
        assertThat(header(noId, DeadLetterHeaders.ATTEMPTS)).isEqualTo("0");
        assertThat(header(noId, DeadLetterHeaders.ORIGINAL_TOPIC)).isEqualTo(topic);
        assertThat(header(noId, DeadLetterHeaders.ORIGINAL_PARTITION)).isEqualTo("0");
        assertThat(header(noId, DeadLetterHeaders.GROUP)).isEqualTo(group);
        assertThat(header(dead.get(1), DeadLetterHeaders.ERROR_MESSAGE)).contains("is not a UUID: '1-2-3-4-5'");
        ConsumerRecord<byte[], byte[]> handlerFailed = dead.get(2);
        assertThat(header(handlerFailed, "id")).isEqualTo(failing.id().toString());
        assertThat(header(handlerFailed, DeadLetterHeaders.REASON)).isEqualTo(DeadLetterHeaders.REASON_HANDLER_FAILED);
        assertThat(header(handlerFailed, DeadLetterHeaders.ERROR_CLASS)).isEqualTo("java.lang.IllegalStateException");
        assertThat(header(handlerFailed, DeadLetterHeaders.ERROR_MESSAGE)).isEqualTo("amount 13 is unlucky");
        assertThat(header(handlerFailed, DeadLetterHeaders.ATTEMPTS)).isEqualTo("3");
        assertThat(header(dead.get(3), DeadLetterHeaders.ERROR_MESSAGE)).contains("createdAt").contains("yesterday");
        // everything, poison included, is behind the committed offset: nothing will come back
        assertThat(Consumers.committed(kafka, group)).isEqualTo(Consumers.endOffsets(kafka, topic, 1));
    }

    @Test
    void recordsShapedLikeAStockDebeziumRouterAreDeduplicatedTheSameWay(TestDatabase db, TestKafka kafka) throws Exception {
        Projection.create(db);
        String prefix = TestKafka.uniqueTopic("dbz");
        String topic = prefix + ".outbox.event.account";
        kafka.createTopic(topic, 2);
        // EventRouter: key = aggregate id, value = the payload column, header id only. Behind
        // JsonConverter the jsonb payload arrives as a JSON string and the header in quotes.
        List<Projection.Sent> events = Projection.events(topic, 200, 5);
        List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
        for (int i = 0; i < events.size(); i++) {
            OutboxEvent e = events.get(i).event();
            boolean jsonConverter = i % 2 == 0;
            String value = jsonConverter ? Payloads.quote(e.payload()) : e.payload();
            String id = jsonConverter ? "\"" + e.id() + "\"" : e.id().toString();
            records.add(raw(topic, e.aggregateId(), value, new RecordHeaders().add("id", utf8(id))));
        }
        Projection.sendRaw(kafka, records);
        Projection.sendRaw(kafka, records.subList(50, 150));

        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        String group = "g-" + prefix;
        List<InboxEvent> seen = new CopyOnWriteArrayList<>();
        EventHandler projection = Projection.handler();
        try (DedupeConsumer consumer = Consumers.builder(kafka, db, topic, group)
                .topics(null)
                .topicPattern(Pattern.compile(Pattern.quote(prefix) + "\\.outbox\\.event\\..*"))
                .handler((c, e) -> {
                    projection.handle(c, e);
                    seen.add(e);
                })
                .meterRegistry(registry)
                .build()) {
            consumer.start();
            await().atMost(WAIT).until(() -> Consumers.count(registry, "outbox.consumer.applied", group)
                    + Consumers.count(registry, "outbox.consumer.duplicates", group) >= 300);
        }
        Projection.assertExactlyOnce(events, kafka.readAll(List.of(topic)), db);
        assertThat(Consumers.count(registry, "outbox.consumer.duplicates", group)).isEqualTo(100);
        InboxEvent any = seen.get(0);
        assertThat(any.eventType()).isNull();
        assertThat(any.aggregateType()).isNull();
        assertThat(any.createdAt()).isNull();
        assertThat(any.aggregateId()).startsWith("acct-");
        assertThat(any.payloadJson().get("amount").isNumber()).isTrue();
    }

    @Test
    void lateArrivalsAreCountedAndRoutedToTheReviewTopicInsteadOfApplied(TestDatabase db, TestKafka kafka) throws Exception {
        Projection.create(db);
        String topic = TestKafka.uniqueTopic("late");
        String review = topic + ".review";
        kafka.createTopic(topic, 1);
        kafka.createTopic(review, 1);
        Instant now = Instant.now().truncatedTo(ChronoUnit.MICROS);
        Instant old = now.minus(Duration.ofHours(3));
        OutboxEvent lateNew = new OutboxEvent(EventIds.next(), "account", "acct-1", "deposited", topic,
                "{\"amount\":7}", Map.of(), old);
        OutboxEvent lateKnown = new OutboxEvent(EventIds.next(), "account", "acct-1", "deposited", topic,
                "{\"amount\":11}", Map.of(), old);
        List<Projection.Sent> fresh = Projection.events(topic, 3, 1);
        String group = "g-" + topic;
        // lateKnown was applied long ago and its id is still recorded: a duplicate, not a late arrival
        try (var c = db.connect()) {
            Inbox.applyOnce(c, "public", group, lateKnown.id(), tx -> { });
        }
        List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
        records.add(Projection.RECORDS.toRecord(lateNew));
        records.add(Projection.RECORDS.toRecord(lateKnown));
        fresh.forEach(s -> records.add(Projection.RECORDS.toRecord(s.event())));
        Projection.sendRaw(kafka, records);

        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (DedupeConsumer consumer = Consumers.builder(kafka, db, topic, group)
                .batchHandler(Projection.batchHandler())
                .retention(Duration.ofHours(1))
                .clock(Clock.fixed(now, ZoneOffset.UTC))
                .meterRegistry(registry)
                .build()) {
            consumer.start();
            await().atMost(WAIT).until(() -> Consumers.count(registry, "outbox.consumer.applied", group) == 3
                    && Consumers.count(registry, "outbox.consumer.late_arrivals", group) == 1
                    && Consumers.count(registry, "outbox.consumer.duplicates", group) == 1);
        }
        Projection.assertExactlyOnce(fresh, kafka.readAll(List.of(topic)), db);
        List<ConsumerRecord<byte[], byte[]>> routed = kafka.readAll(List.of(review));
        assertThat(routed).hasSize(1);
        assertThat(header(routed.get(0), "id")).isEqualTo(lateNew.id().toString());
        assertThat(header(routed.get(0), DeadLetterHeaders.REASON)).isEqualTo(DeadLetterHeaders.REASON_LATE_ARRIVAL);
        assertThat(header(routed.get(0), DeadLetterHeaders.ERROR_MESSAGE)).contains("before the retention window");
        assertThat(Consumers.count(registry, "outbox.consumer.dead_lettered", group)).isZero();
        assertThat(db.count("SELECT count(*) FROM processed_event WHERE event_id = '" + lateNew.id() + "'"))
                .as("a routed late arrival is not recorded, so applying it after review is possible").isZero();

        // the same late record under the apply policy: applied once, still counted
        String applyGroup = group + "-apply";
        SimpleMeterRegistry applyRegistry = new SimpleMeterRegistry();
        try (DedupeConsumer consumer = Consumers.builder(kafka, db, topic, applyGroup)
                .handler((c, e) -> { })
                .retention(Duration.ofHours(1))
                .clock(Clock.fixed(now, ZoneOffset.UTC))
                .lateArrivalPolicy(LateArrivalPolicy.apply())
                .meterRegistry(applyRegistry)
                .build()) {
            consumer.start();
            await().atMost(WAIT).until(() -> Consumers.count(applyRegistry, "outbox.consumer.applied", applyGroup) == 5);
        }
        assertThat(Consumers.count(applyRegistry, "outbox.consumer.late_arrivals", applyGroup)).isEqualTo(2);
    }

    @Test
    void anExternalEffectIsClaimedBeforeItIsDoneAndGetsTheEventIdAsItsKey(TestDatabase db, TestKafka kafka) throws Exception {
        Projection.Scenario run = Projection.scenario(db, kafka, "external", 2, 40, 4);
        String topic = run.topic();
        List<Projection.Sent> events = run.events();
        Projection.send(kafka, events.subList(0, 20));
        ExternalEffects effects = ExternalEffects.create(db.dataSource(), "public");
        // the partner: it records every key it is called with
        List<String> partnerCalls = new CopyOnWriteArrayList<>();
        BatchHandler projection = Projection.batchHandler();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        String group = "g-" + topic;
        AtomicInteger firstTry = new AtomicInteger();
        try (DedupeConsumer consumer = Consumers.builder(kafka, db, topic, group)
                .handler((c, e) -> {
                    projection.handle(c, List.of(e));
                    ExternalEffects.Claim claim = effects.perform("notify-partner", e.id(), Duration.ofMinutes(5), key -> {
                        partnerCalls.add(key);
                        return "ack-" + key.substring(0, 8);
                    });
                    assertThat(claim.status()).isEqualTo(ExternalEffects.ClaimStatus.SUCCEEDED);
                    // the first transaction fails after the partner call: the event is retried,
                    // the claim survives the rollback, and the partner is not called again
                    if (firstTry.getAndIncrement() == 0) {
                        throw new IllegalStateException("simulated failure after the external call");
                    }
                })
                .meterRegistry(registry)
                .build()) {
            consumer.start();
            await().atMost(WAIT).until(() -> Consumers.count(registry, "outbox.consumer.applied", group) == 40
                    && Consumers.count(registry, "outbox.consumer.duplicates", group) >= 20);
        }
        Projection.assertExactlyOnce(events, kafka.readAll(List.of(topic)), db);
        assertThat(partnerCalls).hasSize(40).doesNotHaveDuplicates()
                .containsExactlyInAnyOrderElementsOf(events.stream().map(s -> s.event().id().toString()).toList());
        assertThat(effects.listUnknown()).isEmpty();
    }

    @Test
    void closeFinishesTheBatchInFlightAndCommitsIt(TestDatabase db, TestKafka kafka) throws Exception {
        Projection.Scenario run = Projection.scenario(db, kafka, "close", 1, 50, 2);
        String topic = run.topic();
        List<Projection.Sent> events = run.events();
        String group = "g-" + topic;
        java.util.concurrent.CountDownLatch inFlight = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.atomic.AtomicReference<Thread> closer = new java.util.concurrent.atomic.AtomicReference<>();
        BatchHandler projection = Projection.batchHandler();
        DedupeConsumer consumer = Consumers.builder(kafka, db, topic, group)
                .batchHandler((c, batch) -> {
                    inFlight.countDown();
                    // a slow effect, still running when close() is called: it ends once close() waits for the loop
                    await("close() waiting for the batch in flight").atMost(WAIT).until(() -> isJoining(closer.get()));
                    projection.handle(c, batch);
                })
                .build();
        consumer.start();
        assertThat(inFlight.await(120, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        closer.set(new Thread(consumer::close, "closer"));
        closer.get().start();
        closer.get().join(WAIT.toMillis() + 60_000);
        assertThat(closer.get().isAlive()).as("close() returned").isFalse();
        long applied = db.count("SELECT count(*) FROM effect_log");
        assertThat(applied).as("the batch in flight was finished").isPositive();
        long committed = Consumers.committed(kafka, group).values().stream().mapToLong(Long::longValue).sum();
        assertThat(committed).as("and its offsets committed").isEqualTo(applied);
    }

    /** Whether {@code t} is inside {@link Thread#join}: {@code DedupeConsumer.close()} has stopped the loop and waits. */
    private static boolean isJoining(Thread t) {
        return t != null && java.util.Arrays.stream(t.getStackTrace())
                .anyMatch(f -> f.getClassName().equals(Thread.class.getName()) && f.getMethodName().equals("join"));
    }

    @Test
    void transientDatabaseErrorsAreRetriedUntilTheyHealAndNeverDeadLettered(TestDatabase db, TestKafka kafka)
            throws Exception {
        Projection.Scenario run = Projection.scenario(db, kafka, "transient", 2, 100, 4);
        String topic = run.topic();
        List<Projection.Sent> events = run.events();
        java.util.concurrent.atomic.AtomicBoolean databaseDown = new java.util.concurrent.atomic.AtomicBoolean(true);
        EventHandler projection = Projection.handler();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        String group = "g-" + topic;
        try (DedupeConsumer consumer = Consumers.builder(kafka, db, topic, group)
                .handler((c, e) -> {
                    if (databaseDown.get()) {
                        throw new SQLTransientConnectionException("simulated lost connection", "08006");
                    }
                    projection.handle(c, e);
                })
                .maxAttempts(1)
                .meterRegistry(registry)
                .build()) {
            consumer.start();
            // while the database fails, the consumer is live, not ready, and says why
            await().atMost(WAIT).until(() -> consumer.health().live() && !consumer.health().ready()
                    && consumer.health().detail().contains("transient database error")
                    && Consumers.count(registry, "outbox.consumer.retries", group) >= 3);
            databaseDown.set(false);
            await().atMost(WAIT).until(() -> Consumers.count(registry, "outbox.consumer.applied", group) == 100);
            await().atMost(WAIT).until(() -> consumer.health().ready());
        }
        Projection.assertExactlyOnce(events, kafka.readAll(List.of(topic)), db);
        assertThat(Consumers.count(registry, "outbox.consumer.dead_lettered", group)).isZero();
    }

    private static ProducerRecord<byte[], byte[]> raw(String topic, String key, String value, org.apache.kafka.common.header.Headers headers) {
        return new ProducerRecord<>(topic, null, utf8(key), utf8(value), headers);
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static String header(ConsumerRecord<byte[], byte[]> record, String name) {
        var h = record.headers().lastHeader(name);
        return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
    }

    /** JSON text as a JSON string literal, the way JsonConverter writes a Debezium Json column. */
    static final class Payloads {
        static String quote(String json) {
            try {
                return dev.outboxkit.consumer.internal.Payloads.MAPPER.writeValueAsString(json);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
    }
}
