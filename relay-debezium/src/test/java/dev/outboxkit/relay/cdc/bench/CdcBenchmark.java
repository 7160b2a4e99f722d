package dev.outboxkit.relay.cdc.bench;

import dev.outboxkit.relay.cdc.CdcRelayMain;
import dev.outboxkit.testkit.EmbeddedKafka;
import dev.outboxkit.testkit.JavaProcess;
import dev.outboxkit.testkit.OutboxTestkit;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import dev.outboxkit.testkit.TestPostgres;
import com.zaxxer.hikari.HikariDataSource;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.HdrHistogram.Histogram;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;

/**
 * Side-by-side benchmark of the CDC relay, in ONE run on the same data (not run by Surefire):
 * <ol>
 *   <li>WAL backlog drain: {@code rows} events (200-byte payloads) committed while the relay was down,
 *       its slot created beforehand; then the relay in WAL-only mode ({@code deleteAfterPublish=false})
 *       streams all of them. (The stock Debezium pipeline it is compared with lives in {@code benchmarks}:
 *       {@code StockDebeziumPipeline}, scenario {@code stock_debezium_drain}.)</li>
 *   <li>The relay in its default mode on the same rows: its start-up drain publishes what is in the table.</li>
 *   <li>Open-loop latency at 200 and 5,000 events/s, one event per transaction: commit (the writer's
 *       commit returned) to a consumer receiving it, and the relay's own created_at-to-ack timer.</li>
 * </ol>
 * Every pipeline runs in a child JVM of its own (same JVM options), so its RSS is its own. PostgreSQL 17
 * is embedded and durable (fsync on), Kafka is one in-process KRaft node.
 *
 * <p>Run: {@code ./mvnw -B -pl relay-debezium -am test-compile} then
 * {@code java -cp <test classpath> dev.outboxkit.relay.cdc.bench.CdcBenchmark [rows] [seconds per rate]}.
 */
public final class CdcBenchmark {

    private static final Pattern COUNT = Pattern.compile("^(?:PUBLISHED|ACKED) (\\d+) (\\d+)$", Pattern.MULTILINE);

    private CdcBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("latency")) {
            latencyOnly(args.length > 1 ? Integer.parseInt(args[1]) : 30);
            return;
        }
        int rows = args.length > 0 ? Integer.parseInt(args[0]) : 200_000;
        int seconds = args.length > 1 ? Integer.parseInt(args[1]) : 30;
        int warmup = Math.max(10_000, rows / 10);
        System.out.printf("CdcBenchmark: %d rows (warm-up %d), 200-byte payloads, latency runs of %d s; %d cores%n", rows, warmup,
                seconds, Runtime.getRuntime().availableProcessors());
        try (TestPostgres pg = OutboxTestkit.startEmbeddedPostgres(0, true); TestKafka kafka = new EmbeddedKafka(1)) {
            TestDatabase db = pg.newDatabase();
            kafka.createTopic("bench.order", 4);
            // The relay's two instances (WAL-only and default mode): a first start on the empty table creates
            // their slots and offsets, so the backlog below is in both slots. The stock Debezium comparison runs in
            // benchmarks/ (StockDebeziumDrain), side by side with the relay.
            relayRun(db, kafka, "bench_wal", false, -1, "setup");
            relayRun(db, kafka, "bench_def", true, -1, "setup");

            insertRows(db, warmup);
            relayRun(db, kafka, "bench_wal", false, warmup, "warm-up");
            relayRun(db, kafka, "bench_def", true, warmup, "warm-up");

            insertRows(db, rows);
            System.out.printf("%n== Backlog of %,d events committed while both relays were down (same rows for both) ==%n", rows);
            Result wal = relayRun(db, kafka, "bench_wal", false, rows, "measured");
            Result drain = relayRun(db, kafka, "bench_def", true, rows, "measured");
            dropSlot(db, "bench_wal");

            System.out.printf("%n== Burst of %,d events written while the relay (default mode) streams ==%n", rows);
            Result burst = burstRun(db, kafka, rows);

            System.out.printf("%n== Open-loop latency, relay in default mode, one event per transaction ==%n");
            Latency l200 = latencyRun(db, kafka, 200, seconds);
            Latency l5000 = latencyRun(db, kafka, 5_000, seconds);

            System.out.printf("%n== Summary (the machine was shared with other builds while measuring: load average %s) ==%n",
                    Files.readString(Path.of("/proc/loadavg")).trim());
            System.out.printf("outboxkit relay, default mode (table drain):        %s%n", drain);
            System.out.printf("outboxkit relay, WAL-only mode (Debezium decoding):  %s%n", wal);
            System.out.printf("outboxkit relay, burst while streaming:             %s%n", burst);
            System.out.printf("latency @200/s:  %s%n", l200);
            System.out.printf("latency @5000/s: %s%n", l5000);
        }
    }

    /** Only the open-loop latency runs (to repeat them when the machine is quieter). */
    private static void latencyOnly(int seconds) throws Exception {
        try (TestPostgres pg = OutboxTestkit.startEmbeddedPostgres(0, true); TestKafka kafka = new EmbeddedKafka(1)) {
            TestDatabase db = pg.newDatabase();
            kafka.createTopic("bench.order", 4);
            relayRun(db, kafka, "bench_def", true, -1, "setup");
            latencyRun(db, kafka, 200, Math.min(seconds, 10)); // warm-up of broker and writers
            Latency l200 = latencyRun(db, kafka, 200, seconds);
            Latency l5000 = latencyRun(db, kafka, 5_000, seconds);
            System.out.printf("%n== Latency (load average while measuring: %s) ==%n", Files.readString(Path.of("/proc/loadavg")).trim());
            System.out.printf("latency @200/s:  %s%n", l200);
            System.out.printf("latency @5000/s: %s%n", l5000);
        }
    }

    /** Events per second from the child's start and from its first publication, plus its largest RSS. */
    record Result(long events, long startMillis, long firstMillis, long doneMillis, long maxRssKb, double cpuSeconds) {

        double rate() {
            return events * 1000.0 / Math.max(1, doneMillis - firstMillis);
        }

        @Override
        public String toString() {
            return String.format("%,d events in %,d ms from process start (%,.0f/s), %,d ms from first ack (%,.0f/s); "
                            + "CPU %.1f s (%.0f µs/event incl. start-up); max RSS %,d MB",
                    events, doneMillis - startMillis, events * 1000.0 / Math.max(1, doneMillis - startMillis),
                    doneMillis - firstMillis, rate(), cpuSeconds, cpuSeconds * 1e6 / Math.max(1, events), maxRssKb / 1024);
        }
    }

    record Latency(int rate, long events, Histogram commitToConsume, Histogram intendedToConsume, String relayTimer,
                   long maxRssKb) {

        @Override
        public String toString() {
            return String.format("%,d events; commit->consumer p50 %.1f ms p99 %.1f ms p99.9 %.1f ms max %.1f ms; "
                            + "intended-send->consumer p99 %.1f ms; relay %s; relay max RSS %,d MB",
                    events, ms(commitToConsume, 50), ms(commitToConsume, 99), ms(commitToConsume, 99.9),
                    commitToConsume.getMaxValue() / 1000.0, ms(intendedToConsume, 99), relayTimer, maxRssKb / 1024);
        }

        private static double ms(Histogram h, double p) {
            return h.getValueAtPercentile(p) / 1000.0;
        }
    }

    private static Result relayRun(TestDatabase db, TestKafka kafka, String slot, boolean deleteAfterPublish, long target,
                                   String label) throws Exception {
        long start = System.currentTimeMillis();
        try (JavaProcess child = JavaProcess.start("bench-relay-" + slot, CdcRelayMain.class,
                relayArgs(db, kafka, slot, deleteAfterPublish), jvmOptions("relay-" + slot + "-" + label), Map.of())) {
            RssSampler rss = new RssSampler(child.pid());
            if (!child.awaitOutput("READY", Duration.ofSeconds(600))) {
                throw new IllegalStateException("relay did not become ready:\n" + child.output());
            }
            Result result = target < 0 ? new Result(0, start, start, System.currentTimeMillis(), rss.max(), 0)
                    : awaitCount(child, target, start, rss);
            if (target < 0) {
                Thread.sleep(3_000); // heartbeats store the first offset
            }
            child.terminate(Duration.ofSeconds(120));
            rss.stop();
            if (target >= 0) {
                System.out.printf("relay %-9s %-8s (deleteAfterPublish=%s): %s%n", slot, label, deleteAfterPublish, result);
            }
            return result;
        }
    }

    /** With -Dbench.jfr=DIR each child records a JFR profile there. */
    private static List<String> jvmOptions(String name) {
        String dir = System.getProperty("bench.jfr");
        return dir == null ? List.of() : List.of("-XX:StartFlightRecording=filename=" + dir + "/" + name + ".jfr,settings=profile");
    }

    /** The relay streams; then {@code rows} events are written as fast as one writer can: until all are published. */
    private static Result burstRun(TestDatabase db, TestKafka kafka, int rows) throws Exception {
        try (JavaProcess child = JavaProcess.start("bench-relay-burst", CdcRelayMain.class,
                relayArgs(db, kafka, "bench_def", true), jvmOptions("relay-burst"), Map.of())) {
            RssSampler rss = new RssSampler(child.pid());
            if (!child.awaitOutput("READY", Duration.ofSeconds(300))) {
                throw new IllegalStateException("relay did not become ready:\n" + child.output());
            }
            Thread.sleep(16_000); // streaming long enough for the relay to consider a catch-up
            long start = System.currentTimeMillis();
            insertRows(db, rows);
            Result result = awaitCount(child, rows, start, rss);
            child.terminate(Duration.ofSeconds(120));
            rss.stop();
            boolean caughtUp = child.output().contains("publishing the backlog from the table");
            System.out.printf("relay burst (deleteAfterPublish=true%s): %s%n", caughtUp ? ", caught up from the table" : "", result);
            return result;
        }
    }

    private static List<String> relayArgs(TestDatabase db, TestKafka kafka, String slot, boolean deleteAfterPublish) {
        return List.of("jdbcUrl=" + db.jdbcUrl(), "user=" + db.user(), "password=" + db.password(),
                "bootstrap=" + kafka.bootstrapServers(), "slot=" + slot, "deleteAfterPublish=" + deleteAfterPublish,
                "route=bench.${aggregateType}", "flush=1000", "heartbeat=5000", "lease=15000");
    }

    private static Result awaitCount(JavaProcess child, long target, long start, RssSampler rss) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(20);
        long first = -1;
        while (System.nanoTime() < deadline) {
            Matcher m = COUNT.matcher(child.output());
            while (m.find()) {
                long n = Long.parseLong(m.group(1));
                long t = Long.parseLong(m.group(2));
                if (n > 0 && first < 0) {
                    first = t;
                }
                if (n >= target) {
                    return new Result(n, start, first, t, rss.max(), cpuSeconds(child.pid()));
                }
            }
            if (!child.isAlive()) {
                throw new IllegalStateException(child.name() + " died:\n" + child.output());
            }
            Thread.sleep(50);
        }
        throw new IllegalStateException(child.name() + " did not reach " + target + ":\n" + child.output());
    }

    private static Latency latencyRun(TestDatabase db, TestKafka kafka, int rate, int seconds) throws Exception {
        Map<UUID, Long> committed = new ConcurrentHashMap<>();
        Map<UUID, Long> intended = new ConcurrentHashMap<>();
        Histogram commitToConsume = new Histogram(TimeUnit.SECONDS.toMicros(60), 3);
        Histogram intendedToConsume = new Histogram(TimeUnit.SECONDS.toMicros(60), 3);
        long total = (long) rate * seconds;
        AtomicLong consumed = new AtomicLong();
        AtomicBoolean stop = new AtomicBoolean();
        try (JavaProcess child = JavaProcess.start("bench-relay-latency-" + rate, CdcRelayMain.class,
                relayArgs(db, kafka, "bench_def", true), List.of(), Map.of());
             HikariDataSource writers = db.newPool(32)) {
            RssSampler rss = new RssSampler(child.pid());
            if (!child.awaitOutput("READY", Duration.ofSeconds(300))) {
                throw new IllegalStateException("relay did not become ready:\n" + child.output());
            }
            Thread consumer = new Thread(() -> {
                Map<String, Object> config = kafka.consumerConfig(null);
                config.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 1);
                config.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 5000);
                try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(config)) {
                    List<TopicPartition> parts = new ArrayList<>();
                    c.partitionsFor("bench.order").forEach(p -> parts.add(new TopicPartition(p.topic(), p.partition())));
                    c.assign(parts);
                    c.seekToEnd(parts);
                    parts.forEach(c::position);
                    while (!stop.get()) {
                        for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(5))) {
                            long now = System.nanoTime();
                            UUID id = UUID.fromString(new String(r.headers().lastHeader("id").value(), StandardCharsets.UTF_8));
                            Long at = committed.remove(id);
                            Long planned = intended.remove(id);
                            if (at != null) {
                                commitToConsume.recordValue(Math.max(0, (now - at) / 1000));
                            }
                            if (planned != null) {
                                intendedToConsume.recordValue(Math.max(0, (now - planned) / 1000));
                            }
                            consumed.incrementAndGet();
                        }
                    }
                }
            }, "bench-consumer");
            consumer.start();
            Thread.sleep(2_000);
            ExecutorService pool = Executors.newFixedThreadPool(32);
            long t0 = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(100);
            long interval = TimeUnit.SECONDS.toNanos(1) / rate;
            for (long i = 0; i < total; i++) {
                long at = t0 + i * interval;
                long wait = at - System.nanoTime();
                if (wait > 0) {
                    LockSupport.parkNanos(wait);
                }
                pool.execute(() -> {
                    UUID id = UUID.randomUUID();
                    intended.put(id, at);
                    try (Connection c = writers.getConnection(); PreparedStatement ps = c.prepareStatement(
                            "INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload) "
                                    + "VALUES (?, 'order', ?, 'OrderPlaced', ?::jsonb)")) {
                        ps.setObject(1, id);
                        ps.setString(2, "agg-" + ThreadLocalRandom.current().nextInt(1000));
                        ps.setString(3, payload(id));
                        ps.executeUpdate();
                        committed.put(id, System.nanoTime());
                    } catch (Exception e) {
                        intended.remove(id);
                        System.out.println("write failed: " + e);
                    }
                });
            }
            pool.shutdown();
            pool.awaitTermination(5, TimeUnit.MINUTES);
            long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
            while (consumed.get() < total && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            stop.set(true);
            consumer.join(30_000);
            child.terminate(Duration.ofSeconds(120));
            rss.stop();
            Matcher m = Pattern.compile("COMMIT_TO_ACK (.*)").matcher(child.output());
            String timer = m.find() ? "created_at->ack " + m.group(1) : "(no timer)";
            Latency l = new Latency(rate, consumed.get(), commitToConsume, intendedToConsume, timer, rss.max());
            System.out.printf("@%d/s: %s%n", rate, l);
            return l;
        }
    }

    /** utime + stime of a process, from /proc (clock ticks of 1/100 s). */
    private static double cpuSeconds(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return (Long.parseLong(f[11]) + Long.parseLong(f[12])) / 100.0;
        } catch (Exception e) {
            return -1;
        }
    }

    private static String payload(UUID id) {
        StringBuilder p = new StringBuilder("{\"orderId\": \"").append(id).append("\", \"customer\": \"c-")
                .append(id.getLeastSignificantBits() & 0xffff).append("\", \"items\": [{\"sku\": \"A-1\", \"qty\": 2}], \"pad\": \"");
        while (p.length() < 188) {
            p.append('x');
        }
        return p.append("\"}").toString();
    }

    private static void insertRows(TestDatabase db, int rows) throws Exception {
        long started = System.nanoTime();
        try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement(
                "INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload) "
                        + "SELECT * FROM unnest(?::uuid[], ?::text[], ?::text[], ?::text[], ?::jsonb[])")) {
            c.setAutoCommit(false);
            int batch = 1000;
            for (int from = 0; from < rows; from += batch) {
                int n = Math.min(batch, rows - from);
                UUID[] ids = new UUID[n];
                String[] types = new String[n];
                String[] aggs = new String[n];
                String[] events = new String[n];
                String[] payloads = new String[n];
                for (int i = 0; i < n; i++) {
                    ids[i] = UUID.randomUUID();
                    types[i] = "order";
                    aggs[i] = "agg-" + ((from + i) % 1000);
                    events[i] = "OrderPlaced";
                    payloads[i] = payload(ids[i]);
                }
                ps.setArray(1, c.createArrayOf("uuid", ids));
                ps.setArray(2, c.createArrayOf("text", types));
                ps.setArray(3, c.createArrayOf("text", aggs));
                ps.setArray(4, c.createArrayOf("text", events));
                ps.setArray(5, c.createArrayOf("text", payloads));
                ps.executeUpdate();
                c.commit();
            }
        }
        System.out.printf("inserted %,d rows in %,d ms%n", rows, (System.nanoTime() - started) / 1_000_000);
    }

    private static void dropSlot(TestDatabase db, String slot) throws Exception {
        try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement(
                "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = ? AND NOT active")) {
            ps.setString(1, slot);
            ps.executeQuery().close();
        }
    }

    /** Samples VmRSS of a child process every 250 ms. */
    static final class RssSampler {
        private final AtomicLong max = new AtomicLong();
        private final AtomicBoolean stopped = new AtomicBoolean();

        RssSampler(long pid) {
            Thread t = new Thread(() -> {
                Path status = Path.of("/proc", Long.toString(pid), "status");
                while (!stopped.get()) {
                    try {
                        for (String line : Files.readAllLines(status)) {
                            if (line.startsWith("VmRSS:")) {
                                long kb = Long.parseLong(line.replaceAll("[^0-9]", ""));
                                max.accumulateAndGet(kb, Math::max);
                            }
                        }
                        Thread.sleep(250);
                    } catch (Exception e) {
                        return;
                    }
                }
            }, "rss-" + pid);
            t.setDaemon(true);
            t.start();
        }

        long max() {
            return max.get();
        }

        void stop() {
            stopped.set(true);
        }
    }
}
