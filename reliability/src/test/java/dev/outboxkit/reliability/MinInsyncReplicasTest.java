package dev.outboxkit.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.outboxkit.consumer.DedupeConsumer;
import dev.outboxkit.core.Secret;
import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.relay.Relay;
import dev.outboxkit.relay.cdc.CdcRelay;
import dev.outboxkit.relay.poller.PollingRelay;
import dev.outboxkit.runtime.TopicReplication;
import dev.outboxkit.testkit.History;
import dev.outboxkit.testkit.KafkaProcess;
import dev.outboxkit.testkit.KafkaProcessCluster;
import dev.outboxkit.testkit.OutboxRows;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.slf4j.LoggerFactory;

/**
 * Managed Kafka's shape: three brokers, topics with replication factor 3 and {@code min.insync.replicas=2}, and a
 * controller quorum of its own (here one dedicated controller: with three combined nodes, two down would take the
 * quorum with them, and nothing would shrink the in-sync replicas and refuse writes the way a managed cluster does).
 * Each relay streams under steady writes while (a) the leader of its topic's partition 0 is killed with SIGKILL and
 * (b) two of the three brokers are frozen (SIGSTOP) and resumed: Kafka answers {@code describeCluster} all along but
 * refuses acks=all writes (NOT_ENOUGH_REPLICAS once the controller fenced the two). Readiness is recorded over time:
 * not ready within 10 s of the freeze, ready within 5 s of Kafka accepting writes again (a probe producer writing
 * acks=all to every partition says when); nothing lost, per-aggregate order kept (read back from the topic). The
 * consumer's readiness the same way, with its offset commits as the writes. And the start-up durability WARN for a
 * topic with replication factor 1 or min.insync.replicas 1 on this multi-broker cluster, none for RF 3 / min ISR 2.
 *
 * <p>Figures are printed as {@code MIN ISR …} lines. {@code -Doutboxkit.minisr.cycles=N} repeats the freeze N times per
 * relay (default 1 in the suite; the figures in docs/evidence/reliability-min-insync-replicas-20261206.md come from 2 per run).
 */
@ExtendWith(OutboxTestkitExtension.class)
class MinInsyncReplicasTest {

    private static final org.slf4j.Logger log = LoggerFactory.getLogger(MinInsyncReplicasTest.class);
    private static final int PARTITIONS = 3;
    private static final int AGGREGATES = 12;
    private static final Duration FREEZE = Duration.ofSeconds(15);
    private static final Duration NOT_READY_WITHIN = Duration.ofSeconds(10);
    private static final Duration READY_AGAIN_WITHIN = Duration.ofSeconds(5);
    private static final int CYCLES = Integer.getInteger("outboxkit.minisr.cycles", 1);
    private static final Map<String, String> DURABLE = Map.of("min.insync.replicas", "2");

    private static KafkaProcessCluster kafka;

    enum Kind { POLL, CDC }

    @BeforeAll
    static void startCluster() {
        // min.insync.replicas on every node, the controller included: in KRaft the controller's value is the
        // cluster-wide default (the consumer's offsets topic uses it); the relays' topics set it themselves too
        kafka = KafkaProcessCluster.startWithControllers(3, 1, DURABLE);
    }

    @AfterAll
    static void stopCluster() {
        if (kafka != null) {
            kafka.close();
        }
    }

    @ParameterizedTest
    @EnumSource(Kind.class)
    void twoOfThreeBrokersFrozenMakeTheRelayNotReadyWithin10sAndReadyWithin5sOfKafkaAcceptingAgain(Kind kind, TestDatabase db)
            throws Exception {
        String topic = durableTopic("minisr-" + kind.name().toLowerCase());
        try (Writers writers = new Writers(db, topic); Relay relay = relay(kind, db, topic)) {
            relay.start();
            await("ready").atMost(Duration.ofMinutes(2)).until(() -> relay.health().ready());
            writers.start();
            List<Long> notReady = new ArrayList<>();
            List<Long> readyAgain = new ArrayList<>();
            for (int cycle = 1; cycle <= CYCLES; cycle++) {
                writers.awaitFlowing();
                FreezeResult r = freezeTwo(topic, relay::health);
                notReady.add(r.notReadyMillis);
                readyAgain.add(r.readyAfterAcceptMillis);
                String line = "MIN ISR " + kind + " relay, freeze " + cycle + ": " + r;
                System.out.println(line);
                log.info(line);
                assertThat(r.refusals).as("the probe's acks=all writes refused for too few in-sync replicas").isPositive();
                assertThat(r.notReadyMillis).as("not ready after the freeze (ms)").isLessThanOrEqualTo(NOT_READY_WITHIN.toMillis());
                assertThat(r.readyWhileRefused).as("ready samples between %s after the freeze and Kafka's acceptance",
                        NOT_READY_WITHIN).isEmpty();
                assertThat(r.readyAfterAcceptMillis).as("ready again after Kafka accepted writes (ms)")
                        .isLessThanOrEqualTo(READY_AGAIN_WITHIN.toMillis());
                if (kind == Kind.CDC) {
                    // Kafka answers the reachability probe by then (the frozen brokers fenced): the write rule says why
                    assertThat(r.lateDetail).contains("Kafka accepts no writes now");
                }
                awaitInSync(topic);
            }
            History.Report report = writers.stopDrainAndCheck(() -> relay.health());
            String line = "MIN ISR " + kind + " relay: not ready after " + notReady + " ms, ready again " + readyAgain
                    + " ms after Kafka accepted; " + report.summary() + "; " + writers.describe();
            System.out.println(line);
            log.info(line);
            assertNothingLostInOrder(report);
        } finally {
            if (kind == Kind.CDC) {
                db.dropReplicationSlot(slot(db));
            }
        }
    }

    @ParameterizedTest
    @EnumSource(Kind.class)
    void theLeaderBrokerKilledLosesNothingAndKeepsOrder(Kind kind, TestDatabase db) throws Exception {
        String topic = durableTopic("leaderkill-" + kind.name().toLowerCase());
        try (Writers writers = new Writers(db, topic); Relay relay = relay(kind, db, topic);
             Admin admin = admin()) {
            relay.start();
            await("ready").atMost(Duration.ofMinutes(2)).until(() -> relay.health().ready());
            writers.start();
            writers.awaitFlowing();
            Recorder readiness = new Recorder(relay::health);
            int leader = describe(admin, topic).partitions().get(0).leader().id();
            long lastBeforeKill = db.count("SELECT coalesce(max(seq), 0) FROM outbox_event");
            long killed = System.nanoTime();
            kafka.broker(leader).kill9();
            await("every event committed before the kill published").atMost(Duration.ofMinutes(2))
                    .pollInterval(Duration.ofMillis(50))
                    .until(() -> db.count("SELECT count(*) FROM outbox_event WHERE seq <= ?", lastBeforeKill) == 0);
            long resumedMillis = (System.nanoTime() - killed) / 1_000_000;
            writers.awaitFlowing();
            readiness.close();
            kafka.broker(leader).start();
            awaitInSync(topic);
            History.Report report = writers.stopDrainAndCheck(() -> relay.health());
            String line = "MIN ISR " + kind + " relay, leader broker " + leader + " killed: the events committed before the "
                    + "kill published " + resumedMillis + " ms after it; readiness meanwhile " + readiness.transitions(killed)
                    + "; " + report.summary() + "; " + writers.describe();
            System.out.println(line);
            log.info(line);
            assertNothingLostInOrder(report);
        } finally {
            if (kind == Kind.CDC) {
                db.dropReplicationSlot(slot(db));
            }
        }
    }

    @Test
    void theConsumerIsNotReadyWhileKafkaTakesNoOffsetCommitAndReadyOnceItDoes(TestDatabase db) throws Exception {
        String topic = durableTopic("minisr-consumer");
        int events = 6000;
        Set<UUID> published = publish(topic, events);
        Set<UUID> applied = ConcurrentHashMap.newKeySet();
        try (DedupeConsumer consumer = DedupeConsumer.builder().bootstrapServers(kafka.bootstrapServers())
                .group("minisr-" + UUID.randomUUID()).topics(List.of(topic)).dataSource(db.dataSource())
                .kafkaProperties(Map.of("max.poll.records", "200"))
                .batchHandler((connection, batch) -> {
                    Thread.sleep(2L * batch.size()); // a slow handler: a backlog to work on, and commits, during the freeze
                    batch.forEach(e -> applied.add(e.id()));
                })
                .build()) {
            consumer.start();
            await("ready").atMost(Duration.ofMinutes(2)).until(() -> consumer.health().ready());
            await("applying").atMost(Duration.ofMinutes(2)).until(() -> applied.size() > 300);
            FreezeResult r = freezeTwo(topic, consumer::health);
            String line = "MIN ISR consumer: " + r + "; applied " + applied.size() + " of " + events + " at the end of it";
            System.out.println(line);
            log.info(line);
            assertThat(applied.size()).as("still applying after the freeze (the backlog lasts)").isLessThan(events);
            assertThat(r.notReadyMillis).as("not ready after the freeze (ms)").isLessThanOrEqualTo(NOT_READY_WITHIN.toMillis());
            assertThat(r.readyWhileRefused).as("ready samples between %s after the freeze and Kafka's acceptance",
                    NOT_READY_WITHIN).isEmpty();
            assertThat(r.readyAfterAcceptMillis).as("ready again after Kafka accepted writes (ms)")
                    .isLessThanOrEqualTo(READY_AGAIN_WITHIN.toMillis());
            await("every event applied").atMost(Duration.ofMinutes(3)).until(() -> applied.containsAll(published));
            awaitInSync(topic);
        }
    }

    @Test
    void aTopicWithOneReplicaOrMinInsyncReplicasOneIsWarnedOnceAtStartOrFirstPublicationARobustOneNot(TestDatabase db)
            throws Exception {
        String prefix = "dur-" + UUID.randomUUID().toString().substring(0, 8) + "-";
        String rf1 = prefix + "rf1";
        String isr1 = prefix + "isr1";
        String ok = prefix + "ok";
        String later = "late-" + prefix + "rf1"; // not the route's: found when first published to
        kafka.createTopic(rf1, 1, (short) 1, Map.of());
        kafka.createTopic(isr1, 1, (short) 3, Map.of("min.insync.replicas", "1"));
        kafka.createTopic(ok, 1, (short) 3, DURABLE);
        kafka.createTopic(later, 1, (short) 1, Map.of());
        LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
        Logger logger = context.getLogger(TopicReplication.class);
        ListAppender<ILoggingEvent> capture = new ListAppender<>();
        capture.setContext(context);
        capture.start();
        logger.addAppender(capture);
        try {
            for (Kind kind : Kind.values()) {
                capture.list.clear();
                try (Relay relay = relay(kind, db, null, TopicRoute.of(prefix + "${aggregateType}"))) {
                    relay.start();
                    await(kind + ": route topics warned").atMost(Duration.ofMinutes(1))
                            .until(() -> warnings(capture, rf1) == 1 && warnings(capture, isr1) == 1);
                    try (Connection c = db.connect()) {
                        OutboxRows.insert(c, "x", "a-1", "{\"n\": 1}");           // to the route's ...-x: no topic
                        OutboxRows.insert(c, "x", "a-1", "happened", "{\"n\": 2}", null, later);
                    }
                    await(kind + ": published").atMost(Duration.ofMinutes(1)).until(() -> db.count("SELECT count(*) FROM outbox_event") == 0);
                    await(kind + ": the new topic warned when first written").atMost(Duration.ofMinutes(1))
                            .until(() -> warnings(capture, later) == 1);
                    try (Connection c = db.connect()) {
                        OutboxRows.insert(c, "x", "a-1", "happened", "{\"n\": 3}", null, later);
                    }
                    await(kind + ": published again").atMost(Duration.ofMinutes(1)).until(() -> db.count("SELECT count(*) FROM outbox_event") == 0);
                    // several probes (every 2 s) later: still once per topic, and nothing about the robust one
                    await().during(Duration.ofSeconds(5)).atMost(Duration.ofSeconds(10))
                            .until(() -> warnings(capture, rf1) == 1 && warnings(capture, isr1) == 1
                                    && warnings(capture, later) == 1 && warnings(capture, ok) == 0);
                    List<String> lines = capture.list.stream().filter(e -> e.getLevel() == Level.WARN)
                            .map(ILoggingEvent::getFormattedMessage).toList();
                    lines.forEach(l -> System.out.println("MIN ISR durability WARN (" + kind + "): " + l));
                    assertThat(lines).filteredOn(l -> l.contains("topic " + rf1 + " has replication factor 1"))
                            .singleElement().asString().contains("--replication-factor 3");
                    assertThat(lines).filteredOn(l -> l.contains("topic " + isr1 + " has min.insync.replicas=1"))
                            .singleElement().asString()
                            .contains("kafka-configs --bootstrap-server", "--entity-name " + isr1, "min.insync.replicas=2");
                } finally {
                    db.execute("DELETE FROM outbox_event");
                    if (kind == Kind.CDC) {
                        db.dropReplicationSlot(slot(db));
                    }
                }
            }
        } finally {
            logger.detachAppender(capture);
        }
    }

    private static long warnings(ListAppender<ILoggingEvent> capture, String topic) {
        return List.copyOf(capture.list).stream()
                .filter(e -> e.getLevel() == Level.WARN && e.getFormattedMessage().contains("topic " + topic + " has "))
                .count();
    }

    // ---------------------------------------------------------------------------------------------------------------

    /** What one freeze of two brokers showed. */
    record FreezeResult(long notReadyMillis, long acceptedAfterResumeMillis, long readyAfterAcceptMillis, int refusals,
                        String refusal, List<String> readyWhileRefused, String detail, String lateDetail,
                        String transitions) {
        @Override
        public String toString() {
            return "not ready " + notReadyMillis + " ms after the freeze (" + detail + "), 1 s before the resume: "
                    + lateDetail + "; Kafka accepted writes again "
                    + acceptedAfterResumeMillis + " ms after the resume; ready " + readyAfterAcceptMillis
                    + " ms after that; the probe was refused " + refusals + " times (" + refusal + "); readiness "
                    + transitions;
        }
    }

    /**
     * Freezes the two brokers other than the leader of the topic's partition 0 for {@link #FREEZE}, resumes them, and
     * measures readiness against what a probe producer saw: when writes were refused, when accepted again.
     */
    private FreezeResult freezeTwo(String topic, Supplier<Relay.Health> health) throws Exception {
        List<KafkaProcess> frozen;
        try (Admin admin = admin()) {
            int survivor = describe(admin, topic).partitions().get(0).leader().id();
            frozen = kafka.brokers().stream().filter(b -> b.nodeId() != survivor).toList();
        }
        try (Recorder readiness = new Recorder(health); Probe probe = new Probe(topic)) {
            await("the probe's writes accepted before the freeze").atMost(Duration.ofMinutes(1)).until(probe::acceptedNow);
            long freeze = System.nanoTime();
            frozen.forEach(KafkaProcess::pause);
            long resume;
            long notReady;
            String lateDetail;
            try {
                await("not ready after the freeze").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(20))
                        .until(() -> readiness.firstNotReadyAfter(freeze) >= 0);
                notReady = readiness.firstNotReadyAfter(freeze);
                long until = freeze + FREEZE.toNanos();
                await("the freeze lasts " + FREEZE).atMost(FREEZE.plusSeconds(5)).pollInterval(Duration.ofMillis(100))
                        .until(() -> System.nanoTime() - until + TimeUnit.SECONDS.toNanos(1) >= 0); // the fault's duration
                lateDetail = health.get().detail();
                await("the freeze lasts " + FREEZE).atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(100))
                        .until(() -> System.nanoTime() - until >= 0);
            } finally {
                resume = System.nanoTime();
                frozen.forEach(KafkaProcess::resume);
            }
            await("Kafka accepts acks=all writes again").atMost(Duration.ofMinutes(2)).until(() -> probe.acceptedSince(resume) > 0);
            long accepted = probe.acceptedSince(resume);
            await("ready again").atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofMillis(20))
                    .until(() -> readiness.firstReadyAfter(accepted) >= 0);
            // the first ready sample after the resume; one before the probe saw Kafka accept (its rounds are 200 ms
            // apart) counts as 0
            long readyAt = readiness.firstReadyAfter(resume);
            long readyAfterAccept = Math.max(0, readyAt - accepted);
            List<String> readyWhileRefused = readiness.readyBetween(freeze + NOT_READY_WITHIN.toNanos(), resume);
            return new FreezeResult((notReady - freeze) / 1_000_000, (accepted - resume) / 1_000_000,
                    readyAfterAccept / 1_000_000, probe.refusals(), probe.refusal(), readyWhileRefused,
                    readiness.detailAt(notReady), lateDetail, readiness.transitions(freeze));
        }
    }

    /** Health sampled every 20 ms on a thread of its own: the readiness over time. */
    private static final class Recorder implements AutoCloseable {
        private record Sample(long nanos, boolean ready, String detail) {
        }

        private final List<Sample> samples = Collections.synchronizedList(new ArrayList<>());
        private final AtomicBoolean running = new AtomicBoolean(true);
        private final Thread thread;

        Recorder(Supplier<Relay.Health> health) {
            thread = new Thread(() -> {
                while (running.get()) {
                    Relay.Health h = health.get();
                    samples.add(new Sample(System.nanoTime(), h.ready(), h.detail()));
                    try {
                        Thread.sleep(20);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }, "readiness-recorder");
            thread.setDaemon(true);
            thread.start();
        }

        private List<Sample> copy() {
            synchronized (samples) {
                return List.copyOf(samples);
            }
        }

        long firstNotReadyAfter(long from) {
            return copy().stream().filter(s -> s.nanos - from >= 0 && !s.ready).mapToLong(Sample::nanos).findFirst().orElse(-1);
        }

        long firstReadyAfter(long from) {
            return copy().stream().filter(s -> s.nanos - from >= 0 && s.ready).mapToLong(Sample::nanos).findFirst().orElse(-1);
        }

        List<String> readyBetween(long from, long to) {
            return copy().stream().filter(s -> s.nanos - from >= 0 && s.nanos - to < 0 && s.ready)
                    .map(s -> "+" + (s.nanos - from) / 1_000_000 + " ms: " + s.detail).limit(5).toList();
        }

        String detailAt(long nanos) {
            return copy().stream().filter(s -> s.nanos == nanos).map(Sample::detail).findFirst().orElse("?");
        }

        /** Each change of readiness, in ms after {@code from}. */
        String transitions(long from) {
            StringBuilder out = new StringBuilder();
            Boolean last = null;
            for (Sample s : copy()) {
                if (last == null || s.ready != last) {
                    out.append(out.isEmpty() ? "" : ", ").append(s.ready ? "ready" : "not ready").append(" at ")
                            .append((s.nanos - from) / 1_000_000).append(" ms");
                    last = s.ready;
                }
            }
            return out.toString();
        }

        @Override
        public void close() throws InterruptedException {
            running.set(false);
            thread.join(5_000);
        }
    }

    /**
     * Writes one record with acks=all to every partition of the topic, round after round, no retries: when Kafka
     * refuses acks=all writes, and when it accepts them on every partition again. Its records carry no event id
     * (nothing reads them as events).
     */
    private static final class Probe implements AutoCloseable {
        private final KafkaProducer<byte[], byte[]> producer;
        private final AtomicBoolean running = new AtomicBoolean(true);
        private final List<Long> accepted = Collections.synchronizedList(new ArrayList<>());
        private final AtomicLong refusals = new AtomicLong();
        private volatile String refusal = "none";
        private final Thread thread;

        Probe(String topic) {
            Map<String, Object> config = new HashMap<>();
            config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
            config.put(ProducerConfig.ACKS_CONFIG, "all");
            config.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false);
            config.put(ProducerConfig.RETRIES_CONFIG, 0);
            config.put(ProducerConfig.LINGER_MS_CONFIG, 0);
            config.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 2_000);
            config.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 2_500);
            config.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 2_000);
            config.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
            config.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
            producer = new KafkaProducer<>(config);
            thread = new Thread(() -> {
                while (running.get()) {
                    List<Future<RecordMetadata>> round = new ArrayList<>();
                    try {
                        for (int p = 0; p < PARTITIONS; p++) {
                            round.add(producer.send(new ProducerRecord<>(topic, p, "probe".getBytes(StandardCharsets.UTF_8),
                                    "probe".getBytes(StandardCharsets.UTF_8))));
                        }
                        for (Future<RecordMetadata> f : round) {
                            f.get(5, TimeUnit.SECONDS);
                        }
                        accepted.add(System.nanoTime());
                    } catch (ExecutionException e) {
                        refusals.incrementAndGet();
                        refusal = e.getCause().getClass().getSimpleName();
                    } catch (InterruptedException e) {
                        return;
                    } catch (Exception e) {
                        refusals.incrementAndGet();
                        refusal = e.getClass().getSimpleName();
                    }
                    try {
                        Thread.sleep(200);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }, "acks-all-probe");
            thread.setDaemon(true);
            thread.start();
        }

        boolean acceptedNow() {
            long now = System.nanoTime();
            return acceptedSince(now - TimeUnit.SECONDS.toNanos(1)) > 0;
        }

        /** When a round was first acknowledged on every partition at or after {@code from}; 0 if none yet. */
        long acceptedSince(long from) {
            synchronized (accepted) {
                return accepted.stream().filter(t -> t - from >= 0).findFirst().orElse(0L);
            }
        }

        int refusals() {
            return (int) refusals.get();
        }

        String refusal() {
            return refusal;
        }

        @Override
        public void close() throws InterruptedException {
            running.set(false);
            thread.join(10_000);
            producer.close(Duration.ofSeconds(5));
        }
    }

    /**
     * One writer thread commits events for {@value #AGGREGATES} aggregates, one per transaction, every 10 ms, into
     * outbox_event with the topic set, recording each commit in a {@link History}.
     */
    private static final class Writers implements AutoCloseable {
        private final TestDatabase db;
        private final String topic;
        final History history = new History();
        private final AtomicBoolean running = new AtomicBoolean();
        private final AtomicLong commits = new AtomicLong();
        private final Map<String, Long> orders = new HashMap<>();
        private Thread thread;
        private volatile Throwable failure;
        private long started;

        Writers(TestDatabase db, String topic) {
            this.db = db;
            this.topic = topic;
        }

        void start() {
            running.set(true);
            started = System.nanoTime();
            thread = new Thread(() -> {
                int n = 0;
                try (Connection c = db.connect()) {
                    c.setAutoCommit(false);
                    while (running.get()) {
                        String aggregate = "agg-" + (n % AGGREGATES);
                        OutboxRows.Row row = OutboxRows.Row.of(topic, aggregate, n++);
                        OutboxRows.insert(c, List.of(row));
                        c.commit();
                        long order = orders.merge(aggregate, 1L, Long::sum);
                        history.committed(row.id(), aggregate, order);
                        commits.incrementAndGet();
                        Thread.sleep(10);
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } catch (Exception e) {
                    failure = e;
                }
            }, "minisr-writer");
            thread.start();
        }

        /** Events are committed and published: 100 more committed, and the table holds fewer than 200. */
        void awaitFlowing() throws Exception {
            long before = commits.get();
            await("writes flowing and published").atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofMillis(100))
                    .until(() -> {
                        if (failure != null) {
                            throw new AssertionError("the writer failed", failure);
                        }
                        return commits.get() > before + 100 && db.count("SELECT count(*) FROM outbox_event") < 200;
                    });
        }

        /** Stops writing, waits until the relay published everything, reads the topic back into the history. */
        History.Report stopDrainAndCheck(Supplier<Relay.Health> health) throws Exception {
            stop();
            await("the outbox drained").atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofMillis(200))
                    .until(() -> db.count("SELECT count(*) FROM outbox_event") == 0);
            kafka.forEachRecord(List.of(topic), this::delivered);
            return history.check();
        }

        private void delivered(ConsumerRecord<byte[], byte[]> r) {
            Header id = r.headers().lastHeader("id");
            if (id == null) {
                return; // the probe's
            }
            UUID eventId = UUID.fromString(new String(id.value(), StandardCharsets.UTF_8));
            String aggregate = new String(r.key(), StandardCharsets.UTF_8);
            history.delivered(eventId, aggregate);
            history.applied(eventId, aggregate); // reading the topic in partition order is what a consumer applies
        }

        String describe() {
            long seconds = Math.max(1, (System.nanoTime() - started) / 1_000_000_000L);
            return commits.get() + " events committed by one writer over " + seconds + " s (" + commits.get() / seconds
                    + "/s, " + AGGREGATES + " aggregates)";
        }

        private void stop() throws InterruptedException {
            running.set(false);
            if (thread != null) {
                thread.join(30_000);
            }
            if (failure != null) {
                throw new AssertionError("the writer failed", failure);
            }
        }

        @Override
        public void close() throws InterruptedException {
            stop();
        }
    }

    private static void assertNothingLostInOrder(History.Report report) {
        assertThat(report.lost()).as("lost: %s", report.lostSample()).isZero();
        assertThat(report.unexpected()).as("unexpected").isZero();
        assertThat(report.publicationOrderViolations()).as("per-aggregate order in the topic").isZero();
    }

    private static Relay relay(Kind kind, TestDatabase db, String topic) {
        return relay(kind, db, topic, TopicRoute.of(topic));
    }

    private static Relay relay(Kind kind, TestDatabase db, String topic, TopicRoute route) {
        if (kind == Kind.POLL) {
            return PollingRelay.builder().jdbcUrl(db.jdbcUrl()).user(db.user()).password(Secret.of(db.password()))
                    .bootstrapServers(kafka.bootstrapServers()).route(route).build();
        }
        return CdcRelay.builder().jdbcUrl(db.jdbcUrl()).user(db.user()).password(Secret.of(db.password()))
                .slotName(slot(db)).bootstrapServers(kafka.bootstrapServers()).route(route)
                .heartbeatInterval(Duration.ofSeconds(1)).offsetFlushInterval(Duration.ofMillis(200)).build();
    }

    private static String slot(TestDatabase db) {
        return "s_" + db.name();
    }

    private static String durableTopic(String name) {
        String topic = TestKafka.uniqueTopic(name);
        kafka.createTopic(topic, PARTITIONS, (short) 3, DURABLE);
        return topic;
    }

    /** Events with the outbox record's id header, keyed by aggregate, straight to the topic. */
    private static Set<UUID> publish(String topic, int n) throws Exception {
        Set<UUID> ids = new java.util.HashSet<>();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(), ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName(),
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName()))) {
            List<Future<RecordMetadata>> sent = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                UUID id = UUID.randomUUID();
                ids.add(id);
                RecordHeaders headers = new RecordHeaders();
                headers.add("id", id.toString().getBytes(StandardCharsets.UTF_8));
                sent.add(producer.send(new ProducerRecord<>(topic, null, ("agg-" + i % AGGREGATES).getBytes(StandardCharsets.UTF_8),
                        ("{\"n\": " + i + "}").getBytes(StandardCharsets.UTF_8), headers)));
            }
            for (Future<RecordMetadata> f : sent) {
                f.get(60, TimeUnit.SECONDS);
            }
        }
        return ids;
    }

    private static Admin admin() {
        return Admin.create(Map.of("bootstrap.servers", kafka.bootstrapServers(), "request.timeout.ms", 3_000,
                "default.api.timeout.ms", 10_000));
    }

    private static TopicDescription describe(Admin admin, String topic) throws Exception {
        return admin.describeTopics(List.of(topic)).allTopicNames().get(30, TimeUnit.SECONDS).get(topic);
    }

    /** Every partition of the topic (and of the offsets topic, once a group made it) back to three in-sync replicas. */
    private static void awaitInSync(String topic) {
        try (Admin admin = admin()) {
            await("all replicas back in sync").atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofMillis(500))
                    .ignoreExceptions().until(() -> {
                        List<String> topics = new ArrayList<>(List.of(topic));
                        if (admin.listTopics(new org.apache.kafka.clients.admin.ListTopicsOptions().listInternal(true))
                                .names().get(10, TimeUnit.SECONDS).contains("__consumer_offsets")) {
                            topics.add("__consumer_offsets");
                        }
                        return admin.describeTopics(topics).allTopicNames().get(10, TimeUnit.SECONDS).values().stream()
                                .allMatch(d -> d.partitions().stream().allMatch(p -> p.isr().size() == 3));
                    });
        }
    }
}
