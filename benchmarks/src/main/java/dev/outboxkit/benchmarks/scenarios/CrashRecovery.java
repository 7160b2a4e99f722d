package dev.outboxkit.benchmarks.scenarios;

import dev.outboxkit.benchmarks.BenchContext;
import dev.outboxkit.benchmarks.Measurements;
import dev.outboxkit.benchmarks.Metric;
import dev.outboxkit.benchmarks.MetricCatalog;
import dev.outboxkit.benchmarks.Scenario;
import dev.outboxkit.benchmarks.load.Await;
import dev.outboxkit.benchmarks.load.CrashPublisherMain;
import dev.outboxkit.benchmarks.load.EventIdReader;
import dev.outboxkit.benchmarks.load.Relays;
import dev.outboxkit.benchmarks.load.TopicRecords;
import dev.outboxkit.testkit.History;
import dev.outboxkit.testkit.JavaProcess;
import dev.outboxkit.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code <system>_crash_lost}, {@code _duplicates}, {@code _order_violations} and {@code _committed}: the same
 * crash for every system. The publishing process ({@link CrashPublisherMain}: an application that commits a
 * business row and its event per transaction, one writer thread, and publishes them) runs in a child JVM; once it
 * has committed and published for the mode's warm-up plus window it gets SIGKILL, mid-run. It is then started
 * again without writing, and the benchmark reads the topic until every committed event is there or the recovery
 * deadline passes. The testkit's {@link History} compares what committed (the business rows) with what Kafka
 * holds: events lost, extra deliveries (duplicates), and per-aggregate order violations. A peer that loses events
 * is a finding of the run, not a failure of it: the counts are reported as measured.
 */
public final class CrashRecovery implements Scenario {

    private static final Logger log = LoggerFactory.getLogger(CrashRecovery.class);

    /** Which publishing process. */
    public enum Kind {
        POLLER("poller", EventIdReader.HEADER), CDC("cdc", EventIdReader.HEADER),
        MODULITH("modulith", EventIdReader.JSON_ID_FIELD),
        /**
         * namastack-outbox: a restarted instance takes over the partitions of the killed one only once that one is
         * stale (no heartbeat for 30 s, its default) and a rebalance (every 10 s) has run, so its recovery gets 45 s
         * more than the others'.
         */
        NAMASTACK("namastack", EventIdReader.JSON_ID_FIELD, Duration.ofSeconds(45));

        final String key;
        final EventIdReader ids;
        final Duration takeover;

        Kind(String key, EventIdReader ids) {
            this(key, ids, Duration.ZERO);
        }

        Kind(String key, EventIdReader ids, Duration takeover) {
            this.key = key;
            this.ids = ids;
            this.takeover = takeover;
        }
    }

    private final Kind system;

    public CrashRecovery(Kind system) {
        this.system = system;
    }

    @Override
    public String name() {
        return system.key + "_crash";
    }

    @Override
    public List<Metric> metrics() {
        return MetricCatalog.crash(system.key);
    }

    @Override
    public Measurements run(BenchContext context) throws Exception {
        TestDatabase db = context.newDatabase();
        try (Connection c = db.connect(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE " + CrashPublisherMain.COMMITTED
                    + " (event_id uuid PRIMARY KEY, aggregate_id text NOT NULL, n bigint NOT NULL)");
        }
        String topic = context.uniqueTopic(system.key + "-crash");
        context.kafka().createTopic(topic, BacklogDrain.PARTITIONS);
        String bootstrap = context.kafka().bootstrapServers();
        String slot = Relays.uniqueSlot("bench_crash");
        List<String> args = List.of("system=" + system.key, "jdbcUrl=" + db.jdbcUrl(), "user=" + db.user(),
                "password=" + db.password(), "bootstrap=" + bootstrap, "topic=" + topic, "slot=" + slot);
        Duration run = context.sizes().warmup().plus(context.sizes().window());
        Duration recovery = Duration.ofSeconds(30).plus(run.multipliedBy(3)).plus(system.takeover);
        try (TopicRecords records = new TopicRecords(bootstrap, topic, system.ids)) {
            try (JavaProcess first = start(args, true, context.sizes().publisherJvmOptions())) {
                Await.until(name() + ": first events committed and published",
                        () -> committed(db) > 0 && records.count() > 0, Duration.ofMinutes(2), 20,
                        () -> first.isAlive() ? null : "the publishing process exited: " + first.output());
                Thread.sleep(run.toMillis()); // harness timing: let it run, then crash it mid-run
                first.kill9();
            }
            long committedAtKill = committed(db);
            log.info("{}: SIGKILL after {} committed events, {} records in Kafka", name(), committedAtKill, records.count());
            Set<UUID> committed = committedEvents(db);
            try (JavaProcess second = start(args, false, context.sizes().publisherJvmOptions())) {
                long deadline = System.nanoTime() + recovery.toNanos();
                while (!delivered(records.readAvailable()).containsAll(committed) && System.nanoTime() < deadline) {
                    if (!second.isAlive()) {
                        throw new IllegalStateException(name() + ": the restarted process exited: " + second.output());
                    }
                    Thread.sleep(50);
                }
                second.terminate(Duration.ofSeconds(60));
            }
            History.Report report = check(records.readAvailable(), db);
            log.info("{}: {}", name(), report.summary());
            return new Measurements()
                    .put(system.key + "_crash_committed", report.intents())
                    .put(system.key + "_crash_lost", report.lost())
                    .put(system.key + "_crash_duplicates", report.duplicateDeliveries())
                    .put(system.key + "_crash_order_violations", report.orderViolations());
        } finally {
            if (system == Kind.CDC) {
                db.dropReplicationSlot(slot);
            }
        }
    }

    private JavaProcess start(List<String> args, boolean write, List<String> jvmOptions) {
        List<String> all = new ArrayList<>(args);
        all.add("write=" + write);
        JavaProcess p = JavaProcess.start(name() + (write ? "-first" : "-restarted"), CrashPublisherMain.class, all,
                jvmOptions, Map.of());
        if (!p.awaitOutput("READY", Duration.ofMinutes(3))) {
            String output = p.output();
            p.close();
            throw new IllegalStateException(name() + ": the publishing process did not get ready: " + output);
        }
        return p;
    }

    private static long committed(TestDatabase db) throws Exception {
        try (Connection c = db.connect(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT count(*) FROM " + CrashPublisherMain.COMMITTED)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /** The event ids of every committed transaction. */
    private static Set<UUID> committedEvents(TestDatabase db) throws Exception {
        Set<UUID> out = new HashSet<>();
        try (Connection c = db.connect(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT event_id FROM " + CrashPublisherMain.COMMITTED)) {
            while (rs.next()) {
                out.add(rs.getObject(1, UUID.class));
            }
        }
        return out;
    }

    private static Set<UUID> delivered(List<TopicRecords.Delivery> deliveries) {
        Set<UUID> ids = new HashSet<>();
        deliveries.forEach(d -> ids.add(d.id()));
        return ids;
    }

    /**
     * The history of the run: every committed event an intent (ordered by its sequence number within its
     * aggregate: one writer thread commits them in that order), every record a delivery, the first delivery of
     * each event its application (a partition keeps one aggregate's records in order).
     */
    private static History.Report check(List<TopicRecords.Delivery> deliveries, TestDatabase db) throws Exception {
        History history = new History();
        try (Connection c = db.connect(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT event_id, aggregate_id, n FROM " + CrashPublisherMain.COMMITTED)) {
            while (rs.next()) {
                history.committed(rs.getObject(1, UUID.class), rs.getString(2), rs.getLong(3));
            }
        }
        Set<UUID> applied = new HashSet<>();
        for (TopicRecords.Delivery d : deliveries) {
            if (d.id() == null) {
                continue;
            }
            history.delivered(d.id());
            if (applied.add(d.id())) {
                history.applied(d.id(), d.aggregate());
            }
        }
        return history.check();
    }
}
