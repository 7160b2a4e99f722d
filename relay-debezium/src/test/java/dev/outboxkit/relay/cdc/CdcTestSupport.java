package dev.outboxkit.relay.cdc;

import dev.outboxkit.core.Secret;
import dev.outboxkit.testkit.History;
import dev.outboxkit.testkit.RelayLeases;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;

/** Shared helpers of the relay's tests: relays on a test database, Kafka reads (rows: the testkit's OutboxRows). */
final class CdcTestSupport {

    private CdcTestSupport() {
    }

    /** A slot name no other test on the shared server uses (slots are global to the server). */
    static String slotFor(TestDatabase db) {
        return "s_" + db.name();
    }

    /** A relay builder for {@code db}: its own slot, short lease and heartbeat, quick offset flushes. */
    static CdcRelay.Builder relay(TestDatabase db, TestKafka kafka) {
        return CdcRelay.builder()
                .jdbcUrl(db.jdbcUrl())
                .user(db.user())
                .password(Secret.of(db.password()))
                .slotName(slotFor(db))
                .bootstrapServers(kafka.bootstrapServers())
                .leaseDuration(Duration.ofSeconds(10))
                .heartbeatInterval(Duration.ofSeconds(1))
                .offsetFlushInterval(Duration.ofMillis(200))
                .shutdownTimeout(Duration.ofSeconds(30));
    }

    /** The lease of the test's slot, which must exist: its holder, fencing token, acquired and expiry times. */
    static RelayLeases.Lease lease(TestDatabase db) throws SQLException {
        return RelayLeases.held(db, RelayLeases.cdcRelayKey(slotFor(db)));
    }

    /** The instance holding (or last holding) the lease of the test's slot; empty when none ever did. */
    static String leaseHolder(TestDatabase db) throws SQLException {
        return RelayLeases.find(db, RelayLeases.cdcRelayKey(slotFor(db))).map(RelayLeases.Lease::holder).orElse("");
    }

    /**
     * The pid of the walsender streaming {@code slot}, 0 while none does or the slot does not exist: what the tests
     * that wait for, end or tell apart walsenders look at. The name is bound as a parameter, not spliced into the SQL.
     */
    static int slotActivePid(TestDatabase db, String slot) throws SQLException {
        return (int) db.count("SELECT coalesce(max(active_pid), 0) FROM pg_replication_slots WHERE slot_name = ?", slot);
    }

    /** Whether a walsender streams {@code slot} (PostgreSQL's {@code active}: its {@code active_pid} is set). */
    static boolean slotActive(TestDatabase db, String slot) throws SQLException {
        return slotActivePid(db, slot) > 0;
    }

    /** Drops the test's slot (after the relay closed) so the database can be dropped. */
    static void dropSlot(TestDatabase db) {
        db.dropReplicationSlot(slotFor(db));
    }

    /** A consumer reading {@code topic} from the beginning by assignment (no group join). */
    static KafkaConsumer<byte[], byte[]> consumer(TestKafka kafka, String topic) {
        Map<String, Object> config = kafka.consumerConfig(null);
        config.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 10_000);
        config.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 50);
        KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(config);
        List<TopicPartition> partitions = new ArrayList<>();
        consumer.partitionsFor(topic, Duration.ofSeconds(30)).forEach(p -> partitions.add(new TopicPartition(topic, p.partition())));
        consumer.assign(partitions);
        consumer.seekToBeginning(partitions);
        return consumer;
    }

    /** Polls until {@code count} records of {@code topic} arrived (or the timeout passed) and returns them. */
    static List<ConsumerRecord<byte[], byte[]>> await(TestKafka kafka, String topic, int count, Duration timeout) {
        List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = consumer(kafka, topic)) {
            long deadline = System.nanoTime() + timeout.toNanos();
            while (out.size() < count && System.nanoTime() < deadline) {
                consumer.poll(Duration.ofMillis(200)).forEach(out::add);
            }
        }
        return out;
    }

    /**
     * Feeds every record of {@code topic} into {@code history} as an idempotent consumer would see it:
     * partition by partition in offset order (one aggregate lives in one partition), applying an event the
     * first time its id shows up. Returns the number of records read.
     */
    static int consume(TestKafka kafka, String topic, History history) {
        List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>(kafka.readAll(List.of(topic)));
        records.sort(java.util.Comparator.<ConsumerRecord<byte[], byte[]>>comparingInt(ConsumerRecord::partition)
                .thenComparingLong(ConsumerRecord::offset));
        java.util.Set<UUID> seen = new java.util.HashSet<>();
        for (ConsumerRecord<byte[], byte[]> r : records) {
            UUID id = UUID.fromString(header(r, "id"));
            history.delivered(id);
            if (seen.add(id)) {
                history.applied(id, new String(r.key(), java.nio.charset.StandardCharsets.UTF_8));
            }
        }
        return records.size();
    }

    /** How many different event ids {@code topic} holds. */
    static long distinctIds(TestKafka kafka, String topic) {
        return kafka.readAll(List.of(topic)).stream().map(r -> header(r, "id")).distinct().count();
    }

    static String header(ConsumerRecord<byte[], byte[]> record, String name) {
        var h = record.headers().lastHeader(name);
        return h == null ? null : new String(h.value(), java.nio.charset.StandardCharsets.UTF_8);
    }

    /**
     * Waits until no CDC relay's Debezium engine is left running in this JVM, so that a test reading the whole JVM's
     * log sees its own relay only: a relay closed while its database is cut off (CutOffCloseTest) leaves its engine
     * behind by design, and that engine logs ERRORs when it next reaches the closed pool, seconds later, in whichever
     * test runs then (it once failed CleanStopTest in CI that way, and HandoffTest in a module run). CutOffCloseTest
     * waits for its own engine at its end; the tests that read every ERROR of the JVM wait here too.
     */
    static void awaitNoEngineLeftBehind(Duration timeout) {
        org.awaitility.Awaitility.await("no Debezium engine of an earlier test still running").atMost(timeout)
                .pollInterval(Duration.ofMillis(100))
                .until(CdcTestSupport::enginesRunning, List::isEmpty);
    }

    /** The live threads of CDC relays' Debezium engines in this JVM, by name. */
    static List<String> enginesRunning() {
        return Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive).map(Thread::getName)
                .filter(n -> n.startsWith("outboxkit-cdc-engine-") || n.startsWith("debezium-postgresconnector-"))
                .sorted().toList();
    }
}
