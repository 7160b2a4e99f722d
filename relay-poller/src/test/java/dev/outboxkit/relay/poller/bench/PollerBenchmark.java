package dev.outboxkit.relay.poller.bench;

import dev.outboxkit.core.HeaderNames;
import dev.outboxkit.core.OutboxEvent;
import dev.outboxkit.core.Secret;
import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.relay.KafkaRecords;
import dev.outboxkit.relay.ProducerSafety;
import dev.outboxkit.relay.poller.PollingRelay;
import dev.outboxkit.testkit.EmbeddedKafka;
import dev.outboxkit.testkit.OutboxTestkit;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import dev.outboxkit.testkit.TestPostgres;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.distribution.DistributionStatisticConfig;
import io.micrometer.core.instrument.distribution.ValueAtPercentile;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.Histogram;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;

/**
 * The polling relay's numbers, side by side in one run on one machine:
 * <ol>
 *   <li>ceiling 1: the PostgreSQL claim/delete loop alone ({@code DELETE … WHERE seq IN (SELECT …
 *       FOR UPDATE SKIP LOCKED LIMIT n) RETURNING …}, rows read into Java, commit), no Kafka;</li>
 *   <li>ceiling 2: the Kafka producer alone, sending the same records (built by KafkaRecords)
 *       with the relay's producer settings, waiting for every ack;</li>
 *   <li>the relay draining the same backlog (default settings);</li>
 *   <li>latency created_at → ack (the relay's {@code outbox.relay.commit_to_ack} timer) and
 *       created_at → consumer, at two open-loop offered rates.</li>
 * </ol>
 * Durable embedded PostgreSQL 17 (fsync on) and a fresh single-node Kafka in this JVM.
 * Not a test: run the main class with the test class path. Arguments: {@code rows} (500000),
 * {@code payloadBytes} (200), {@code latencySeconds} (20), {@code rates} (200,5000).
 */
public final class PollerBenchmark {

    private static final int AGGREGATES = 10_000;
    private static CpuMeter cpu;
    private static String lastCpu = "";

    private PollerBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        int rows = args.length > 0 ? Integer.parseInt(args[0]) : 500_000;
        int payloadBytes = args.length > 1 ? Integer.parseInt(args[1]) : 200;
        int latencySeconds = args.length > 2 ? Integer.parseInt(args[2]) : 20;
        String rates = args.length > 3 ? args[3] : "200,5000";
        String only = System.getProperty("bench.only", "all");
        List<String> report = new ArrayList<>();
        report.add("producer overrides: " + (overrides().isEmpty() ? "none (relay defaults)" : overrides()));
        report.add(String.format("machine: %d cores, load average at start %.2f; rows %,d, payload %d bytes, %,d aggregates",
                Runtime.getRuntime().availableProcessors(), load(), rows, payloadBytes, AGGREGATES));
        try (TestPostgres pg = OutboxTestkit.startEmbeddedPostgres(0, true); TestKafka kafka = new EmbeddedKafka(1)) {
            TestDatabase db = pg.newDatabase();
            try (Connection c = db.connect(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT pg_backend_pid()")) {
                rs.next();
                cpu = new CpuMeter(rs.getLong(1));
            }
            String topic = "bench.outbox";
            kafka.createTopic(topic, 8);
            double pgCeiling = 0;
            double kafkaCeiling = 0;
            if (only.equals("all") || only.contains("pg")) {
                fill(db, rows, payloadBytes);
                pgCeiling = postgresCeiling(db, Integer.getInteger("bench.batch", 10_000), rows);
                report.add(String.format("ceiling: PostgreSQL claim/delete loop alone      %,10.0f rows/s   (load %.2f)", pgCeiling, load()));
                report.add("         " + lastCpu);
            }
            if (only.equals("all") || only.contains("kafka")) {
                fill(db, rows, payloadBytes);
                kafkaCeiling = kafkaCeiling(db, kafka, topic);
                report.add(String.format("ceiling: Kafka producer alone (same records)     %,10.0f records/s (load %.2f)", kafkaCeiling, load()));
                report.add("         " + lastCpu);
            }
            if (only.equals("all") || only.contains("drain")) {
                fill(db, rows, payloadBytes);
                double drain = drain(db, kafka, topic, rows, overrides());
                report.add(String.format("relay: backlog drain                             %,10.0f events/s  (load %.2f)%s", drain, load(),
                        pgCeiling > 0 ? String.format("  = %.2f x the PostgreSQL ceiling", drain / pgCeiling) : ""));
                report.add("         " + lastCpu);
            }
            if (only.equals("all") || only.contains("latency")) {
                for (String r : rates.split(",")) {
                    int rate = Integer.parseInt(r.trim());
                    report.add(latency(db, kafka, "bench.latency." + rate, rate, latencySeconds));
                }
            }
            System.out.println();
            System.out.println("== relay-poller benchmark (durable PostgreSQL 17, in-JVM Kafka, one run) ==");
            report.forEach(System.out::println);
            pg.drop(db);
        }
        System.exit(0);
    }

    /** Producer overrides for every phase, from -Dbench.producer=key=value,key=value (default none). */
    static Map<String, String> overrides() {
        Map<String, String> out = new LinkedHashMap<>();
        String spec = System.getProperty("bench.producer", "");
        for (String kv : spec.split(",")) {
            if (!kv.isBlank()) {
                String[] p = kv.split("=", 2);
                out.put(p[0].trim(), p[1].trim());
            }
        }
        return out;
    }

    static double load() {
        return ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
    }

    /** Fills outbox_event with {@code rows} rows (server-side), then vacuums so every phase starts alike. */
    static void fill(TestDatabase db, int rows, int payloadBytes) throws Exception {
        try (Connection c = db.connect(); Statement s = c.createStatement()) {
            s.execute("TRUNCATE outbox_event");
            // {"n": 123, "pad": "xxx…"} padded to about payloadBytes as PostgreSQL renders it.
            int pad = Math.max(1, payloadBytes - 30);
            for (int start = 0; start < rows; start += 100_000) {
                int end = Math.min(rows, start + 100_000);
                s.execute("INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload) "
                        + "SELECT gen_random_uuid(), 'order', 'order-' || (g % " + AGGREGATES + "), 'created', "
                        + "jsonb_build_object('n', g, 'pad', repeat('x', " + pad + ")) FROM generate_series(" + start + ", "
                        + (end - 1) + ") g");
            }
            s.execute("VACUUM ANALYZE outbox_event");
            s.execute("CHECKPOINT");
        }
    }

    static double postgresCeiling(TestDatabase db, int batch, int rows) throws Exception {
        String sql = "DELETE FROM outbox_event WHERE seq IN (SELECT seq FROM outbox_event ORDER BY seq LIMIT ? "
                + "FOR UPDATE SKIP LOCKED) RETURNING seq, id, aggregate_type, aggregate_id, event_type, topic, payload, "
                + "headers, created_at, attempts";
        Map<String, Long> cpu0 = cpu.snapshot();
        long start = System.nanoTime();
        long n = 0;
        try (Connection c = db.connect()) {
            c.setAutoCommit(false);
            try (PreparedStatement ps = c.prepareStatement(sql)) {
                while (true) {
                    ps.setInt(1, batch);
                    int got = 0;
                    try (ResultSet rs = ps.executeQuery()) {
                        while (rs.next()) {
                            OutboxEvent.fromRow(rs.getObject(2, UUID.class), rs.getString(3), rs.getString(4),
                                    rs.getString(5), rs.getString(6), rs.getString(7), rs.getString(8),
                                    rs.getObject(9, OffsetDateTime.class).toInstant());
                            got++;
                        }
                    }
                    c.commit();
                    n += got;
                    if (got == 0) {
                        break;
                    }
                }
            }
            // Before the connection closes: a backend that has exited but is not yet reaped is counted nowhere.
            lastCpu = CpuMeter.perEvent(cpu0, cpu.snapshot(), n);
        }
        double secs = (System.nanoTime() - start) / 1e9;
        if (n != rows) {
            throw new IllegalStateException("PostgreSQL ceiling loop deleted " + n + " rows, expected " + rows);
        }
        return n / secs;
    }

    static double kafkaCeiling(TestDatabase db, TestKafka kafka, String topic) throws Exception {
        List<OutboxEvent> events = new ArrayList<>();
        try (Connection c = db.connect(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT id, aggregate_type, aggregate_id, event_type, topic, payload, headers, "
                     + "created_at FROM outbox_event ORDER BY seq")) {
            while (rs.next()) {
                events.add(OutboxEvent.fromRow(rs.getObject(1, UUID.class), rs.getString(2), rs.getString(3),
                        rs.getString(4), rs.getString(5), rs.getString(6), rs.getString(7),
                        rs.getObject(8, OffsetDateTime.class).toInstant()));
            }
        }
        KafkaRecords mapping = new KafkaRecords(TopicRoute.of(topic));
        // Exactly the relay's producer settings (its defaults plus the benchmark's overrides).
        Map<String, Object> config = new HashMap<>(PollingRelay.builder().dataSource(new org.postgresql.ds.PGSimpleDataSource())
                .bootstrapServers(kafka.bootstrapServers()).producerOverrides(overrides()).build().producerConfig());
        double best = 0;
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(config)) {
            for (int round = 0; round < 2; round++) { // the first round warms the producer and the broker up
                CountDownLatch done = new CountDownLatch(events.size());
                AtomicLong failed = new AtomicLong();
                Map<String, Long> cpu0 = cpu.snapshot();
                long start = System.nanoTime();
                for (OutboxEvent e : events) {
                    ProducerRecord<byte[], byte[]> r = mapping.toRecord(e);
                    producer.send(r, (m, ex) -> {
                        if (ex != null) {
                            failed.incrementAndGet();
                        }
                        done.countDown();
                    });
                }
                done.await();
                double rate = events.size() / ((System.nanoTime() - start) / 1e9);
                lastCpu = CpuMeter.perEvent(cpu0, cpu.snapshot(), events.size());
                if (failed.get() > 0) {
                    throw new IllegalStateException(failed.get() + " records failed in the Kafka ceiling run");
                }
                best = round == 0 ? 0 : rate;
            }
        }
        return best;
    }

    static double drain(TestDatabase db, TestKafka kafka, String topic, int rows, Map<String, ?> overrides) throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        int instances = Integer.getInteger("bench.instances", 1);
        List<PollingRelay> relays = new ArrayList<>();
        for (int i = 0; i < instances; i++) {
            relays.add(PollingRelay.builder()
                    .jdbcUrl(db.jdbcUrl()).user(db.user()).password(Secret.of(db.password()))
                    .bootstrapServers(kafka.bootstrapServers())
                    .route(TopicRoute.of(topic))
                    .producerOverrides(overrides)
                    .meterRegistry(registry)
                    .instanceId("bench-" + i)
                    .pipelineClaims(Boolean.getBoolean("bench.pipeline"))
                    .batchSize(Integer.getInteger("bench.batch", 10_000))
                    .build());
        }
        Map<String, Long> cpu0 = cpu.snapshot();
        long start = System.nanoTime();
        for (PollingRelay relay : relays) {
            relay.start();
        }
        // Watch the relays' own counter: querying the table while it drains would cost PostgreSQL a scan over
        // the dead rows at its head every time.
        var published = registry.get("outbox.relay.published").counter();
        while (published.count() < rows) {
            TimeUnit.MILLISECONDS.sleep(5);
        }
        double secs = (System.nanoTime() - start) / 1e9;
        lastCpu = CpuMeter.perEvent(cpu0, cpu.snapshot(), rows);
        for (PollingRelay relay : relays) {
            relay.close();
        }
        try (Connection c = db.connect(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT count(*) FROM outbox_event")) {
            rs.next();
            if (rs.getLong(1) != 0) {
                throw new IllegalStateException(rs.getLong(1) + " rows left after the drain");
            }
        }
        return rows / secs;
    }

    /** Open-loop writers at {@code rate} events/s (one event per transaction below 1000/s, else per 1 ms tick). */
    static String latency(TestDatabase db, TestKafka kafka, String topic, int rate, int seconds) throws Exception {
        kafka.createTopic(topic, 8);
        try (Connection c = db.connect(); Statement s = c.createStatement()) {
            s.execute("TRUNCATE outbox_event");
        }
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        registry.config().meterFilter(new MeterFilter() {
            @Override
            public DistributionStatisticConfig configure(Meter.Id id, DistributionStatisticConfig config) {
                return DistributionStatisticConfig.builder().percentiles(0.5, 0.99, 0.999).percentilePrecision(3)
                        .expiry(Duration.ofHours(1)).bufferLength(1).build().merge(config);
            }
        });
        Histogram endToEnd = new Histogram(TimeUnit.SECONDS.toMicros(60), 3);
        Histogram commits = new Histogram(TimeUnit.SECONDS.toMicros(60), 3);
        AtomicBoolean measuring = new AtomicBoolean(false);
        AtomicBoolean stop = new AtomicBoolean(false);
        Thread consumer = new Thread(() -> consume(kafka, topic, endToEnd, measuring, stop), "bench-consumer");
        consumer.start();
        PollingRelay relay = PollingRelay.builder()
                .jdbcUrl(db.jdbcUrl()).user(db.user()).password(Secret.of(db.password()))
                .bootstrapServers(kafka.bootstrapServers())
                .route(TopicRoute.of(topic))
                .meterRegistry(registry)
                .producerOverrides(overrides())
                .build();
        relay.start();
        int writers = rate >= 1000 ? 4 : 1;
        List<Thread> threads = new ArrayList<>();
        AtomicLong written = new AtomicLong();
        // The JIT is warm from the drain phase; the histograms cover the whole phase.
        measuring.set(true);
        long phaseStart = System.nanoTime();
        for (int w = 0; w < writers; w++) {
            int writer = w;
            Thread t = new Thread(() -> write(db, rate / (double) writers, writer, phaseStart, TimeUnit.SECONDS.toNanos(seconds),
                    written, stop, commits), "bench-writer-" + w);
            threads.add(t);
            t.start();
        }
        for (Thread t : threads) {
            t.join();
        }
        TimeUnit.SECONDS.sleep(2); // let the last events arrive
        measuring.set(false);
        stop.set(true);
        consumer.join();
        Timer timer = registry.find("outbox.relay.commit_to_ack").timer();
        var batches = registry.find("outbox.relay.batch.size").summary();
        String batching = batches == null ? "" : String.format(" | %,d batches of %.1f rows on average (max %.0f)",
                batches.count(), batches.mean(), batches.max());
        relay.close();
        Map<Double, Double> p = new LinkedHashMap<>();
        long count = 0;
        if (timer != null) {
            for (ValueAtPercentile v : timer.takeSnapshot().percentileValues()) {
                p.put(v.percentile(), v.value(TimeUnit.MILLISECONDS));
            }
            count = timer.count();
        }
        return String.format("latency at %,5d events/s offered (%d s, %,d acked): created_at->ack p50 %.2f ms p99 %.2f ms "
                        + "p99.9 %.2f ms | created_at->consumer p50 %.2f ms p99 %.2f ms | writer INSERT+COMMIT p50 %.2f ms "
                        + "p99 %.2f ms%s (load %.2f)",
                rate, seconds, count, p.getOrDefault(0.5, Double.NaN), p.getOrDefault(0.99, Double.NaN),
                p.getOrDefault(0.999, Double.NaN), endToEnd.getValueAtPercentile(50) / 1000.0,
                endToEnd.getValueAtPercentile(99) / 1000.0, commits.getValueAtPercentile(50) / 1000.0,
                commits.getValueAtPercentile(99) / 1000.0, batching, load());
    }

    private static void write(TestDatabase db, double rate, int writer, long phaseStart, long durationNanos,
                              AtomicLong written, AtomicBoolean stop, Histogram commits) {
        String insert = "INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload) "
                + "VALUES (?, 'order', ?, 'created', ?::jsonb)";
        String pad = "x".repeat(170);
        try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement(insert)) {
            c.setAutoCommit(false);
            long n = 0;
            double intervalNanos = 1e9 / rate;
            while (!stop.get()) {
                long due = phaseStart + (long) (n * intervalNanos);
                if (due - phaseStart > durationNanos) {
                    break;
                }
                long now = System.nanoTime();
                if (due > now) {
                    TimeUnit.NANOSECONDS.sleep(due - now);
                }
                // Every event whose time has come goes into this transaction (open loop: a slow commit does not
                // lower the offered rate, it makes the next transaction carry more).
                int k = 0;
                long nowAfter = System.nanoTime();
                long txStart = nowAfter;
                while (phaseStart + (long) (n * intervalNanos) <= nowAfter && k < 100) {
                    ps.setObject(1, UUID.randomUUID());
                    ps.setString(2, "order-" + writer + "-" + (n % 1000));
                    ps.setString(3, "{\"n\": " + n + ", \"pad\": \"" + pad + "\"}");
                    ps.addBatch();
                    n++;
                    k++;
                }
                ps.executeBatch();
                c.commit();
                synchronized (commits) {
                    commits.recordValue(Math.min((System.nanoTime() - txStart) / 1000, commits.getHighestTrackableValue()));
                }
                written.addAndGet(k);
            }
        } catch (Exception e) {
            throw new IllegalStateException("benchmark writer failed", e);
        }
    }

    private static void consume(TestKafka kafka, String topic, Histogram endToEnd, AtomicBoolean measuring, AtomicBoolean stop) {
        Map<String, Object> config = kafka.consumerConfig(null);
        config.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 1);
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(config)) {
            List<TopicPartition> parts = new ArrayList<>();
            consumer.partitionsFor(topic, Duration.ofSeconds(30)).forEach(p -> parts.add(new TopicPartition(topic, p.partition())));
            consumer.assign(parts);
            consumer.seekToEnd(parts);
            parts.forEach(consumer::position);
            while (!stop.get()) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(50))) {
                    if (!measuring.get()) {
                        continue;
                    }
                    Instant created = Instant.parse(new String(r.headers().lastHeader(HeaderNames.CREATED_AT).value(),
                            StandardCharsets.UTF_8));
                    Instant now = Instant.now();
                    long micros = Duration.between(created, now).toNanos() / 1000;
                    endToEnd.recordValue(Math.max(0, Math.min(micros, endToEnd.getHighestTrackableValue())));
                }
            }
        }
    }
}
