package dev.outboxkit.benchmarks.scenarios;

import dev.outboxkit.benchmarks.BenchContext;
import dev.outboxkit.benchmarks.Measurements;
import dev.outboxkit.benchmarks.Metric;
import dev.outboxkit.benchmarks.MetricCatalog;
import dev.outboxkit.benchmarks.Scenario;
import dev.outboxkit.benchmarks.Sizes;
import dev.outboxkit.benchmarks.load.Await;
import dev.outboxkit.benchmarks.load.CrashPublisherMain;
import dev.outboxkit.benchmarks.load.EventIdReader;
import dev.outboxkit.benchmarks.load.Relays;
import dev.outboxkit.benchmarks.load.SyntheticEvents;
import dev.outboxkit.benchmarks.load.TopicRecords;
import dev.outboxkit.testkit.FailoverGap;
import dev.outboxkit.testkit.History;
import dev.outboxkit.testkit.JavaProcess;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.writer.OutboxMessage;
import dev.outboxkit.writer.OutboxTransaction;
import dev.outboxkit.writer.OutboxWriter;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code failover_<relay>_…}: what a failure of the relay instance that holds the work costs, for both
 * relays with their defaults (lease 15 s), each instance a child JVM ({@link CrashPublisherMain} without writing), so
 * a kill is a real SIGKILL. The polling relay runs as two instances sharing the partitions, the CDC relay as an active
 * instance and a standby on one slot. One writer in the benchmark JVM commits one event per transaction at a steady
 * {@value #RATE} events/s throughout. Then, alternately, the instance holding the work (the most {@code poll/<n>}
 * leases, or the {@code cdc/<slot>} lease) gets SIGKILL or SIGTERM, and a new instance is started before the next
 * step, so that every step has a survivor; a step waits until every instance has been ready {@link #minReady} (as a
 * rolling update does). Per step: the survivor's first acknowledged record of the stopped
 * instance's work (the first record of its partitions, or of the slot, with a Kafka timestamp after the stopped
 * process exited), and the worst delay, Kafka timestamp − the event's {@code createdAt}, of the events created from
 * 1 s before the signal until that record. At the end every committed event must be in Kafka, the first
 * publications of each aggregate in commit order: the scenario fails loudly otherwise.
 */
public final class Failover implements Scenario {

    private static final Logger log = LoggerFactory.getLogger(Failover.class);

    /** Events per second the writer commits. */
    static final int RATE = 200;
    /** Aggregates the writer spreads its events over (order is checked per aggregate). */
    static final int AGGREGATES = 200;
    /** Bound on a takeover: the lease (15 s by default) plus a loaded machine. */
    private static final Duration TAKEOVER = Duration.ofSeconds(120);
    /** Bound on a start-up or a catch-up: JVM start, Debezium's engine, a backlog, on a shared machine. */
    private static final Duration SETTLE = Duration.ofMinutes(5);
    /** The children's log clock (logback's HH:mm:ss.SSS, UTC on this machine): to set their lines against a step. */
    private static final DateTimeFormatter CLOCK = DateTimeFormatter.ofPattern("HH:mm:ss.SSS").withZone(ZoneOffset.UTC);

    /**
     * How long the youngest instance has been ready before a step: the rolling update of {@code deploy/kubernetes}
     * ({@code minReadySeconds: 10}, {@code maxSurge: 1}) stops an old pod only after the new one has been ready that
     * long, on another node. Here every JVM shares two cores: without the wait a step hit a JVM seconds old, whose
     * start-up (class loading, JIT) held back every instance's publishing in the second before the signal, which the
     * worst delay counts (measured: events created 1 s before the signal waited 250-810 ms before any stop began).
     */
    static Duration minReady(Sizes.Mode mode) {
        return mode == Sizes.Mode.SMOKE ? Duration.ZERO : Duration.ofSeconds(10);
    }

    enum Step { KILL, SIGTERM }

    /** One step as measured: which, of whom, and its {@link FailoverGap.Stop}. */
    private record Signal(Step step, String instance, FailoverGap.Stop stop) {
    }

    @Override
    public String name() {
        return "failover";
    }

    @Override
    public List<Metric> metrics() {
        List<Metric> all = new ArrayList<>();
        MetricCatalog.FAILOVER_SYSTEMS.forEach(s -> all.addAll(MetricCatalog.failover(s)));
        return List.copyOf(all);
    }

    /** Kills (and as many SIGTERM handoffs) per relay in one repeat. */
    static int steps(Sizes.Mode mode) {
        return switch (mode) {
            case SMOKE -> 1;
            case QUICK -> 3;
            case FULL, BACKLOG -> 5; // the backlog mode never runs it (ScenarioCatalog.forMode)
        };
    }

    @Override
    public Measurements run(BenchContext context) throws Exception {
        Measurements out = new Measurements();
        for (String system : MetricCatalog.FAILOVER_SYSTEMS) {
            runRelay(context, system, out);
        }
        return out;
    }

    private void runRelay(BenchContext context, String system, Measurements out) throws Exception {
        int steps = steps(context.sizes().mode());
        // smoke: a third instance up front instead of a restart per step (one JVM start-up instead of two)
        int instances = context.sizes().mode() == Sizes.Mode.SMOKE ? 3 : 2;
        TestDatabase db = context.newDatabase();
        String topic = context.uniqueTopic("failover-" + system);
        context.kafka().createTopic(topic, BacklogDrain.PARTITIONS);
        String bootstrap = context.kafka().bootstrapServers();
        String slot = Relays.uniqueSlot("bench_failover");
        List<String> args = List.of("system=" + system, "jdbcUrl=" + db.jdbcUrl(), "user=" + db.user(),
                "password=" + db.password(), "bootstrap=" + bootstrap, "topic=" + topic, "slot=" + slot, "write=false");
        Map<String, JavaProcess> alive = new LinkedHashMap<>();
        Map<String, Long> readySince = new HashMap<>();
        List<Signal> signals = new ArrayList<>();
        int[] started = {0};
        try (TopicRecords records = new TopicRecords(bootstrap, topic, EventIdReader.HEADER);
             SteadyWriter writer = SteadyWriter.start(db, RATE)) {
            startInstances(context, system, args, instances, alive, started, readySince);
            for (int i = 0; i < 2 * steps; i++) {
                Step step = i % 2 == 0 ? Step.KILL : Step.SIGTERM;
                while (alive.size() < 2) {
                    startInstances(context, system, args, 1, alive, started, readySince);
                }
                awaitMinReady(system, alive, readySince, minReady(context.sizes().mode()));
                awaitSteady(db, system, slot, alive, records, writer);
                String holder = holder(db, system, slot, alive);
                Set<String> work = work(db, system, holder);
                JavaProcess p = alive.remove(holder);
                // the exit's instant as the JVM reaps the child (waitForExit also drains its output, which lags)
                CompletableFuture<Long> exited = ProcessHandle.of(p.pid()).orElseThrow().onExit()
                        .thenApply(h -> System.currentTimeMillis());
                long signalMs = System.currentTimeMillis();
                if (step == Step.KILL) {
                    p.kill9();
                } else {
                    p.terminate(Duration.ofSeconds(60));
                }
                // a killed process sends nothing after the signal (a record's timestamp is taken at its send), so
                // every later record is a survivor's; a stopping one finishes its batch first, so after its exit
                long goneMs = step == Step.KILL ? signalMs : exited.get(60, TimeUnit.SECONDS);
                p.close();
                Signal signal = new Signal(step, holder, new FailoverGap.Stop(signalMs, goneMs, work));
                long firstAck = awaitFirstAck(records, signal, alive);
                log.info("failover {}: {} of {} (holding {} aggregates' work) → first acknowledged record of it {} ms"
                                + " after the signal ({} ms to exit)", system, step, holder, work.size(),
                        firstAck - signalMs, exited.get(60, TimeUnit.SECONDS) - signalMs);
                signals.add(signal);
            }
            writer.stop();
            List<TopicRecords.Delivery> deliveries = awaitAllDelivered(system, db, records, writer, alive);
            History.Report report = check(writer.committed(), deliveries);
            log.info("failover {}: {}", system, report.summary());
            if (report.lost() != 0 || report.orderViolations() != 0 || report.publicationOrderViolations() != 0
                    || !report.ok()) {
                throw new IllegalStateException("failover " + system + ": events lost or out of order across "
                        + signals.size() + " kills and handoffs: " + report.summary());
            }
            measure(system, signals, records.publishedAvailable(), out);
        } finally {
            for (JavaProcess p : alive.values()) {
                try {
                    p.terminate(Duration.ofSeconds(60));
                } finally {
                    p.close();
                }
            }
            if (system.equals("cdc")) {
                db.dropReplicationSlot(slot);
            }
        }
    }

    private void startInstances(BenchContext context, String system, List<String> args, int count,
                                Map<String, JavaProcess> alive, int[] started, Map<String, Long> readySince) {
        // one after the other: JVMs starting at once on a loaded machine starve the in-JVM broker
        for (int i = 0; i < count; i++) {
            String id = "bench-failover-" + system + "-" + (++started[0]);
            List<String> all = new ArrayList<>(args);
            all.add("instanceId=" + id);
            JavaProcess p = JavaProcess.start(id, CrashPublisherMain.class, all,
                    context.sizes().publisherJvmOptions(), Map.of());
            alive.put(id, p);
            if (!p.awaitOutput("READY", SETTLE)) {
                throw new IllegalStateException("failover " + system + ": " + p.name() + " did not get ready: "
                        + p.output());
            }
            readySince.put(id, System.nanoTime());
        }
    }

    /** Waits until every live instance has been ready for {@code minReady} ({@link #minReady}). */
    private static void awaitMinReady(String system, Map<String, JavaProcess> alive, Map<String, Long> readySince,
                                      Duration minReady) throws Exception {
        long youngest = alive.keySet().stream().mapToLong(readySince::get).max().orElse(0);
        Await.until("failover " + system + ": every live instance ready for " + minReady,
                () -> System.nanoTime() - youngest >= minReady.toNanos(), SETTLE, 50,
                () -> deadInstance(alive, null));
    }

    /**
     * Waits until the work is spread over live instances only (the polling relay: every live instance holds
     * partitions and no partition is held by a gone one; the CDC relay: a live instance holds the slot) and Kafka
     * has every event committed before the wait began.
     */
    private static void awaitSteady(TestDatabase db, String system, String slot, Map<String, JavaProcess> alive,
                                    TopicRecords records, SteadyWriter writer) throws Exception {
        int committed = writer.committed().size();
        Await.until("failover " + system + ": work spread over " + alive.keySet() + " and caught up", () -> {
            Map<String, Integer> held = leases(db, system, slot);
            boolean spread = system.equals("cdc")
                    ? held.size() == 1 && alive.containsKey(held.keySet().iterator().next())
                    : alive.keySet().equals(held.keySet());
            return spread && delivered(records.readAvailable()).containsAll(writer.idsUpTo(committed));
        }, SETTLE, 50, () -> deadInstance(alive, writer));
    }

    private static String deadInstance(Map<String, JavaProcess> alive, SteadyWriter writer) {
        if (writer != null && writer.failure() != null) {
            return "the writer failed: " + writer.failure();
        }
        for (JavaProcess p : alive.values()) {
            if (!p.isAlive()) {
                return p.name() + " exited: " + p.output();
            }
        }
        return null;
    }

    /** Leases held per holder: {@code poll/<n>} for the polling relay, {@code cdc/<slot>} for the CDC relay. */
    private static Map<String, Integer> leases(TestDatabase db, String system, String slot) throws Exception {
        Map<String, Integer> held = new HashMap<>();
        try (Connection c = db.connect(); PreparedStatement s = c.prepareStatement(
                "SELECT holder, count(*) FROM outbox_relay_lease WHERE lease_key LIKE ? GROUP BY holder")) {
            s.setString(1, system.equals("cdc") ? "cdc/" + slot : "poll/%");
            try (ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    held.put(rs.getString(1), rs.getInt(2));
                }
            }
        }
        return held;
    }

    /** The live instance holding the most leases. */
    private static String holder(TestDatabase db, String system, String slot, Map<String, JavaProcess> alive)
            throws Exception {
        return leases(db, system, slot).entrySet().stream().filter(e -> alive.containsKey(e.getKey()))
                .max(Map.Entry.comparingByValue()).map(Map.Entry::getKey)
                .orElseThrow(() -> new IllegalStateException("failover " + system + ": no live instance holds work"));
    }

    /**
     * The aggregates whose events {@code holder} publishes: for the polling relay those of its partitions (the
     * partition of an aggregate as the relay computes it, {@code PollerSql.partitionOf}), for the CDC relay all.
     */
    private static Set<String> work(TestDatabase db, String system, String holder) throws Exception {
        Set<String> aggregates = new HashSet<>();
        for (int i = 0; i < AGGREGATES; i++) {
            aggregates.add(aggregate(i));
        }
        if (system.equals("cdc")) {
            return aggregates;
        }
        Set<String> held;
        try (Connection c = db.connect()) {
            held = FailoverGap.heldByPoller(c, holder, SyntheticEvents.AGGREGATE_TYPE, aggregates);
        }
        if (held.isEmpty()) {
            throw new IllegalStateException("failover " + system + ": " + holder + " holds no partition of the "
                    + AGGREGATES + " aggregates written");
        }
        return held;
    }

    /** The aggregate of event n: {@value #AGGREGATES} of them, so each gets about one event a second. */
    private static String aggregate(long n) {
        return SyntheticEvents.aggregateId(n % AGGREGATES);
    }

    /** Waits for the survivor's first record of the stopped instance's work; its Kafka timestamp. */
    private static long awaitFirstAck(TopicRecords records, Signal signal, Map<String, JavaProcess> alive)
            throws Exception {
        long[] first = {-1};
        Await.until("the first record of " + signal.instance() + "'s work after its " + signal.step(), () -> {
            first[0] = FailoverGap.firstRecordAfter(records.publishedAvailable(), signal.stop());
            return first[0] >= 0;
        }, TAKEOVER, 10, () -> {
            for (JavaProcess p : alive.values()) {
                if (!p.isAlive()) {
                    return p.name() + " exited: " + p.output();
                }
            }
            return null;
        });
        return first[0];
    }

    private static List<TopicRecords.Delivery> awaitAllDelivered(String system, TestDatabase db,
                                                                 TopicRecords records, SteadyWriter writer,
                                                                 Map<String, JavaProcess> alive) throws Exception {
        Set<UUID> committed = writer.idsUpTo(writer.committed().size());
        try {
            Await.until("failover " + system + ": every committed event in Kafka",
                    () -> delivered(records.readAvailable()).containsAll(committed), SETTLE, 50,
                    () -> deadInstance(alive, writer));
        } catch (IllegalStateException e) {
            throw new IllegalStateException(e.getMessage() + "; " + missing(db, committed, records, alive), e);
        }
        return records.readAvailable();
    }

    /**
     * What a failed catch-up leaves to go on: which committed events Kafka lacks, whether their rows are still in
     * the outbox (and how often they failed) or parked, who holds which lease, and where each child's log is.
     */
    private static String missing(TestDatabase db, Set<UUID> committed, TopicRecords records,
                                  Map<String, JavaProcess> alive) {
        Set<UUID> lacking = new HashSet<>(committed);
        lacking.removeAll(delivered(records.readAvailable()));
        StringBuilder why = new StringBuilder().append(lacking.size()).append(" of ").append(committed.size())
                .append(" committed events not in Kafka");
        try (Connection c = db.connect()) {
            why.append("; outbox rows left: ").append(rows(c, "SELECT count(*), min(seq), max(seq), max(attempts),"
                    + " count(published_at) FROM outbox_event"));
            why.append("; of the missing, still in the outbox: ").append(rows(c, "SELECT count(*) FROM outbox_event"
                    + " WHERE id = ANY (?)", lacking.toArray(UUID[]::new)));
            why.append("; parked: ").append(rows(c, "SELECT count(*) FROM outbox_dead_letter"));
            why.append("; leases (holder, count, min fence, max expiry): ").append(rows(c, "SELECT holder,"
                    + " count(*), min(fence), max(expires_at) FROM outbox_relay_lease GROUP BY holder"));
            why.append("; the first missing rows (seq, aggregate, attempts): ").append(rows(c, "SELECT seq,"
                    + " aggregate_id, attempts FROM outbox_event WHERE id = ANY (?) ORDER BY seq LIMIT 5",
                    lacking.toArray(UUID[]::new)));
        } catch (Exception e) {
            why.append("; the database could not be asked: ").append(e);
        }
        alive.values().forEach(p -> why.append("; ").append(p.name()).append(p.isAlive() ? " alive" : " exited")
                .append(", log ").append(p.logFile().toAbsolutePath()));
        return why.toString();
    }

    private static String rows(Connection c, String sql, Object... parameters) throws Exception {
        List<String> out = new ArrayList<>();
        try (PreparedStatement s = c.prepareStatement(sql)) {
            for (int i = 0; i < parameters.length; i++) {
                s.setObject(i + 1, c.createArrayOf("uuid", (Object[]) parameters[i]));
            }
            try (ResultSet rs = s.executeQuery()) {
                int columns = rs.getMetaData().getColumnCount();
                while (rs.next()) {
                    List<String> row = new ArrayList<>();
                    for (int i = 1; i <= columns; i++) {
                        row.add(String.valueOf(rs.getObject(i)));
                    }
                    out.add(String.join(", ", row));
                }
            }
        }
        return out.toString();
    }

    private static void measure(String system, List<Signal> signals, List<FailoverGap.Published> records,
                                Measurements out) {
        for (Step step : Step.values()) {
            List<Long> firstRecord = new ArrayList<>();
            List<Long> worstDelay = new ArrayList<>();
            for (Signal s : signals) {
                if (s.step() == step) {
                    FailoverGap.Gap gap = FailoverGap.measure(records, s.stop());
                    firstRecord.add(gap.firstRecordMs());
                    worstDelay.add(gap.worstDelayMs());
                    log.info("failover {}: {} of {}: {}", system, step, s.instance(), anatomy(records, s.stop()));
                }
            }
            String what = step == Step.KILL ? "kill" : "sigterm";
            log.info("failover {}: {} → first record {} ms, worst event delay {} ms", system, what, firstRecord,
                    worstDelay);
            put(out, system, what + "_first_ack", firstRecord);
            put(out, system, what + "_worst_delay", worstDelay);
        }
    }

    /**
     * Where one stop's gap went, on the child logs' clock (UTC): the signal and exit instants, the survivor's first
     * record, and the worst-delayed event of the window split in two: created in the second before the signal (a
     * delay that began before any stop) and of the stopped instance's work created after it (the handoff's own).
     */
    private static String anatomy(List<FailoverGap.Published> records, FailoverGap.Stop stop) {
        long first = FailoverGap.firstRecordAfter(records, stop);
        Map<UUID, FailoverGap.Published> firsts = new HashMap<>();
        for (FailoverGap.Published p : records) {
            if (p.id() != null) {
                firsts.merge(p.id(), p, (a, b) -> a.timestamp() <= b.timestamp() ? a : b);
            }
        }
        long signal = stop.signalMs();
        FailoverGap.Published before = null;
        FailoverGap.Published after = null;
        for (FailoverGap.Published p : firsts.values()) {
            if (p.createdAt() == null) {
                continue;
            }
            long created = p.createdAt().toEpochMilli();
            if (created >= signal - FailoverGap.BEFORE_SIGNAL_MS && created < signal) {
                before = worse(before, p);
            } else if (created >= signal && created <= first && stop.work().contains(p.aggregate())) {
                after = worse(after, p);
            }
        }
        return "signal at " + clock(signal) + ", exit +" + (stop.goneMs() - signal) + " ms, the survivor's first record"
                + " +" + (first - signal) + " ms; worst delay of the events created in the second before the signal "
                + describe(before, signal) + "; of its work's events created after it " + describe(after, signal);
    }

    private static FailoverGap.Published worse(FailoverGap.Published a, FailoverGap.Published b) {
        return a == null || delay(b) > delay(a) ? b : a;
    }

    private static long delay(FailoverGap.Published p) {
        return p.timestamp() - p.createdAt().toEpochMilli();
    }

    private static String describe(FailoverGap.Published p, long signal) {
        return p == null ? "(none)" : delay(p) + " ms (" + p.aggregate() + ", created " + (p.createdAt().toEpochMilli()
                - signal) + " ms, published +" + (p.timestamp() - signal) + " ms)";
    }

    private static String clock(long epochMs) {
        return CLOCK.format(Instant.ofEpochMilli(epochMs));
    }

    private static void put(Measurements out, String system, String what, List<Long> values) {
        List<Long> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        // p50 of five is the third; of an even count the lower middle (never an interpolated value nobody measured)
        out.put(MetricCatalog.failoverKey(system, what, "p50"), sorted.get((sorted.size() - 1) / 2));
        out.put(MetricCatalog.failoverKey(system, what, "max"), sorted.get(sorted.size() - 1));
    }

    private static Set<UUID> delivered(List<TopicRecords.Delivery> deliveries) {
        Set<UUID> ids = new HashSet<>();
        deliveries.forEach(d -> ids.add(d.id()));
        return ids;
    }

    /**
     * Every committed event an intent (one writer thread: commit order is the order), every record a delivery
     * recorded with its aggregate (so the first publications of each aggregate are checked for commit order).
     */
    private static History.Report check(List<Committed> committed, List<TopicRecords.Delivery> deliveries) {
        History history = new History();
        committed.forEach(e -> history.committed(e.id(), e.aggregate(), e.n()));
        Set<UUID> applied = new HashSet<>();
        for (TopicRecords.Delivery d : deliveries) {
            if (d.id() == null) {
                continue;
            }
            history.delivered(d.id(), d.aggregate());
            if (applied.add(d.id())) {
                history.applied(d.id(), d.aggregate());
            }
        }
        return history.check();
    }

    /** One committed event. */
    private record Committed(UUID id, String aggregate, long n) {
    }

    /**
     * One writer thread committing one event per transaction at a steady rate (event n is due at start + n / rate;
     * it never waits for the relays), each recorded in memory once committed (the history).
     */
    private static final class SteadyWriter implements AutoCloseable {
        private final List<Committed> committed = Collections.synchronizedList(new ArrayList<>());
        private final Thread thread;
        private volatile boolean running = true;
        private volatile Exception failure;

        private SteadyWriter(TestDatabase db, int rate) {
            thread = new Thread(() -> write(db, rate), "failover-writer");
            thread.setDaemon(true);
        }

        static SteadyWriter start(TestDatabase db, int rate) {
            SteadyWriter w = new SteadyWriter(db, rate);
            w.thread.start();
            return w;
        }

        private void write(TestDatabase db, int rate) {
            OutboxWriter outbox = OutboxWriter.builder().build();
            try (Connection c = db.connect()) {
                c.setAutoCommit(false);
                long start = System.nanoTime();
                for (long n = 0; running; n++) {
                    // pacing an open-loop writer: wait for event n's due time, never for anything downstream
                    LockSupport.parkNanos(start + n * TimeUnit.SECONDS.toNanos(1) / rate - System.nanoTime());
                    String aggregate = aggregate(n);
                    OutboxTransaction tx = outbox.begin(c);
                    UUID id = tx.add(OutboxMessage.builder(SyntheticEvents.AGGREGATE_TYPE, aggregate,
                            SyntheticEvents.EVENT_TYPE).payloadJson(SyntheticEvents.payload(n, 200)).build());
                    tx.commit();
                    committed.add(new Committed(id, aggregate, n));
                }
            } catch (Exception e) {
                failure = e;
                log.error("failover writer failed", e);
            }
        }

        List<Committed> committed() {
            synchronized (committed) {
                return List.copyOf(committed);
            }
        }

        Set<UUID> idsUpTo(int count) {
            Set<UUID> ids = new HashSet<>();
            synchronized (committed) {
                committed.subList(0, Math.min(count, committed.size())).forEach(e -> ids.add(e.id()));
            }
            return ids;
        }

        Exception failure() {
            return failure;
        }

        void stop() throws InterruptedException {
            running = false;
            thread.join(TimeUnit.SECONDS.toMillis(30));
            if (failure != null) {
                throw new IllegalStateException("the failover writer failed", failure);
            }
        }

        @Override
        public void close() throws InterruptedException {
            running = false;
            thread.join(TimeUnit.SECONDS.toMillis(30));
        }
    }
}
