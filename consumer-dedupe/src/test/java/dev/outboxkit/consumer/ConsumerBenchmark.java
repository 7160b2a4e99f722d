package dev.outboxkit.consumer;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.outboxkit.core.EventIds;
import dev.outboxkit.core.OutboxEvent;
import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.relay.KafkaRecords;
import dev.outboxkit.testkit.OutboxTestkit;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import dev.outboxkit.testkit.TestPostgres;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.RecordMetadata;

/**
 * Throughput of the inbox against the same one-row-update handler without it, in one run, on a
 * durable PostgreSQL 17 (fsync on) and an in-JVM Kafka broker. Not a test; run it with
 *
 * <pre>
 * ./mvnw -B -o -q -pl consumer-dedupe -am test-compile dependency:build-classpath \
 *     -Dmdep.outputFile=target/bench.classpath -Dmdep.includeScope=test
 * java -cp consumer-dedupe/target/test-classes:consumer-dedupe/target/classes:$(cat consumer-dedupe/target/bench.classpath) \
 *     dev.outboxkit.consumer.ConsumerBenchmark [records] [rounds] [maxPollRecords]
 * </pre>
 *
 * Both sides consume the same pre-produced records (relay format, ~200-byte payloads, 10,000
 * accounts) from the beginning with a fresh group; per poll batch both run one transaction with
 * one JDBC batch of {@code UPDATE bench_account SET balance = balance + ? WHERE id = ?}, commit,
 * then commit the offsets. The baseline is the minimal correct loop a user would write without
 * outboxkit (poll, one transaction, commit, commitSync, on one thread); the inbox side is
 * {@link DedupeConsumer} with a {@link BatchHandler} (so it also pays for decoding headers, the id
 * insert, metrics, and it overlaps Kafka work with database work on its two threads). Time runs
 * from the first handler call to the database commit of the last record. A warm-up run of each
 * is not counted; rounds alternate which side goes first; the result is the median of the
 * per-round ratios.
 */
public final class ConsumerBenchmark {

    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final int ACCOUNTS = 10_000;
    private static final int PARTITIONS = 4;
    private static final String UPDATE = "UPDATE bench_account SET balance = balance + ? WHERE id = ?";
    /** Events applied by all runs (warm-ups included), and by the inbox runs: the final check's expectation. */
    private static final AtomicLong APPLIED = new AtomicLong();
    private static final AtomicLong APPLIED_WITH_INBOX = new AtomicLong();

    private ConsumerBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        int records = args.length > 0 ? Integer.parseInt(args[0]) : 300_000;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 2;
        int maxPoll = args.length > 2 ? Integer.parseInt(args[2]) : 1000;
        try (TestPostgres pg = OutboxTestkit.startEmbeddedPostgres(0, true);
             TestKafka kafka = OutboxTestkit.startKafka("embedded")) {
            TestDatabase db = pg.newDatabase();
            try (Connection c = db.connect(); Statement s = c.createStatement()) {
                s.execute("CREATE TABLE bench_account (id text PRIMARY KEY, balance bigint NOT NULL)");
                s.execute("INSERT INTO bench_account SELECT 'acct-' || g, 0 FROM generate_series(0, " + (ACCOUNTS - 1) + ") g");
            }
            String topic = "bench-" + System.currentTimeMillis();
            kafka.createTopic(topic, PARTITIONS);
            long produceStart = System.nanoTime();
            produce(kafka, topic, records);
            System.out.printf(Locale.ROOT, "produced %,d records in %.1f s; durable PostgreSQL (%s), in-JVM Kafka, "
                    + "max.poll.records=%d, %d cores%n", records, (System.nanoTime() - produceStart) / 1e9, fsync(db), maxPoll,
                    Runtime.getRuntime().availableProcessors());

            // warm-up (JIT, caches), not counted
            baseline(kafka, db.dataSource(), topic, Math.min(records, 50_000), maxPoll, "warm-base");
            withInbox(kafka, db.dataSource(), topic, Math.min(records, 50_000), maxPoll, "warm-inbox", null);

            List<Double> base = new ArrayList<>();
            List<Double> inbox = new ArrayList<>();
            List<Double> ratios = new ArrayList<>();
            for (int round = 1; round <= rounds; round++) {
                // alternate who goes first, so drift on a shared machine hits both sides alike
                boolean baseFirst = round % 2 == 1;
                double b = 0;
                double i;
                String load = loadAverage();
                if (baseFirst) {
                    b = baseline(kafka, db.dataSource(), topic, records, maxPoll, "base-" + round);
                }
                SimpleMeterRegistry registry = new SimpleMeterRegistry();
                i = withInbox(kafka, db.dataSource(), topic, records, maxPoll, "inbox-" + round, registry);
                if (!baseFirst) {
                    b = baseline(kafka, db.dataSource(), topic, records, maxPoll, "base-" + round);
                }
                base.add(b);
                inbox.add(i);
                ratios.add(i / b);
                double handlerS = registry.get("outbox.consumer.handler").timer().totalTime(TimeUnit.MILLISECONDS) / 1000;
                double inboxS = registry.get("outbox.consumer.inbox").timer().totalTime(TimeUnit.MILLISECONDS) / 1000;
                System.out.printf(Locale.ROOT, "round %d (load %s): baseline %,.0f events/s, inbox %,.0f events/s, ratio %.2f;"
                        + " inbox run: handler %.1f s, id insert %.1f s%n", round, load, b, i, i / b, handlerS, inboxS);
            }
            System.out.printf(Locale.ROOT, "RESULT median: baseline %,.0f/s, inbox %,.0f/s, ratio %.2f | best: baseline "
                    + "%,.0f/s, inbox %,.0f/s%n", median(base), median(inbox), median(ratios),
                    base.stream().mapToDouble(Double::doubleValue).max().orElseThrow(),
                    inbox.stream().mapToDouble(Double::doubleValue).max().orElseThrow());
            long processed = db.count("SELECT count(*) FROM processed_event");
            long total = db.count("SELECT sum(balance) FROM bench_account");
            System.out.printf(Locale.ROOT, "check: processed_event rows %,d (expected %,d), balance total %,d (expected %,d)%n",
                    processed, APPLIED_WITH_INBOX.get(), total, APPLIED.get() * 7);
            pg.drop(db);
        }
        System.exit(0);
    }

    private static double median(List<Double> values) {
        List<Double> sorted = new ArrayList<>(values);
        sorted.sort(null);
        int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    }

    private static String loadAverage() {
        try {
            return java.nio.file.Files.readString(java.nio.file.Path.of("/proc/loadavg")).split(" ")[0];
        } catch (Exception e) {
            return "?";
        }
    }

    private static String fsync(TestDatabase db) throws Exception {
        try (Connection c = db.connect(); Statement s = c.createStatement();
             var rs = s.executeQuery("SELECT current_setting('fsync') || ', synchronous_commit=' || current_setting('synchronous_commit')")) {
            rs.next();
            return "fsync=" + rs.getString(1);
        }
    }

    private static void produce(TestKafka kafka, String topic, int count) throws Exception {
        Map<String, Object> p = Projection.producerConfig(kafka);
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, "262144");
        p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
        KafkaRecords mapping = new KafkaRecords(TopicRoute.defaultRoute());
        String filler = "x".repeat(160);
        Instant now = Instant.now().truncatedTo(ChronoUnit.MICROS);
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
            List<Future<RecordMetadata>> acks = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                String payload = "{\"amount\":7,\"note\":\"" + filler + "\",\"n\":" + i + "}";
                OutboxEvent e = new OutboxEvent(EventIds.next(), "account", "acct-" + (i % ACCOUNTS), "deposited", topic,
                        payload, Map.of(), now);
                acks.add(producer.send(mapping.toRecord(e)));
            }
            for (Future<RecordMetadata> ack : acks) {
                ack.get(120, TimeUnit.SECONDS);
            }
        }
    }

    /** A minimal hand-written loop: the same handler, no inbox. */
    private static double baseline(TestKafka kafka, DataSource ds, String topic, int records, int maxPoll, String group)
            throws Exception {
        Map<String, Object> config = kafka.consumerConfig(group);
        config.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, maxPoll);
        config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        long applied = 0;
        long start = 0;
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(config);
             Connection c = ds.getConnection()) {
            c.setAutoCommit(false);
            consumer.subscribe(List.of(topic));
            while (applied < records) {
                ConsumerRecords<byte[], byte[]> batch = consumer.poll(Duration.ofMillis(500));
                if (batch.isEmpty()) {
                    continue;
                }
                if (start == 0) {
                    start = System.nanoTime();
                }
                try (PreparedStatement update = c.prepareStatement(UPDATE)) {
                    for (ConsumerRecord<byte[], byte[]> r : batch) {
                        update.setLong(1, MAPPER.readTree(r.value()).get("amount").asLong());
                        update.setString(2, new String(r.key(), StandardCharsets.UTF_8));
                        update.addBatch();
                    }
                    update.executeBatch();
                }
                c.commit();
                applied += batch.count();
                APPLIED.addAndGet(batch.count());
                consumer.commitSync();
            }
        }
        return records / ((System.nanoTime() - start) / 1e9);
    }

    private static double withInbox(TestKafka kafka, DataSource ds, String topic, int records, int maxPoll, String group,
                                    SimpleMeterRegistry registry) throws Exception {
        AtomicLong start = new AtomicLong();
        AtomicLong handled = new AtomicLong();
        AtomicLong end = new AtomicLong();
        AtomicLong countedSoFar = new AtomicLong();
        CountDownLatch finished = new CountDownLatch(1);
        DedupeConsumer consumer = DedupeConsumer.builder()
                .bootstrapServers(kafka.bootstrapServers())
                .kafkaProperties(Map.of(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, maxPoll))
                .group(group)
                .topics(List.of(topic))
                .dataSource(ds)
                .meterRegistry(registry != null ? registry : new SimpleMeterRegistry())
                .batchHandler((c, events) -> {
                    start.compareAndSet(0, System.nanoTime());
                    try (PreparedStatement update = c.prepareStatement(UPDATE)) {
                        for (InboxEvent e : events) {
                            update.setLong(1, e.payloadJson().get("amount").asLong());
                            update.setString(2, e.aggregateId());
                            update.addBatch();
                        }
                        update.executeBatch();
                    }
                    handled.addAndGet(events.size());
                })
                .afterDatabaseCommit(() -> {
                    long now = handled.get();
                    long counted = countedSoFar.getAndSet(now);
                    APPLIED.addAndGet(now - counted);
                    APPLIED_WITH_INBOX.addAndGet(now - counted);
                    if (now >= records && end.compareAndSet(0, System.nanoTime())) {
                        finished.countDown();
                    }
                })
                .build();
        consumer.start();
        try {
            if (!finished.await(30, TimeUnit.MINUTES)) {
                throw new IllegalStateException("inbox run did not finish: " + consumer.health());
            }
        } finally {
            consumer.close();
        }
        return records / ((end.get() - start.get()) / 1e9);
    }
}
