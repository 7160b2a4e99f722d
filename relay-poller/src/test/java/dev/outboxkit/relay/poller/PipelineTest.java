package dev.outboxkit.relay.poller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.outboxkit.core.HeaderNames;
import dev.outboxkit.core.Secret;
import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.testkit.OutboxRows;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.Sql;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.NotEnoughReplicasException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The claim loop against real PostgreSQL and a Kafka producer whose acknowledgements the test
 * hands out one by one (Kafka's MockProducer), so the interleavings that matter are exact. One loop
 * ({@code claimLoops(1)}; the default is two): these tests follow one loop's claim → send → acknowledge →
 * commit sequence and its order across batches; several loops side by side are {@link ClaimLoopsTest}'s.
 */
@ExtendWith(OutboxTestkitExtension.class)
class PipelineTest {

    /** Acknowledges only when the test says so (MockProducer's flush() would acknowledge everything). */
    static final class ManualProducer extends MockProducer<byte[], byte[]> {
        ManualProducer() {
            super(false, null, new ByteArraySerializer(), new ByteArraySerializer());
        }

        @Override
        public synchronized void flush() {
            // the relay's flusher only asks Kafka to send now; here the test decides
        }

        /**
         * The relays close their producer at the first failed record and make a new one (StopOnFailure); this one
         * producer stands for every one of them, so closing it only ends nothing (the stop itself is proven against
         * a real broker in FailedAckOrderTest).
         */
        @Override
        public void close(Duration timeout) {
        }

        @Override
        public void close() {
        }
    }

    private final ManualProducer kafka = new ManualProducer();

    private PollingRelay.Builder relay(TestDatabase db) {
        return PollingRelay.builder()
                .jdbcUrl(db.jdbcUrl()).user(db.user()).password(Secret.of(db.password()))
                .bootstrapServers("unused:9092")
                .route(TopicRoute.of("pipeline-test"))
                .leaseDuration(Duration.ofSeconds(45))
                .claimLoops(1)
                .producerFactory(config -> kafka);
    }

    private List<UUID> sentIds() {
        return sentIds(kafka);
    }

    /** The event ids of every record {@code kafka} was handed, in order. */
    static List<UUID> sentIds(ManualProducer kafka) {
        List<UUID> ids = new ArrayList<>();
        for (ProducerRecord<byte[], byte[]> r : kafka.history()) {
            ids.add(UUID.fromString(new String(r.headers().lastHeader(HeaderNames.ID).value(), StandardCharsets.UTF_8)));
        }
        return ids;
    }

    static UUID insert(TestDatabase db, String aggregate) throws Exception {
        try (Connection c = db.connect()) {
            return OutboxRows.insert(c, "account", aggregate, "{\"a\": \"" + aggregate + "\"}");
        }
    }

    /** Rows no transaction holds: once zero, the relay has claimed (locked) every row. */
    private static long unclaimed(TestDatabase db) throws Exception {
        try (Connection c = db.connect(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT seq FROM outbox_event FOR UPDATE SKIP LOCKED")) {
            long n = 0;
            while (rs.next()) {
                n++;
            }
            return n;
        }
    }

    @Test
    void aPartlyFailedBatchKeepsTheNextBatchOfTheSameAggregateUnsent(TestDatabase db) throws Exception {
        UUID a1 = insert(db, "A");
        UUID b1 = insert(db, "B");
        UUID a2 = insert(db, "A");
        UUID b2 = insert(db, "B");
        try (PollingRelay relay = relay(db).batchSize(2).pipelineClaims(true).build()) {
            relay.start();
            await().atMost(Duration.ofSeconds(30)).until(() -> kafka.history().size() == 2);
            assertThat(sentIds()).containsExactly(a1, b1);
            // Batch N+1 (A2, B2) is claimed while batch N waits for Kafka ...
            await().atMost(Duration.ofSeconds(30)).until(() -> unclaimed(db) == 0);
            // ... then N fails in part: A1 retriably, B1 acknowledged.
            kafka.errorNext(new NotEnoughReplicasException("test: not enough replicas"));
            kafka.completeNext();
            // A2 must not go out before A1 is retried: the next send is A1 (alone: careful mode), then A2.
            await().atMost(Duration.ofSeconds(30)).until(() -> kafka.history().size() >= 3);
            assertThat(sentIds()).containsExactly(a1, b1, a1);
            try (Connection c = db.connect()) {
                assertThat(Sql.count(c, "SELECT attempts FROM outbox_event WHERE id = '" + a1 + "'")).isEqualTo(1);
            }
            kafka.completeNext();
            await().atMost(Duration.ofSeconds(30)).until(() -> kafka.history().size() >= 4);
            assertThat(sentIds().subList(0, 4)).containsExactly(a1, b1, a1, a2);
            completeAllUntilEmpty(db);
            assertThat(sentIds()).containsSubsequence(a1, a2).containsSubsequence(b1, b2);
        }
    }

    @Test
    void holdAggregatePublishesAnAggregateOneEventAtATimeAndHoldsItBehindARefusedEvent(TestDatabase db) throws Exception {
        UUID a1 = insert(db, "A");
        UUID a2 = insert(db, "A");
        UUID b1 = insert(db, "B");
        UUID a3 = insert(db, "A");
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (PollingRelay relay = relay(db).parkPolicy(ParkPolicy.HOLD_AGGREGATE).meterRegistry(registry).build()) {
            relay.start();
            // First wave: each aggregate's first event only.
            await().atMost(Duration.ofSeconds(30)).until(() -> kafka.history().size() == 2);
            assertThat(sentIds()).containsExactly(a1, b1);
            kafka.errorNext(new RecordTooLargeException("test: too large for the topic"));
            kafka.completeNext();
            await().atMost(Duration.ofSeconds(30)).until(() -> registry.get("outbox.relay.dead_lettered").counter().count() == 1);
            try (Connection c = db.connect()) {
                assertThat(Sql.count(c, "SELECT count(*) FROM outbox_dead_letter WHERE id = '" + a1
                        + "' AND error_class = 'org.apache.kafka.common.errors.RecordTooLargeException' AND attempts = 1")).isEqualTo(1);
            }
            // A2 and A3 wait behind the parked A1; nothing else is sent.
            await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(10)).until(() -> kafka.history().size() == 2);
            try (Connection c = db.connect()) {
                assertThat(Sql.count(c, "SELECT count(*) FROM outbox_event WHERE id IN ('" + a2 + "', '" + a3 + "')"))
                        .isEqualTo(2);
                // An operator retries the parked event (back into the outbox at its old place).
                try (Statement s = c.createStatement()) {
                    s.execute("WITH d AS (DELETE FROM outbox_dead_letter WHERE id = '" + a1 + "' RETURNING *) "
                            + "INSERT INTO outbox_event (seq, id, aggregate_type, aggregate_id, event_type, payload, headers, "
                            + "topic, created_at) OVERRIDING SYSTEM VALUE SELECT seq, id, aggregate_type, aggregate_id, "
                            + "event_type, payload, headers, topic, created_at FROM d");
                }
            }
            // Now A1, A2, A3 follow one by one.
            int sent = 2;
            for (UUID next : List.of(a1, a2, a3)) {
                int expected = ++sent;
                await().atMost(Duration.ofSeconds(30)).until(() -> kafka.history().size() >= expected);
                assertThat(sentIds()).hasSize(expected).endsWith(next);
                kafka.completeNext();
            }
            completeAllUntilEmpty(db);
            assertThat(sentIds()).containsExactly(a1, b1, a1, a2, a3);
        }
    }

    @Test
    void aRowThatKeepsFailingWhileOthersPassIsParkedAfterMaxAttempts(TestDatabase db) throws Exception {
        UUID a1 = insert(db, "A");
        insert(db, "B");
        try (PollingRelay relay = relay(db).maxAttempts(2).build()) {
            relay.start();
            await().atMost(Duration.ofSeconds(30)).until(() -> kafka.history().size() == 2);
            kafka.errorNext(new NotEnoughReplicasException("test: not enough replicas"));
            kafka.completeNext();
            UUID d1 = insert(db, "D");
            // A1 keeps failing, D1 passes: A1's second counted failure parks it.
            java.util.concurrent.atomic.AtomicInteger handled = new java.util.concurrent.atomic.AtomicInteger(2);
            await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
                while (kafka.history().size() > handled.get()) {
                    if (sentIds().get(handled.getAndIncrement()).equals(a1)) {
                        kafka.errorNext(new NotEnoughReplicasException("test: still not enough replicas"));
                    } else {
                        kafka.completeNext();
                    }
                }
                try (Connection c = db.connect()) {
                    assertThat(Sql.count(c, "SELECT count(*) FROM outbox_dead_letter WHERE id = '" + a1
                            + "' AND attempts = 2 AND error_class = 'org.apache.kafka.common.errors.NotEnoughReplicasException'"))
                            .isEqualTo(1);
                }
            });
            completeAllUntilEmpty(db);
            assertThat(sentIds()).contains(d1);
        }
    }

    @Test
    void aBinaryRowIsPutBackAndParkedWithItsBytesAndContentTypeUnchanged(TestDatabase db) throws Exception {
        byte[] bytes = new byte[256];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = (byte) i;
        }
        UUID id = UUID.randomUUID();
        String contentType = "application/x-protobuf; messageType=test.Bytes";
        try (Connection c = db.connect(); java.sql.PreparedStatement ps = c.prepareStatement("INSERT INTO outbox_event"
                + " (id, aggregate_type, aggregate_id, event_type, payload_bytes, content_type) VALUES (?, 'account', 'bin',"
                + " 'Bytes', ?, ?)")) {
            ps.setObject(1, id);
            ps.setBytes(2, bytes);
            ps.setString(3, contentType);
            ps.executeUpdate();
        }
        try (PollingRelay relay = relay(db).build()) {
            relay.start();
            await().atMost(Duration.ofSeconds(30)).until(() -> kafka.history().size() == 1);
            kafka.errorNext(new NotEnoughReplicasException("test: not enough replicas"));
            // put back (DELETE mode: INSERT … OVERRIDING with the bytes), claimed and sent again, unchanged
            await().atMost(Duration.ofSeconds(30)).until(() -> kafka.history().size() == 2);
            for (ProducerRecord<byte[], byte[]> sent : kafka.history()) {
                assertThat(sent.value()).isEqualTo(bytes);
                assertThat(new String(sent.headers().lastHeader(HeaderNames.CONTENT_TYPE).value(), StandardCharsets.UTF_8))
                        .isEqualTo(contentType);
            }
            // a terminal refusal parks it at once, bytes and content type as they were
            kafka.errorNext(new RecordTooLargeException("test: too large"));
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                try (Connection c = db.connect()) {
                    assertThat(Sql.count(c, "SELECT count(*) FROM outbox_dead_letter WHERE id = '" + id + "'"
                            + " AND error_class = 'org.apache.kafka.common.errors.RecordTooLargeException'"
                            + " AND payload IS NULL AND payload_bytes = decode('" + java.util.HexFormat.of().formatHex(bytes)
                            + "', 'hex') AND content_type = '" + contentType + "'")).isEqualTo(1);
                }
            });
            assertThat(db.count("SELECT count(*) FROM outbox_event")).isZero();
        }
    }

    @Test
    void aCommitAfterTheLeaseWasLostIsRolledBackAndTheRowsArePublishedAgain(TestDatabase db) throws Exception {
        List<UUID> ids = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            ids.add(insert(db, "A" + i));
        }
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (PollingRelay relay = relay(db).meterRegistry(registry).build()) {
            relay.start();
            await().atMost(Duration.ofSeconds(30)).until(() -> kafka.history().size() == 5);
            long fenceBefore;
            try (Connection c = db.connect()) {
                fenceBefore = Sql.count(c, "SELECT max(fence) FROM outbox_relay_lease");
                // The lease runs out while the batch waits for Kafka (as after a long pause).
                try (Statement s = c.createStatement()) {
                    s.execute("UPDATE outbox_relay_lease SET expires_at = now() - interval '1 second'");
                }
            }
            for (int i = 0; i < 5; i++) {
                kafka.completeNext();
            }
            // The commit is refused by the fence: the rows come back and go out again under a new lease.
            await().atMost(Duration.ofSeconds(30)).until(() ->
                    registry.get("outbox.relay.fence.rejections").counter().count() >= 1);
            await().atMost(Duration.ofSeconds(30)).until(() -> kafka.history().size() >= 10);
            try (Connection c = db.connect()) {
                assertThat(Sql.count(c, "SELECT min(fence) FROM outbox_relay_lease")).isGreaterThan(fenceBefore);
            }
            completeAllUntilEmpty(db);
            assertThat(sentIds().subList(5, 10)).containsExactlyElementsOf(ids);
        }
    }

    @Test
    void closeFinishesTheBatchInFlightAndReleasesTheLeases(TestDatabase db) throws Exception {
        for (int i = 0; i < 20; i++) {
            insert(db, "C" + i);
        }
        PollingRelay relay = relay(db).build();
        relay.start();
        await().atMost(Duration.ofSeconds(30)).until(() -> kafka.history().size() == 20);
        closeWaitsForTheAcknowledgementsThenForgetsAndReleases(db, relay, kafka, 20);
    }

    /**
     * With every one of {@code rows} records sent and none acknowledged: close() waits (the batches in flight), and
     * once they are acknowledged it commits them, releases every lease and leaves; nothing is sent again.
     */
    static void closeWaitsForTheAcknowledgementsThenForgetsAndReleases(TestDatabase db, PollingRelay relay,
                                                                      ManualProducer kafka, int rows) throws Exception {
        CompletableFuture<Void> closing = CompletableFuture.runAsync(relay::close);
        await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(5)).until(() -> !closing.isDone());
        while (kafka.completeNext()) {
            // acknowledge the batches in flight
        }
        closing.get();
        assertThat(relay.health().live()).isFalse();
        try (Connection c = db.connect()) {
            assertThat(Sql.count(c, "SELECT count(*) FROM outbox_event")).isZero();
            assertThat(Sql.count(c, "SELECT count(*) FROM outbox_relay_lease")).isZero();
            assertThat(Sql.count(c, "SELECT count(*) FROM outbox_relay_member")).isZero();
        }
        assertThat(kafka.history()).hasSize(rows);
    }

    @Test
    void theDocumentedLeastPrivilegeGrantsAreEnough(TestDatabase db, TestKafka broker) throws Exception {
        String role = "relay_" + Long.toHexString(System.nanoTime());
        try (Connection c = db.connect(); Statement s = c.createStatement()) {
            s.execute("CREATE ROLE " + role + " LOGIN PASSWORD 'relay-pw'");
            // Exactly the grants of relay-poller/README.md (the last one for its report).
            s.execute("GRANT USAGE ON SCHEMA public TO " + role);
            s.execute("GRANT SELECT, INSERT, UPDATE, DELETE ON outbox_event TO " + role);
            s.execute("GRANT SELECT, INSERT, UPDATE ON outbox_dead_letter TO " + role);
            s.execute("GRANT SELECT, INSERT, UPDATE, DELETE ON outbox_relay_lease, outbox_relay_member TO " + role);
            s.execute("GRANT USAGE ON SEQUENCE outbox_fence_seq TO " + role);
            s.execute("GRANT SELECT, INSERT, UPDATE, DELETE ON outbox_relay_report TO " + role);
        }
        UUID a1 = insert(db, "A");
        UUID b1 = insert(db, "B");
        UUID c1 = insert(db, "C");
        UUID d1 = insert(db, "D");
        // Records go to the manual producer; readiness probes a real broker (it asks Kafka itself, not the producer).
        try (PollingRelay relay = relay(db).bootstrapServers(broker.bootstrapServers()).user(role)
                .password(Secret.of("relay-pw")).build()) {
            relay.start();
            await().atMost(Duration.ofSeconds(30)).until(() -> kafka.history().size() == 4);
            kafka.errorNext(new NotEnoughReplicasException("test"));                 // A1: put back (INSERT … OVERRIDING)
            kafka.errorNext(new RecordTooLargeException("test"));                    // B1: parked (dead letter)
            kafka.completeNext();                                                    // C1
            kafka.completeNext();                                                    // D1
            await().atMost(Duration.ofSeconds(30)).until(() -> kafka.history().size() >= 5);
            kafka.completeNext();                                                    // A1 again
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                try (Connection c = db.connect()) {
                    assertThat(Sql.count(c, "SELECT count(*) FROM outbox_event")).isZero();
                    assertThat(Sql.count(c, "SELECT count(*) FROM outbox_dead_letter WHERE id = '" + b1 + "'")).isEqualTo(1);
                }
            });
            // the Kafka reachability probe answers on its own thread ("Kafka not checked yet" until its first look)
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                    assertThat(relay.health().ready()).as(relay.health().detail()).isTrue());
            // its report, for the operator console: ready, three events published (B1 was parked), and when
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(db.strings("SELECT relay || ' ' || ready"
                    + " || ' ' || coalesce(problem, '-') || ' ' || published || ' ' || (last_published_at > started_at)"
                    + " || ' ' || (expires_at > now()) FROM outbox_relay_report WHERE instance_id = '" + relay.instanceId() + "'"))
                    .containsExactly("poll true - 3 true true"));
        }
        assertThat(db.count("SELECT count(*) FROM outbox_relay_report")).as("deleted on the clean stop").isZero();
        assertThat(sentIds()).containsExactly(a1, b1, c1, d1, a1);
    }

    private void completeAllUntilEmpty(TestDatabase db) {
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
            while (kafka.completeNext()) {
                // acknowledge everything sent so far
            }
            try (Connection c = db.connect()) {
                assertThat(Sql.count(c, "SELECT count(*) FROM outbox_event")).isZero();
            }
        });
    }

    /**
     * The slow-batch trace (ClaimLoop at DEBUG) puts a batch's time in the phase it was spent in: here the
     * acknowledgements, which the test holds back.
     */
    @Test
    void aSlowBatchIsTracedWithTheTimeItsAcknowledgementsTook(TestDatabase db) throws Exception {
        ch.qos.logback.classic.Logger loop = (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(
                "dev.outboxkit.relay.poller.internal.ClaimLoop");
        ch.qos.logback.classic.Level before = loop.getLevel();
        ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> lines =
                new ch.qos.logback.core.read.ListAppender<>();
        lines.start();
        loop.addAppender(lines);
        loop.setLevel(ch.qos.logback.classic.Level.DEBUG);
        try (PollingRelay relay = relay(db).build()) {
            insert(db, "A");
            insert(db, "B");
            insert(db, "A");
            relay.start();
            await().atMost(Duration.ofSeconds(30)).until(() -> kafka.history().size() == 3);
            long held = System.nanoTime();
            Thread.sleep(60); // the injected fault: Kafka answers 60 ms late
            double heldMs = (System.nanoTime() - held) / 1e6;
            while (kafka.completeNext()) {
                // acknowledge the three records
            }
            java.util.regex.Pattern traced = java.util.regex.Pattern.compile(
                    "batch of 3 rows .* from free to committed: before claim [0-9.]+, claim [0-9.]+, send [0-9.]+, "
                            + "acks ([0-9.]+), to commit [0-9.]+, commit [0-9.]+");
            await().atMost(Duration.ofSeconds(30)).until(() -> lines.list.stream()
                    .anyMatch(e -> traced.matcher(e.getFormattedMessage()).find()));
            String line = lines.list.stream().map(ch.qos.logback.classic.spi.ILoggingEvent::getFormattedMessage)
                    .filter(m -> traced.matcher(m).find()).findFirst().orElseThrow();
            java.util.regex.Matcher m = traced.matcher(line);
            assertThat(m.find()).isTrue();
            assertThat(Double.parseDouble(m.group(1))).as(line).isGreaterThanOrEqualTo(heldMs);
        } finally {
            loop.detachAppender(lines);
            loop.setLevel(before);
        }
    }
}
