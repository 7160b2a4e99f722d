package dev.outboxkit.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.outboxkit.consumer.DedupeConsumer;
import dev.outboxkit.testkit.DocumentedGrants;
import dev.outboxkit.testkit.History;
import dev.outboxkit.testkit.JavaProcess;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import dev.outboxkit.writer.CommitOutcomeUnknownException;
import dev.outboxkit.writer.OutboxMessage;
import dev.outboxkit.writer.OutboxTransaction;
import dev.outboxkit.writer.OutboxWriter;
import dev.outboxkit.writer.WriteMode;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one end-to-end harness of the suite. Writers commit events through {@link OutboxWriter}
 * (recording {@link History#committed}, {@link History#inDoubt} or {@link History#rolledBack});
 * relays of one {@link RelayKind} (polling relays, or CDC relays on one replication slot) run in
 * child JVMs (killable, pausable) and reach PostgreSQL and Kafka through the environment's fault
 * proxies; a {@link DedupeConsumer} applies every new event by inserting
 * a row into {@code reliability_effect}. Relays, consumer and writers each run as a
 * least-privileged role with exactly the grants their module README documents, so a missing grant fails
 * the suite. {@link #healDrainAndCheck()} heals every fault, waits until the outbox is empty and
 * the consumer has no lag, then feeds the applied effects (from the table, i.e. only committed
 * effects) and the delivered records (from the topic) into the history and checks it.
 */
final class Harness implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(Harness.class);
    private static final int PARTITIONS = 4;
    static final Duration RELAY_LEASE = Duration.ofSeconds(6);

    final String name;
    final RelayKind kind;
    /** The CDC relays' replication slot (server-wide, so one per scenario); null for polling relays. */
    final String slot;
    final Environment env;
    /** Where the database lives and how relays reach it: {@link #env} unless the scenario brought its own. */
    final Ground ground;
    final TestDatabase db;
    final String topic;
    final History history = new History();
    final String relayPassword = "relay-pw-" + UUID.randomUUID();
    final String consumerPassword = "consumer-pw-" + UUID.randomUUID();
    final String appPassword = "app-pw-" + UUID.randomUUID();
    final String relayRole;
    final String consumerRole;
    final String appRole;
    final OutboxWriter writer;
    final Duration relayLease;
    private final HikariDataSource appPool;
    private final HikariDataSource consumerPool;
    private final DedupeConsumer consumer;
    private final Map<String, JavaProcess> relays = new ConcurrentHashMap<>();
    private final Map<String, String> targetOfInstance = new ConcurrentHashMap<>();
    private final List<JavaProcess> allRelayProcesses = new ArrayList<>();
    private final AtomicInteger relayStarts = new AtomicInteger();
    private final List<Thread> writerThreads = new ArrayList<>();
    private final AtomicBoolean writing = new AtomicBoolean();
    final AtomicLong commits = new AtomicLong();
    final AtomicLong inDoubtCommits = new AtomicLong();
    final AtomicLong failedCommits = new AtomicLong();
    final AtomicLong connectionFailures = new AtomicLong();
    private final Map<String, Long> nextOrder = new ConcurrentHashMap<>();

    Harness(String name, int relayCount) throws SQLException {
        this(name, relayCount, RelayKind.POLL);
    }

    Harness(String name, int relayCount, RelayKind kind) throws SQLException {
        this(name, relayCount, kind, Map.of());
    }

    /** {@code consumerKafkaProperties}: extra Kafka consumer settings (e.g. a {@code sasl.jaas.config} the log check looks for). */
    Harness(String name, int relayCount, RelayKind kind, Map<String, ?> consumerKafkaProperties) throws SQLException {
        this(name, relayCount, kind, consumerKafkaProperties, RELAY_LEASE);
    }

    /** {@code relayLease}: the relays' lease duration (the polling relay waits a third of it for Kafka's answer). */
    Harness(String name, int relayCount, RelayKind kind, Map<String, ?> consumerKafkaProperties, Duration relayLease)
            throws SQLException {
        this(name, relayCount, kind, consumerKafkaProperties, relayLease, null);
    }

    /** On {@code ground} (null: the suite's {@link Environment}); Kafka is always the environment's. */
    Harness(String name, int relayCount, RelayKind kind, Map<String, ?> consumerKafkaProperties, Duration relayLease,
            Ground ground) throws SQLException {
        this.name = name;
        this.relayLease = relayLease;
        this.kind = kind;
        this.env = Environment.get();
        this.ground = ground == null ? env : ground;
        env.healAll();
        this.ground.heal();
        this.db = this.ground.postgres().newDatabase();
        String suffix = db.name().replaceAll("[^a-z0-9_]", "_");
        relayRole = ("rel_relay_" + suffix);
        consumerRole = ("rel_consumer_" + suffix);
        appRole = ("rel_app_" + suffix);
        slot = kind.cdc() ? "rel_slot_" + suffix : null;
        writer = OutboxWriter.builder().schema("public")
                .mode(kind == RelayKind.CDC_WAL ? WriteMode.INSERT_AND_DELETE : WriteMode.KEEP).build();
        createRolesAndTables();
        topic = TestKafka.uniqueTopic("reliability-" + name);
        env.kafka.createTopic(topic, PARTITIONS);
        appPool = pool(db.jdbcUrl(), appRole, appPassword, 8, "app");
        consumerPool = pool(db.jdbcUrl(), consumerRole, consumerPassword, 4, "consumer");
        for (int i = 1; i <= relayCount; i++) {
            startRelay("relay-" + i);
        }
        consumer = DedupeConsumer.builder()
                .bootstrapServers(env.kafka.internalBootstrapServers())
                .kafkaProperties(consumerKafkaProperties)
                .group("reliability-" + name + "-" + UUID.randomUUID())
                .topics(List.of(topic))
                .dataSource(consumerPool)
                .batchHandler((connection, events) -> {
                    // one statement per batch (arrays), not a JDBC batch: see docs/evidence/reliability-findings-20261201.md
                    UUID[] ids = new UUID[events.size()];
                    String[] aggregates = new String[events.size()];
                    for (int i = 0; i < ids.length; i++) {
                        ids[i] = events.get(i).id();
                        aggregates[i] = events.get(i).aggregateId();
                    }
                    try (PreparedStatement ps = connection.prepareStatement("INSERT INTO reliability_effect "
                            + "(event_id, aggregate_id) SELECT id, agg FROM unnest(?::uuid[], ?::text[]) WITH ORDINALITY "
                            + "AS e(id, agg, i) ORDER BY i")) {
                        ps.setArray(1, connection.createArrayOf("uuid", ids));
                        ps.setArray(2, connection.createArrayOf("text", aggregates));
                        ps.executeUpdate();
                    }
                })
                .build();
        consumer.start();
        if (kind.cdc() && relayCount > 0) {
            // A slot sees only what is committed after it was created. In the WAL-only mode nothing else
            // keeps an event (the first runs lost every event written during the relay JVM's start-up), so
            // writers start once the first relay has created the slot, as an operator must do.
            await("slot " + slot + " created").atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofMillis(200))
                    .until(() -> {
                        assertNoRelayFailed();
                        return count("SELECT count(*) FROM pg_replication_slots WHERE slot_name = ?", slot) == 1;
                    });
        }
        log.info("scenario {} ({} relay): database {}, topic {}, roles {}/{}/{}", name, kind.label(), db.name(), topic,
                appRole, relayRole, consumerRole);
    }

    /**
     * The documented least-privilege grants (the module READMEs of relay-poller or relay-debezium,
     * consumer-dedupe and outbox-writer), nothing more.
     */
    private void createRolesAndTables() throws SQLException {
        try (Connection c = db.connect(); Statement s = c.createStatement()) {
            s.execute("CREATE ROLE " + relayRole + " LOGIN " + (kind.cdc() ? "REPLICATION " : "")
                    + "PASSWORD '" + relayPassword + "'");
            s.execute("CREATE ROLE " + consumerRole + " LOGIN PASSWORD '" + consumerPassword + "'");
            s.execute("CREATE ROLE " + appRole + " LOGIN PASSWORD '" + appPassword + "'");
            s.execute("CREATE TABLE reliability_effect (n bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, "
                    + "event_id uuid NOT NULL, aggregate_id text NOT NULL)");
            if (kind.cdc()) {
                DocumentedGrants.cdcRelay(s, relayRole, kind == RelayKind.CDC);
                DocumentedGrants.cdcPublication(s);
            } else {
                DocumentedGrants.pollingRelay(s, relayRole);
            }
            // plus what the consumer's handler needs on the service's own table
            DocumentedGrants.consumer(s, consumerRole);
            s.execute("GRANT INSERT ON reliability_effect TO " + consumerRole);
            DocumentedGrants.writer(s, appRole, kind == RelayKind.CDC_WAL);
        }
    }

    static HikariDataSource pool(String url, String user, String password, int size, String name) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setUsername(user);
        config.setPassword(password);
        config.setMaximumPoolSize(size);
        config.setMinimumIdle(0);
        config.setConnectionTimeout(5_000);
        config.setPoolName("reliability-" + name);
        return new HikariDataSource(config);
    }

    // ---------------------------------------------------------------- relays

    /** Starts (or restarts) the relay {@code target} in a child JVM, reaching PostgreSQL and Kafka through the proxies. */
    void startRelay(String target) {
        String instance = target + "-" + relayStarts.incrementAndGet();
        List<String> args = new ArrayList<>(List.of(ground.relayJdbcUrl(db), relayRole,
                env.kafka.bootstrapServers(), topic, instance, Long.toString(relayLease.toMillis())));
        if (kind.cdc()) {
            args.add(slot);
            args.add(Boolean.toString(kind == RelayKind.CDC));
        }
        JavaProcess p = JavaProcess.start(name + "-" + instance, kind.cdc() ? CdcRelayMain.class : PollRelayMain.class,
                args, List.of(), Map.of("RELAY_DB_PASSWORD", relayPassword));
        synchronized (allRelayProcesses) {
            allRelayProcesses.add(p);
        }
        targetOfInstance.put(instance, target);
        relays.put(target, p);
    }

    /** The CDC relay ({@code relay-1}, ...) whose instance holds the lease {@code cdc/<slot>} now, or null. */
    String activeCdcRelay() throws SQLException {
        try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement(
                "SELECT holder FROM outbox_relay_lease WHERE lease_key = ? AND expires_at > now()")) {
            ps.setString(1, "cdc/" + slot);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? targetOfInstance.get(rs.getString(1)) : null;
            }
        }
    }

    /** The CDC relays' lease: its fencing token and holder (instance id). */
    record LeaseState(long fence, String holder) {
    }

    LeaseState cdcLease() throws SQLException {
        try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement(
                "SELECT fence, holder FROM outbox_relay_lease WHERE lease_key = ?")) {
            ps.setString(1, "cdc/" + slot);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? new LeaseState(rs.getLong(1), rs.getString(2)) : null;
            }
        }
    }

    /** The fencing token and writer of the CDC relays' stored offset. */
    LeaseState cdcOffsetWriter() throws SQLException {
        try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement(
                "SELECT fence, updated_by FROM outbox_cdc_offset WHERE slot_name = ? ORDER BY updated_at DESC LIMIT 1")) {
            ps.setString(1, slot);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? new LeaseState(rs.getLong(1), rs.getString(2)) : null;
            }
        }
    }

    /** Fails at once when a relay stopped for good (a CDC relay's start-up check, e.g. a missing grant). */
    private void assertNoRelayFailed() {
        synchronized (allRelayProcesses) {
            for (JavaProcess p : allRelayProcesses) {
                String out = p.output();
                if (out.contains("\nFAILED ") || out.startsWith("FAILED ")) {
                    throw new AssertionError(p.name() + " stopped for good:\n" + out);
                }
            }
        }
    }

    /** True when the newest relay process's last readiness line is READY (a CDC relay prints READY / NOT READY on change). */
    boolean relayReady() {
        JavaProcess newest;
        synchronized (allRelayProcesses) {
            newest = allRelayProcesses.isEmpty() ? null : allRelayProcesses.get(allRelayProcesses.size() - 1);
        }
        if (newest == null) {
            return false;
        }
        List<Readiness> states = readiness(newest);
        return !states.isEmpty() && states.get(states.size() - 1).ready();
    }

    /** One change of a relay's readiness, as its child JVM printed it. */
    record Readiness(long epochMillis, boolean ready, String detail) {
    }

    /** Every change of readiness relay process {@code p} printed, in order. */
    static List<Readiness> readiness(JavaProcess p) {
        List<Readiness> out = new ArrayList<>();
        for (String line : p.output().lines().toList()) {
            boolean up = line.startsWith("READY ");
            if (up || line.startsWith("NOT READY ")) {
                String[] parts = line.substring(up ? 6 : 10).split(" ", 2);
                out.add(new Readiness(Long.parseLong(parts[0]), up, parts.length > 1 ? parts[1] : ""));
            }
        }
        return out;
    }

    int relayStartsCount() {
        return relayStarts.get();
    }

    JavaProcess relay(String target) {
        return relays.get(target);
    }

    void kill9Relay(String target) {
        relays.get(target).kill9();
    }

    // ---------------------------------------------------------------- writers

    /** Starts {@code threads} writers; each owns 8 aggregates, so one aggregate's commits are sequential. */
    void startWriters(int threads, Duration pause) {
        writing.set(true);
        for (int t = 0; t < threads; t++) {
            int id = t;
            Thread thread = new Thread(() -> writeLoop(id, pause), name + "-writer-" + t);
            thread.setDaemon(true);
            writerThreads.add(thread);
            thread.start();
        }
    }

    private void writeLoop(int id, Duration pause) {
        Random random = new Random(id);
        while (writing.get()) {
            String aggregate = "w" + id + "-a" + random.nextInt(8);
            int events = 1 + random.nextInt(3);
            try {
                writeOnce(aggregate, events);
            } catch (SQLException | RuntimeException e) {
                if (connectionFailures.incrementAndGet() <= 3) {
                    log.warn("scenario {}: writer failed ({} so far): {}", name, connectionFailures.get(), e.toString());
                }
                sleep(Duration.ofMillis(100));
            }
            sleep(pause);
        }
    }

    /** One transaction with {@code events} events of {@code aggregate}, recorded in the history whatever happens. */
    void writeOnce(String aggregate, int events) throws SQLException {
        try (Connection c = appPool.getConnection()) {
            c.setAutoCommit(false);
            OutboxTransaction tx = writer.begin(c);
            List<UUID> ids = new ArrayList<>();
            List<Long> orders = new ArrayList<>();
            for (int i = 0; i < events; i++) {
                long order = nextOrder.merge(aggregate, 1L, Long::sum);
                ids.add(tx.add(OutboxMessage.builder("reliability", aggregate, "Happened")
                        .payloadJson("{\"n\":" + order + ",\"marker\":\"" + PAYLOAD_MARKER + "\"}").build()));
                orders.add(order);
            }
            try {
                tx.commit();
                for (int i = 0; i < ids.size(); i++) {
                    history.committed(ids.get(i), aggregate, orders.get(i));
                }
                commits.incrementAndGet();
            } catch (CommitOutcomeUnknownException e) {
                for (int i = 0; i < ids.size(); i++) {
                    history.inDoubt(ids.get(i), aggregate, orders.get(i));
                }
                inDoubtCommits.incrementAndGet();
            } catch (SQLException e) {
                if (failedCommits.get() < 3) {
                    log.warn("scenario {}: commit refused: {}", name, e.toString());
                }
                ids.forEach(history::rolledBack);
                failedCommits.incrementAndGet();
            }
        }
    }

    /**
     * Commits one event of {@code aggregate} (its own aggregate: not one the writers use), retrying while the database
     * refuses (a failover in progress), and returns its id once committed. Recorded in the history like any event.
     */
    UUID writeProbe(String aggregate, Duration atMost) {
        long deadline = System.nanoTime() + atMost.toNanos();
        while (true) {
            long before = commits.get();
            try (Connection c = appPool.getConnection()) {
                c.setAutoCommit(false);
                OutboxTransaction tx = writer.begin(c);
                long order = nextOrder.merge(aggregate, 1L, Long::sum);
                UUID id = tx.add(OutboxMessage.builder("reliability", aggregate, "Probe")
                        .payloadJson("{\"n\":" + order + "}").build());
                try {
                    tx.commit();
                    history.committed(id, aggregate, order);
                    return id;
                } catch (CommitOutcomeUnknownException e) {
                    history.inDoubt(id, aggregate, order); // maybe committed: the next probe decides
                } catch (SQLException e) {
                    history.rolledBack(id);
                }
            } catch (SQLException | RuntimeException e) {
                // no connection yet: the new primary is not reachable
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no probe of " + aggregate + " could be committed within " + atMost
                        + " (writer commits before: " + before + ")");
            }
            sleep(Duration.ofMillis(20));
        }
    }

    /** The topic's end offset per partition now. */
    Map<Integer, Long> endOffsets() {
        try (org.apache.kafka.clients.consumer.KafkaConsumer<byte[], byte[]> consumer = probeConsumer()) {
            Map<Integer, Long> ends = new HashMap<>();
            consumer.endOffsets(partitions()).forEach((tp, offset) -> ends.put(tp.partition(), offset));
            return ends;
        }
    }

    /** When (System.nanoTime) a record past {@code ends} could first be read from the topic; fails after {@code atMost}. */
    long awaitAppendedAfter(Map<Integer, Long> ends, Duration atMost) {
        try (org.apache.kafka.clients.consumer.KafkaConsumer<byte[], byte[]> consumer = probeConsumer()) {
            List<TopicPartition> partitions = partitions();
            consumer.assign(partitions);
            partitions.forEach(tp -> consumer.seek(tp, ends.getOrDefault(tp.partition(), 0L)));
            long deadline = System.nanoTime() + atMost.toNanos();
            while (System.nanoTime() < deadline) {
                if (!consumer.poll(Duration.ofMillis(20)).isEmpty()) {
                    return System.nanoTime();
                }
            }
        }
        throw new AssertionError("nothing was published within " + atMost + "; " + diagnose());
    }

    private org.apache.kafka.clients.consumer.KafkaConsumer<byte[], byte[]> probeConsumer() {
        Map<String, Object> config = env.kafka.consumerConfig(null);
        config.put(org.apache.kafka.clients.consumer.ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, env.kafka.internalBootstrapServers());
        return new org.apache.kafka.clients.consumer.KafkaConsumer<>(config);
    }

    private List<TopicPartition> partitions() {
        List<TopicPartition> partitions = new ArrayList<>();
        for (int p = 0; p < PARTITIONS; p++) {
            partitions.add(new TopicPartition(topic, p));
        }
        return partitions;
    }

    /** When (System.nanoTime) the record of event {@code id} could first be read from the topic; fails after {@code atMost}. */
    long awaitPublished(UUID id, Duration atMost) {
        try (org.apache.kafka.clients.consumer.KafkaConsumer<byte[], byte[]> consumer = probeConsumer()) {
            List<TopicPartition> partitions = partitions();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            long deadline = System.nanoTime() + atMost.toNanos();
            while (System.nanoTime() < deadline) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(20))) {
                    if (eventId(r).equals(id)) {
                        return System.nanoTime();
                    }
                }
            }
        }
        throw new AssertionError("event " + id + " was not published within " + atMost + "; " + diagnose());
    }

    /** The relay processes started so far, in start order (restarted ones included). */
    List<JavaProcess> relayProcesses() {
        synchronized (allRelayProcesses) {
            return List.copyOf(allRelayProcesses);
        }
    }

    /** A string in every payload: it must never show up in a log line at INFO or above. */
    static final String PAYLOAD_MARKER = "payload-secret-7c1e";

    void stopWriters() throws InterruptedException {
        writing.set(false);
        for (Thread t : writerThreads) {
            t.join(60_000);
        }
        writerThreads.clear();
    }

    /** Rows the consumer applied so far (a liveness probe while faults are on). */
    long appliedCount() throws SQLException {
        try (Connection c = db.connect(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT count(*) FROM reliability_effect")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    // ---------------------------------------------------------------- heal, drain, check

    /** Heals every fault, restarts dead relays, drains, and returns the checker's verdict (printed). */
    History.Report healDrainAndCheck() throws Exception {
        stopWriters();
        env.healAll();
        ground.heal();
        for (Map.Entry<String, JavaProcess> e : relays.entrySet()) {
            JavaProcess p = e.getValue();
            if (!p.isAlive()) {
                startRelay(e.getKey());
            } else {
                p.resume();   // harmless if it was not paused
            }
        }
        long start = System.nanoTime();
        awaitDrain("outbox drained by the relays", () -> count("SELECT count(*) FROM outbox_event"), () -> {
            assertNoRelayFailed();
            return count("SELECT count(*) FROM outbox_event") == 0;
        });
        if (kind.cdc()) {
            // the slot confirmed (i.e. the relay stored an offset at or past) all WAL written up to now: every
            // committed event before it was acknowledged by Kafka (in the WAL-only mode the table says nothing)
            String end = walPosition();
            awaitDrain("slot " + slot + " confirmed " + end, this::slotConfirmedLsn, () -> {
                assertNoRelayFailed();
                return slotConfirmed(end);
            });
        }
        awaitDrain("consumer caught up", this::consumerLag, () -> consumerLag() == 0);
        long drainMillis = (System.nanoTime() - start) / 1_000_000;
        assertThat(count("SELECT count(*) FROM outbox_dead_letter")).as("parked events").isZero();
        for (JavaProcess p : relays.values()) {
            p.terminate(Duration.ofSeconds(30));
        }
        consumer.close();
        try (Connection c = db.connect(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT event_id, aggregate_id FROM reliability_effect ORDER BY n")) {
            while (rs.next()) {
                history.applied((UUID) rs.getObject(1), rs.getString(2));
            }
        }
        // in partition order, keyed by aggregate: first publications are checked for commit order (G3)
        env.kafka.forEachRecord(List.of(topic), r -> history.delivered(eventId(r), new String(r.key(), StandardCharsets.UTF_8)));
        History.Report report = history.check();
        String line = String.format("RELIABILITY %s: %s | relay=%s writer commits=%d inDoubt=%d failed=%d "
                        + "connectionFailures=%d relayStarts=%d drain=%dms", name, report.summary(), kind.label(),
                commits.get(), inDoubtCommits.get(), failedCommits.get(), connectionFailures.get(), relayStarts.get(),
                drainMillis);
        System.out.println(line);
        log.info(line);
        assertNoSecretsInRelayOutput();
        return report;
    }

    /**
     * Waits for {@code done} while the drain makes progress: fails when {@code progress} (rows left, a WAL position,
     * the lag) did not change for {@link #DRAIN_STALL} — a row nobody publishes or deletes stops it there — or after an
     * hour, with what the relays and the database were doing. A soak's backlog on a loaded machine can take longer
     * than any fixed deadline to drain while nothing is wrong.
     */
    private void awaitDrain(String what, java.util.concurrent.Callable<?> progress,
                            java.util.concurrent.Callable<Boolean> done) {
        Object[] last = {null};
        long[] changedAt = {System.nanoTime()};
        java.util.concurrent.Callable<Boolean> stalled = () -> {
            Object now = progress.call();
            if (!java.util.Objects.equals(now, last[0])) {
                last[0] = now;
                changedAt[0] = System.nanoTime();
            }
            return System.nanoTime() - changedAt[0] > DRAIN_STALL.toNanos();
        };
        try {
            await(what).atMost(Duration.ofHours(1)).pollInterval(Duration.ofMillis(500))
                    .failFast(what + ": no progress for " + DRAIN_STALL, stalled).until(done);
        } catch (org.awaitility.core.ConditionTimeoutException | org.awaitility.core.TerminalFailureException e) {
            String state = diagnose();
            System.out.println("RELIABILITY " + name + ": " + what + " did not happen (" + e.getMessage() + ")\n" + state);
            throw new AssertionError(what + " did not happen (" + e.getMessage() + "); " + state, e);
        }
    }

    /** How long a drain may make no progress before the scenario fails. */
    private static final Duration DRAIN_STALL = Duration.ofMinutes(4);

    private String slotConfirmedLsn() throws SQLException {
        try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement(
                "SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = ?")) {
            ps.setString(1, slot);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getString(1) : null;
            }
        }
    }

    /** Rows left, whether Kafka has them, the slot, the relays' sessions and threads. */
    private String diagnose() {
        StringBuilder out = new StringBuilder();
        try {
            java.util.Set<String> delivered = new java.util.HashSet<>();
            for (ConsumerRecord<byte[], byte[]> r : readTopic()) {
                delivered.add(new String(r.headers().lastHeader("id").value(), StandardCharsets.UTF_8));
            }
            int left = 0;
            int leftDelivered = 0;
            try (Connection c = db.connect(); Statement s = c.createStatement();
                 ResultSet rs = s.executeQuery("SELECT id::text FROM outbox_event")) {
                while (rs.next()) {
                    left++;
                    if (delivered.contains(rs.getString(1))) {
                        leftDelivered++;
                    }
                }
            }
            out.append("outbox rows left ").append(left).append(", of them in the topic ").append(leftDelivered)
                    .append("; records in the topic ").append(delivered.size()).append('\n');
        } catch (Exception e) {
            out.append("outbox/topic: ").append(e).append('\n');
        }
        for (String sql : new String[] {
                "SELECT slot_name, active, active_pid, confirmed_flush_lsn, restart_lsn, pg_current_wal_lsn() "
                        + "FROM pg_replication_slots",
                "SELECT lease_key, holder, fence, expires_at > now() AS live FROM outbox_relay_lease",
                "SELECT pid, usename, backend_type, application_name, state, wait_event_type, wait_event, "
                        + "now() - state_change AS in_state, left(query, 100) FROM pg_stat_activity WHERE usename = '"
                        + relayRole + "'"}) {
            try (Connection c = db.connect(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
                int n = rs.getMetaData().getColumnCount();
                while (rs.next()) {
                    for (int i = 1; i <= n; i++) {
                        out.append(rs.getMetaData().getColumnName(i)).append('=').append(rs.getString(i)).append(' ');
                    }
                    out.append('\n');
                }
            } catch (SQLException e) {
                out.append(sql).append(": ").append(e).append('\n');
            }
        }
        synchronized (allRelayProcesses) {
            for (JavaProcess p : allRelayProcesses) {
                if (p.isAlive()) {
                    out.append("threads of ").append(p.name()).append(":\n").append(p.threadDump()).append('\n');
                }
            }
        }
        return out.toString();
    }

    /** How many copies of each event id the topic holds now. */
    Map<UUID, Integer> copiesById() {
        Map<UUID, Integer> copies = new HashMap<>();
        for (ConsumerRecord<byte[], byte[]> r : readTopic()) {
            copies.merge(eventId(r), 1, Integer::sum);
        }
        return copies;
    }

    private static UUID eventId(ConsumerRecord<byte[], byte[]> r) {
        Header h = r.headers().lastHeader("id");
        return UUID.fromString(new String(h.value(), StandardCharsets.UTF_8).replace("\"", ""));
    }

    private List<ConsumerRecord<byte[], byte[]>> readTopic() {
        return env.kafka.readAll(List.of(topic));
    }

    /** The relays' whole output (child JVMs, INFO and above) names neither password nor payload. */
    private void assertNoSecretsInRelayOutput() {
        synchronized (allRelayProcesses) {
            for (JavaProcess p : allRelayProcesses) {
                assertThat(p.output()).as("output of " + p.name())
                        .doesNotContain(relayPassword).doesNotContain(PAYLOAD_MARKER);
            }
        }
    }

    private String walPosition() throws SQLException {
        try (Connection c = db.connect(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT pg_current_wal_lsn()::text")) {
            rs.next();
            return rs.getString(1);
        }
    }

    private boolean slotConfirmed(String lsn) throws SQLException {
        try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement(
                "SELECT confirmed_flush_lsn >= ?::pg_lsn FROM pg_replication_slots WHERE slot_name = ?")) {
            ps.setString(1, lsn);
            ps.setString(2, slot);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() && rs.getBoolean(1);
            }
        }
    }

    /** Drops the scenario's replication slot (server-wide: left behind it would pin WAL for the whole suite). */
    private void dropSlot() {
        try {
            db.dropReplicationSlot(slot);
        } catch (IllegalStateException e) {
            log.warn("scenario {}: {}", name, e.getMessage());
        }
    }

    /** The scenario database's answer to a {@code count(*)}, values bound to its {@code ?} in order. */
    long count(String sql, Object... params) throws SQLException {
        return db.count(sql, params);
    }

    private long consumerLag() throws Exception {
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", env.kafka.internalBootstrapServers()))) {
            Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(consumer.group())
                    .partitionsToOffsetAndMetadata().get();
            Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
            for (int p = 0; p < PARTITIONS; p++) {
                latest.put(new TopicPartition(topic, p), OffsetSpec.latest());
            }
            long lag = 0;
            for (Map.Entry<TopicPartition, org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo> e
                    : admin.listOffsets(latest).all().get().entrySet()) {
                OffsetAndMetadata done = committed.get(e.getKey());
                lag += e.getValue().offset() - (done == null ? 0 : done.offset());
            }
            return lag;
        }
    }

    Map<String, String> figures(History.Report r) {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("events committed (intents)", Integer.toString(r.intents()));
        m.put("in doubt (applied)", r.inDoubt() + " (" + r.inDoubtApplied() + ")");
        m.put("records delivered", Long.toString(r.deliveries()));
        m.put("duplicate deliveries", Long.toString(r.duplicateDeliveries()));
        m.put("effects applied", Integer.toString(r.applied()));
        m.put("lost", Integer.toString(r.lost()));
        m.put("unexpected", Integer.toString(r.unexpected()));
        m.put("duplicate effects", Integer.toString(r.duplicateEffects()));
        m.put("order violations (first applications, per aggregate)", Integer.toString(r.orderViolations()));
        m.put("order violations (first publications in each partition, per aggregate)",
                Integer.toString(r.publicationOrderViolations()));
        m.put("outbox rows left after the drain", "0 (the drain waits for an empty table)");
        return m;
    }

    /** For a fault's duration or a pace only; a wait for something to happen is an {@code await} with a deadline. */
    static void sleep(Duration d) {
        try {
            Thread.sleep(d.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        writing.set(false);
        try {
            consumer.close();
        } catch (RuntimeException ignored) {
            // already closed after the check
        }
        synchronized (allRelayProcesses) {
            allRelayProcesses.forEach(JavaProcess::close);
        }
        appPool.close();
        consumerPool.close();
        env.healAll();
        if (kind.cdc()) {
            dropSlot();
        }
    }
}
