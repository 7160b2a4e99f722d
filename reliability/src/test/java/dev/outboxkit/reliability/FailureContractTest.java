package dev.outboxkit.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.outboxkit.core.EventIds;
import dev.outboxkit.core.HeaderNames;
import dev.outboxkit.core.InvalidEventException;
import dev.outboxkit.core.Secret;
import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.relay.PublishFailure;
import dev.outboxkit.relay.Relay;
import dev.outboxkit.relay.cdc.CdcProducerSeam;
import dev.outboxkit.relay.cdc.CdcRelay;
import dev.outboxkit.relay.poller.PollerProducerSeam;
import dev.outboxkit.relay.poller.PollingRelay;
import dev.outboxkit.runtime.PublishFailures;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.apache.kafka.clients.producer.BufferExhaustedException;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.errors.CorruptRecordException;
import org.apache.kafka.common.errors.InterruptException;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.InvalidRequiredAcksException;
import org.apache.kafka.common.errors.InvalidTimestampException;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.errors.NotEnoughReplicasAfterAppendException;
import org.apache.kafka.common.errors.NotEnoughReplicasException;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.RecordBatchTooLargeException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.errors.UnknownProducerIdException;
import org.apache.kafka.common.errors.UnknownServerException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.errors.UnsupportedCompressionTypeException;
import org.apache.kafka.common.errors.UnsupportedForMessageFormatException;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * One relay contract for failures (issue 14): every exception a relay can see from the mapping, from
 * {@code KafkaProducer.send} or from its future is fed through both relays, against the testkit's real
 * PostgreSQL, and each relay must do what the README's "Failure classification" table says — the same in both:
 * POISON parks the event in {@code outbox_dead_letter} with the exception's class and one attempt while the
 * events around it are published; RETRIABLE keeps it in {@code outbox_event} and sends it again, not ready;
 * FATAL does the same but never parks and says in the health detail that it needs an operator. After each
 * case Kafka "heals" and the relay must publish what it held back.
 *
 * <p>Kafka is a {@link MockProducer} (through the relays' package-private producer seams) that refuses only the
 * event of type {@code Refused}, with the case's exception, through the future or thrown from {@code send} as
 * the real producer does it. FENCED cannot come from Kafka (only from our own fenced writes; see the relays'
 * fencing tests and {@code PublishFailuresTest}); {@code ConfigException} only from the producer's constructor.
 */
@ExtendWith(OutboxTestkitExtension.class)
class FailureContractTest {

    /** How the failure reaches the relay. */
    enum Via { FUTURE, SEND, MAPPING }

    record Case(String name, Supplier<RuntimeException> error, Via via, PublishFailure expected) {
        static Case future(Supplier<RuntimeException> error, PublishFailure expected) {
            return new Case(error.get().getClass().getSimpleName(), error, Via.FUTURE, expected);
        }

        static Case send(String name, Supplier<RuntimeException> error, PublishFailure expected) {
            return new Case(name, error, Via.SEND, expected);
        }

        @Override
        public String toString() {
            return name + " via " + via;
        }
    }

    static final List<Case> CASES = List.of(
            new Case("InvalidEventException (reserved header)", () -> new InvalidEventException("unused"), Via.MAPPING,
                    PublishFailure.POISON),
            Case.future(() -> new RecordTooLargeException("test: larger than max.request.size"), PublishFailure.POISON),
            Case.future(() -> new RecordBatchTooLargeException("test: batch too large"), PublishFailure.POISON),
            Case.future(() -> new InvalidTopicException("test: invalid topic"), PublishFailure.POISON),
            Case.future(() -> new InvalidRecordException("test: broker refuses the record"), PublishFailure.POISON),
            // the producer runs its serializers inside send() and throws their errors from there
            Case.send("SerializationException", () -> new SerializationException("test: cannot serialise"),
                    PublishFailure.POISON),

            Case.future(() -> new TimeoutException("test: expiring 1 record(s)"), PublishFailure.RETRIABLE),
            Case.future(() -> new BufferExhaustedException("test: buffer full"), PublishFailure.RETRIABLE),
            Case.future(() -> new NotEnoughReplicasException("test: isr"), PublishFailure.RETRIABLE),
            Case.future(() -> new NotEnoughReplicasAfterAppendException("test: isr after append"), PublishFailure.RETRIABLE),
            Case.future(() -> new NotLeaderOrFollowerException("test: leader moved"), PublishFailure.RETRIABLE),
            Case.future(() -> new UnknownTopicOrPartitionException("test: no metadata yet"), PublishFailure.RETRIABLE),
            Case.future(() -> new CorruptRecordException("test: crc"), PublishFailure.RETRIABLE),
            Case.future(() -> new OutOfOrderSequenceException("test: sequence"), PublishFailure.RETRIABLE),
            Case.future(() -> new UnknownProducerIdException("test: producer id"), PublishFailure.RETRIABLE),
            Case.future(() -> new InvalidProducerEpochException("test: epoch"), PublishFailure.RETRIABLE),
            Case.future(() -> new UnknownServerException("test: broker failed"), PublishFailure.RETRIABLE),
            Case.future(() -> new IllegalArgumentException("test: nobody listed this"), PublishFailure.RETRIABLE),
            Case.send("InterruptException", () -> new InterruptException("test: interrupted", new InterruptedException()),
                    PublishFailure.RETRIABLE),
            Case.send("KafkaException (closed producer)", () -> new KafkaException("test: producer closed while send in progress"),
                    PublishFailure.RETRIABLE),
            Case.send("IllegalStateException (closed producer)",
                    () -> new IllegalStateException("test: cannot perform operation after producer has been closed"),
                    PublishFailure.RETRIABLE),

            Case.future(() -> new TopicAuthorizationException("test: no WRITE on the topic"), PublishFailure.FATAL),
            Case.future(() -> new ClusterAuthorizationException("test: no IDEMPOTENT_WRITE"), PublishFailure.FATAL),
            Case.future(() -> new SaslAuthenticationException("test: bad credentials"), PublishFailure.FATAL),
            Case.future(() -> new UnsupportedVersionException("test: broker too old"), PublishFailure.FATAL),
            Case.future(() -> new UnsupportedForMessageFormatException("test: old message format"), PublishFailure.FATAL),
            Case.future(() -> new UnsupportedCompressionTypeException("test: zstd"), PublishFailure.FATAL),
            Case.future(() -> new InvalidRequiredAcksException("test: acks"), PublishFailure.FATAL),
            Case.future(() -> new InvalidTimestampException("test: clock off"), PublishFailure.FATAL),
            Case.future(() -> new ProducerFencedException("test: another producer with this transactional.id"),
                    PublishFailure.FATAL));

    enum Kind {
        POLL, CDC;

        /** Records go to {@code kafka}; readiness asks {@code broker}, a real one (it probes Kafka itself, not the producer). */
        Relay build(TestDatabase db, TestKafka broker, RefusingProducer kafka) {
            // RETRIABLE never parks within a case of the table; the never-clears test covers maxAttempts
            return build(db, broker, kafka, 1000);
        }

        Relay build(TestDatabase db, TestKafka broker, RefusingProducer kafka, int maxAttempts) {
            if (this == POLL) {
                return PollerProducerSeam.producerFactory(PollingRelay.builder()
                        .jdbcUrl(db.jdbcUrl()).user(db.user()).password(Secret.of(db.password()))
                        .bootstrapServers(broker.bootstrapServers()).route(TopicRoute.of("contract")).instanceId("contract-poll")
                        .partitions(4).maxAttempts(maxAttempts), config -> kafka).build();
            }
            return CdcProducerSeam.producerFactory(CdcRelay.builder()
                    .jdbcUrl(db.jdbcUrl()).user(db.user()).password(Secret.of(db.password()))
                    .bootstrapServers(broker.bootstrapServers()).route(TopicRoute.of("contract")).instanceId("contract-cdc")
                    .slotName(slot(db)).leaseDuration(Duration.ofSeconds(10)).heartbeatInterval(Duration.ofSeconds(1))
                    .offsetFlushInterval(Duration.ofMillis(200)).maxAttempts(maxAttempts), config -> kafka).build();
        }
    }

    /** What each relay did, per case: the outcome, and for a parked event its error_class and attempts. */
    private static final Map<Kind, Map<String, String>> OBSERVED = new ConcurrentHashMap<>();

    /** Acknowledges at once, except the event of type {@code Refused} while a failure is set. */
    static final class RefusingProducer extends MockProducer<byte[], byte[]> {
        private volatile Case failing;
        private final Map<UUID, AtomicInteger> refusals = new ConcurrentHashMap<>();

        RefusingProducer() {
            super(true, null, new ByteArraySerializer(), new ByteArraySerializer());
        }

        void refuse(Case c) {
            failing = c;
        }

        void heal() {
            failing = null;
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

        int refusals(UUID id) {
            AtomicInteger n = refusals.get(id);
            return n == null ? 0 : n.get();
        }

        boolean published(UUID id) {
            return history().stream().anyMatch(r -> id.toString().equals(header(r, HeaderNames.ID)));
        }

        @Override
        public synchronized Future<RecordMetadata> send(ProducerRecord<byte[], byte[]> record, Callback callback) {
            Case c = failing;
            if (c != null && "Refused".equals(header(record, HeaderNames.EVENT_TYPE))) {
                refusals.computeIfAbsent(UUID.fromString(header(record, HeaderNames.ID)), k -> new AtomicInteger())
                        .incrementAndGet();
                RuntimeException e = c.error().get();
                if (e instanceof InterruptException) {
                    Thread.interrupted(); // its constructor interrupts the thread that makes it: here it is only data
                }
                if (c.via() == Via.SEND) {
                    throw e;
                }
                if (callback != null) {
                    callback.onCompletion(null, e);
                }
                return CompletableFuture.failedFuture(e);
            }
            return super.send(record, callback);
        }

        private static String header(ProducerRecord<byte[], byte[]> r, String name) {
            var h = r.headers().lastHeader(name);
            return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
        }
    }

    @ParameterizedTest
    @EnumSource(Kind.class)
    void everyFailureMeansTheSameInBothRelays(Kind kind, TestDatabase db, TestKafka broker) throws Exception {
        RefusingProducer kafka = new RefusingProducer();
        Map<String, String> observed = new LinkedHashMap<>();
        SoftAssertions softly = new SoftAssertions();
        try (Relay relay = kind.build(db, broker, kafka)) {
            relay.start();
            await().atMost(Duration.ofSeconds(90)).until(() -> relay.health().ready());
            int n = 0;
            for (Case c : CASES) {
                n++;
                String result = run(kind, db, relay, kafka, c, n, softly);
                observed.put(c.toString(), result);
                softly.assertThat(result).as(kind + ", " + c).startsWith(c.expected().name());
            }
        } finally {
            if (kind == Kind.CDC) {
                db.dropReplicationSlot(slot(db));
            }
        }
        OBSERVED.put(kind, observed);
        softly.assertAll();
    }

    @AfterAll
    static void bothRelaysDidTheSame() {
        if (OBSERVED.size() == Kind.values().length) {
            assertThat(OBSERVED.get(Kind.CDC)).isEqualTo(OBSERVED.get(Kind.POLL));
        }
        if (NEVER_CLEARS.size() == Kind.values().length) {
            assertThat(NEVER_CLEARS.get(Kind.CDC)).isEqualTo(NEVER_CLEARS.get(Kind.POLL));
        }
    }

    /** What each relay did with a retriable failure that never clears, and with a timeout that never clears. */
    private static final Map<Kind, String> NEVER_CLEARS = new ConcurrentHashMap<>();

    /**
     * A retriable failure of one record's own that never clears (issue 26, item 7): with nothing else to publish,
     * so no other acknowledgement tells the relay that Kafka works, both relays park the row after exactly
     * {@code maxAttempts} refusals, with the failure's class and that count, and publish what is around it; the
     * CDC relay no longer replays it for ever while it holds the slot. A timeout that never clears is Kafka away, not
     * the record: it is retried past {@code maxAttempts}, never parked, and published once Kafka is back.
     */
    @ParameterizedTest
    @EnumSource(Kind.class)
    void aRetriableFailureThatNeverClearsIsParkedAfterMaxAttemptsATimeoutNever(Kind kind, TestDatabase db, TestKafka broker)
            throws Exception {
        int maxAttempts = 2;
        RefusingProducer kafka = new RefusingProducer();
        StringBuilder observed = new StringBuilder();
        try (Relay relay = kind.build(db, broker, kafka, maxAttempts)) {
            relay.start();
            await().atMost(Duration.ofSeconds(90)).until(() -> relay.health().ready());
            String label = kind + ", UnknownServerException for ever";
            kafka.refuse(Case.future(() -> new UnknownServerException("test: the broker keeps failing this record"),
                    PublishFailure.RETRIABLE));
            UUID[] ids = insertThree(db, 1);
            await(label + ": parked").atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(20))
                    .until(() -> parked(db, ids[1]) != null);
            await(label + ": the rest is published").atMost(Duration.ofSeconds(60))
                    .until(() -> kafka.published(ids[0]) && kafka.published(ids[2]) && rows(db) == 0);
            String[] letter = parked(db, ids[1]);
            assertThat(letter[0]).as(label + ": error_class").isEqualTo(UnknownServerException.class.getName());
            assertThat(letter[1]).as(label + ": attempts").isEqualTo(Integer.toString(maxAttempts));
            assertThat(kafka.refusals(ids[1])).as(label + ": sent exactly maxAttempts times").isEqualTo(maxAttempts);
            assertThat(kafka.published(ids[1])).as(label + ": never published").isFalse();
            observed.append("parked ").append(letter[0]).append(" attempts=").append(letter[1])
                    .append(" refusals=").append(kafka.refusals(ids[1]));

            label = kind + ", TimeoutException for ever";
            kafka.refuse(Case.future(() -> new TimeoutException("test: expiring 1 record(s)"), PublishFailure.RETRIABLE));
            UUID[] late = insertThree(db, 2);
            await(label + ": retried past maxAttempts").atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(20))
                    .until(() -> kafka.refusals(late[1]) > maxAttempts);
            assertThat(parked(db, late[1])).as(label + ": never parked").isNull();
            assertThat(unpublished(db, late[1])).as(label + ": still in outbox_event").isTrue();
            kafka.heal();
            await(label + ": published after the heal").atMost(Duration.ofSeconds(90))
                    .until(() -> kafka.published(late[1]) && rows(db) == 0);
            assertThat(parked(db, late[1])).as(label + ": never parked").isNull();
            observed.append("; timeout retried, published after the heal");
        } finally {
            if (kind == Kind.CDC) {
                db.dropReplicationSlot(slot(db));
            }
        }
        NEVER_CLEARS.put(kind, observed.toString());
    }

    /** Fine, Refused, Fine in one transaction. */
    private static UUID[] insertThree(TestDatabase db, int n) throws SQLException {
        UUID[] ids = {EventIds.next(), EventIds.next(), EventIds.next()};
        try (Connection conn = db.connect()) {
            conn.setAutoCommit(false);
            insert(conn, ids[0], "a-" + n, "Fine", "{}");
            insert(conn, ids[1], "r-" + n, "Refused", "{}");
            insert(conn, ids[2], "b-" + n, "Fine", "{}");
            conn.commit();
        }
        return ids;
    }

    /** One case: three events (fine, refused, fine), what the relay does with the refused one, then heal. */
    private static String run(Kind kind, TestDatabase db, Relay relay, RefusingProducer kafka, Case c, int n,
                              SoftAssertions softly) throws Exception {
        UUID before = EventIds.next();
        UUID refused = EventIds.next();
        UUID after = EventIds.next();
        if (c.via() == Via.MAPPING) {
            kafka.heal();
        } else {
            kafka.refuse(c);
        }
        try (Connection conn = db.connect()) {
            conn.setAutoCommit(false);
            insert(conn, before, "a-" + n, "Fine", "{}");
            insert(conn, refused, "r-" + n, "Refused", c.via() == Via.MAPPING ? "{\"id\": \"spoofed\"}" : "{}");
            insert(conn, after, "b-" + n, "Fine", "{}");
            conn.commit();
        }
        String label = kind + ", " + c;
        await(label).atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(20))
                .until(() -> parked(db, refused) != null || kafka.refusals(refused) >= 2);
        String result;
        String[] letter = parked(db, refused);
        if (letter != null) {
            result = PublishFailure.POISON + " " + letter[0] + " attempts=" + letter[1];
            await(label + ": the rest is published").atMost(Duration.ofSeconds(60))
                    .until(() -> kafka.published(before) && kafka.published(after) && rows(db) == 0);
            softly.assertThat(letter[2]).as(label + ": parked_by").isEqualTo("contract-" + kind.name().toLowerCase());
            softly.assertThat(kafka.published(refused)).as(label + ": the parked event was not published").isFalse();
        } else {
            Relay.Health health = relay.health();
            boolean operator = health.detail().contains(PublishFailures.OPERATOR_HINT);
            result = (operator ? PublishFailure.FATAL : PublishFailure.RETRIABLE).name();
            softly.assertThat(health.ready()).as(label + ": not ready while it fails (" + health.detail() + ")").isFalse();
            softly.assertThat(unpublished(db, refused)).as(label + ": the event stays in outbox_event").isTrue();
            if (kind == Kind.POLL && operator) {
                // only the polling relay counts attempts; a failure that needs an operator must never add to them
                softly.assertThat(attempts(db, refused)).as(label + ": not counted as an attempt").isZero();
            }
            kafka.heal();
            await(label + ": published after the heal").atMost(Duration.ofSeconds(90))
                    .until(() -> kafka.published(refused) && kafka.published(before) && kafka.published(after) && rows(db) == 0);
            softly.assertThat(parked(db, refused)).as(label + ": never parked").isNull();
        }
        return result;
    }

    private static String slot(TestDatabase db) {
        return "s_" + db.name();
    }

    private static void insert(Connection c, UUID id, String aggregate, String type, String headers) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, "
                + "payload, headers) VALUES (?, 'order', ?, ?, '{\"n\": 1}', ?::jsonb)")) {
            ps.setObject(1, id);
            ps.setString(2, aggregate);
            ps.setString(3, type);
            ps.setString(4, headers);
            ps.executeUpdate();
        }
    }

    /** error_class, attempts and parked_by of the event's dead letter, or null. */
    private static String[] parked(TestDatabase db, UUID id) throws SQLException {
        try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement(
                "SELECT error_class, attempts, parked_by FROM outbox_dead_letter WHERE id = ?")) {
            ps.setObject(1, id);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? new String[] {rs.getString(1), rs.getString(2), rs.getString(3)} : null;
            }
        }
    }

    private static boolean unpublished(TestDatabase db, UUID id) throws SQLException {
        try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement(
                "SELECT count(*) FROM outbox_event WHERE id = ?")) {
            ps.setObject(1, id);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1) == 1;
            }
        }
    }

    private static int attempts(TestDatabase db, UUID id) throws SQLException {
        try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement(
                "SELECT attempts FROM outbox_event WHERE id = ?")) {
            ps.setObject(1, id);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getInt(1) : -1;
            }
        }
    }

    private static long rows(TestDatabase db) throws SQLException {
        try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM outbox_event");
             ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
