package dev.outboxkit.benchmarks.scenarios;

import dev.outboxkit.benchmarks.BenchContext;
import dev.outboxkit.benchmarks.Measurements;
import dev.outboxkit.benchmarks.Metric;
import dev.outboxkit.benchmarks.MetricCatalog;
import dev.outboxkit.benchmarks.Scenario;
import dev.outboxkit.benchmarks.load.Await;
import dev.outboxkit.benchmarks.load.SyntheticEvents;
import dev.outboxkit.benchmarks.load.TransferWorkload;
import dev.outboxkit.consumer.DedupeConsumer;
import dev.outboxkit.consumer.InboxEvent;
import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.relay.KafkaRecords;
import dev.outboxkit.relay.ProducerSafety;
import dev.outboxkit.testkit.TestDatabase;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.RecordMetadata;

/**
 * {@code consumer_eps} and {@code consumer_plain_eps}: the same records (relay format, the
 * backlog's size, {@value #PARTITIONS} partitions), consumed from the beginning by a fresh group,
 * once by {@link DedupeConsumer} with a {@code BatchHandler} and once by the loop a user would write
 * without the inbox (poll, one transaction, commit, {@code commitSync}). Both apply the same handler:
 * one JDBC batch of one-row updates ({@code UPDATE bench_account SET balance = balance + 1 WHERE id = ?})
 * per poll batch. The clock runs from the first batch handed to the handler until every event is
 * committed in the database. A smaller warm-up topic is consumed by both first, not counted. The
 * runner divides the two ({@code consumer_dedupe_ratio}).
 */
public final class ConsumerThroughput implements Scenario {

    static final int PARTITIONS = 4;
    static final int MAX_POLL_RECORDS = 1000;
    private static final String UPDATE = "UPDATE " + TransferWorkload.ACCOUNT_TABLE + " SET balance = balance + 1 WHERE id = ?";

    @Override
    public String name() {
        return "consumer";
    }

    @Override
    public List<Metric> metrics() {
        return List.of(MetricCatalog.CONSUMER_EPS, MetricCatalog.CONSUMER_PLAIN_EPS);
    }

    @Override
    public boolean payloadSensitive() {
        return true;
    }

    @Override
    public Measurements run(BenchContext context) throws Exception {
        TestDatabase db = context.newDatabase();
        TransferWorkload.createAccounts(db);
        int events = context.sizes().backlogEvents();
        int warmupEvents = Math.max(500, events / 10);
        String warmupTopic = produce(context, "consumer-warmup", warmupEvents);
        String topic = produce(context, "consumer", events);
        plain(context, db, warmupTopic, warmupEvents);
        withInbox(context, db, warmupTopic, warmupEvents);
        double plain = plain(context, db, topic, events);
        double inbox = withInbox(context, db, topic, events);
        return new Measurements().put(MetricCatalog.CONSUMER_EPS.key(), inbox)
                .put(MetricCatalog.CONSUMER_PLAIN_EPS.key(), plain);
    }

    private static String produce(BenchContext context, String prefix, int count) throws Exception {
        String topic = context.uniqueTopic(prefix);
        context.kafka().createTopic(topic, PARTITIONS);
        KafkaRecords mapping = new KafkaRecords(TopicRoute.of(topic));
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(
                ProducerSafety.producerConfig(context.kafka().bootstrapServers(), Map.of()))) {
            List<Future<RecordMetadata>> acks = new ArrayList<>(count);
            for (int n = 0; n < count; n++) {
                acks.add(producer.send(mapping.toRecord(SyntheticEvents.event(n, context.payloadBytes()))));
            }
            for (Future<RecordMetadata> ack : acks) {
                ack.get(2, TimeUnit.MINUTES);
            }
        }
        return topic;
    }

    private static int account(String aggregateId) {
        return Integer.parseInt(aggregateId.substring(aggregateId.indexOf('-') + 1));
    }

    /** The handler both sides run: one batch of one-row updates. */
    private static void apply(Connection c, List<String> aggregateIds) throws SQLException {
        try (PreparedStatement update = c.prepareStatement(UPDATE)) {
            for (String aggregateId : aggregateIds) {
                update.setInt(1, account(aggregateId));
                update.addBatch();
            }
            update.executeBatch();
        }
    }

    private static double plain(BenchContext context, TestDatabase db, String topic, int events) throws Exception {
        Map<String, Object> config = context.kafka().consumerConfig(topic + "-plain");
        config.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, MAX_POLL_RECORDS);
        config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        long applied = 0;
        long start = 0;
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(10);
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(config); Connection c = db.connect()) {
            c.setAutoCommit(false);
            consumer.subscribe(List.of(topic));
            while (applied < events) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("plain consumer applied " + applied + " of " + events + " in 10 minutes");
                }
                ConsumerRecords<byte[], byte[]> batch = consumer.poll(Duration.ofMillis(200));
                if (batch.isEmpty()) {
                    continue;
                }
                if (start == 0) {
                    start = System.nanoTime();
                }
                List<String> ids = new ArrayList<>(batch.count());
                for (ConsumerRecord<byte[], byte[]> r : batch) {
                    ids.add(new String(r.key(), StandardCharsets.UTF_8));
                }
                apply(c, ids);
                c.commit();
                consumer.commitSync();
                applied += batch.count();
            }
        }
        return events / ((System.nanoTime() - start) / 1e9);
    }

    private static double withInbox(BenchContext context, TestDatabase db, String topic, int events) throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        AtomicLong start = new AtomicLong();
        DedupeConsumer consumer = DedupeConsumer.builder()
                .bootstrapServers(context.kafka().bootstrapServers())
                .kafkaProperties(Map.of(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, MAX_POLL_RECORDS))
                .group(topic + "-inbox")
                .topics(List.of(topic))
                .dataSource(db.dataSource())
                .meterRegistry(registry)
                .batchHandler((c, batch) -> {
                    start.compareAndSet(0, System.nanoTime());
                    List<String> ids = new ArrayList<>(batch.size());
                    for (InboxEvent e : batch) {
                        ids.add(e.aggregateId());
                    }
                    apply(c, ids);
                })
                .build();
        long end;
        consumer.start();
        try {
            Await.until("inbox consumer applying " + events + " events", () -> applied(registry) >= events,
                    Duration.ofMinutes(10), 2, () -> consumer.health().live() ? null : consumer.health().detail());
            end = System.nanoTime();
        } finally {
            consumer.close();
        }
        return events / ((end - start.get()) / 1e9);
    }

    private static double applied(SimpleMeterRegistry registry) {
        return registry.find("outbox.consumer.applied").counters().stream().mapToDouble(Counter::count).sum();
    }
}
