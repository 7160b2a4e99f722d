package dev.outboxkit.devtools.demo;

import dev.outboxkit.cli.Main;
import dev.outboxkit.sql.Migrations;
import dev.outboxkit.testkit.EmbeddedKafka;
import dev.outboxkit.testkit.FailoverGap;
import dev.outboxkit.testkit.History;
import dev.outboxkit.testkit.JavaProcess;
import dev.outboxkit.testkit.OutboxTestkit;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestPostgres;
import dev.outboxkit.writer.OutboxWriter;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.TopicPartition;

/** One run of {@code outbox demo}: set up, run, check, report. */
public final class DemoRun {

    /** What the demo is asked to do. */
    public record Settings(String relay, int transfers, double transfersPerSecond, int clients, int accounts,
                           double lostAckRate, double doubleSendRate, long seed) {
    }

    static final String TOPIC = "outbox.event." + LedgerService.AGGREGATE;
    private static final long OPENING_BALANCE = 1_000_000;

    private final Settings settings;
    private final PrintWriter out;
    private final List<JavaProcess> relays = new ArrayList<>();
    /** The half-way kill: when, until the process was gone, and the work the killed relay held. */
    private volatile FailoverGap.Stop kill;

    public DemoRun(Settings settings, PrintWriter out) {
        this.settings = settings;
        this.out = out;
    }

    /** True when every invariant held. */
    public boolean run() throws Exception {
        out.printf("outbox demo: %d transfers (%d events) by %d clients, relay %s%n", settings.transfers(),
                settings.transfers() * 2, settings.clients(), settings.relay());
        out.println("starting PostgreSQL 17 and Kafka ...");
        out.flush();
        try (TestPostgres postgres = OutboxTestkit.startEmbeddedPostgres(0, true);
             EmbeddedKafka kafka = new EmbeddedKafka(1)) {
            TestDatabase ledgerDb = postgres.createDatabase("ledger");
            TestDatabase projectionDb = postgres.createDatabase("projection");
            try {
                return run(ledgerDb, projectionDb, kafka);
            } finally {
                relays.forEach(JavaProcess::close);
                ledgerDb.close();
                projectionDb.close();
            }
        }
    }

    private boolean run(TestDatabase ledgerDb, TestDatabase projectionDb, EmbeddedKafka kafka) throws Exception {
        Migrations.migrate(ledgerDb.dataSource(), Migrations.DEFAULT_SCHEMA);
        Migrations.migrate(projectionDb.dataSource(), Migrations.DEFAULT_SCHEMA);
        LedgerService.createSchema(ledgerDb.dataSource(), settings.accounts(), OPENING_BALANCE);
        ProjectionService.createSchema(projectionDb.dataSource(), ledgerDb.dataSource());
        kafka.createTopic(TOPIC, 8);

        History history = new History();
        Demo.Tally tally = new Demo.Tally();
        Recorder latency = new Recorder(3);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        var ledgerPool = ledgerDb.newPool(settings.clients() + 4);
        var projectionPool = projectionDb.newPool(4);
        LedgerService ledger = new LedgerService(ledgerPool, OutboxWriter.builder().build());

        startRelay(ledgerDb, kafka);
        ScheduledExecutorService progress = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "demo-progress");
            t.setDaemon(true);
            return t;
        });
        Instant started = Instant.now();
        try (ProjectionService projection = new ProjectionService(projectionPool, kafka.bootstrapServers(), TOPIC, history,
                latency, registry)) {
            projection.start();
            awaitAssignment(kafka, Duration.ofSeconds(120));
            progress.scheduleAtFixedRate(() -> {
                long published;
                try {
                    published = publishedRecords(kafka);
                } catch (Exception e) {
                    published = -1;
                }
                out.printf("  %5.1f s  transfers %d/%d  events written %d  published %d  applied %d  retries absorbed %d  relay %s%n",
                        Duration.between(started, Instant.now()).toMillis() / 1000.0, tally.transfers.get(),
                        settings.transfers(), tally.eventsWritten.get(), published, projection.applied(), tally.retriesAbsorbed.get(),
                        relays.get(relays.size() - 1).isAlive() ? "running (pid " + relays.get(relays.size() - 1).pid() + ")" : "down");
                out.flush();
            }, 2, 2, TimeUnit.SECONDS);

            new Demo(ledger, history, tally, settings.accounts(), settings.lostAckRate(), settings.doubleSendRate())
                    .run(settings.transfers(), settings.clients(), settings.transfersPerSecond(), settings.seed(),
                            () -> restartRelay(ledgerDb, kafka), out);
            Instant writersDone = Instant.now();

            // Drain: everything committed must be applied; give up (and fail) after two minutes without progress.
            long lastSeen = -1;
            Instant lastProgress = Instant.now();
            while (projection.applied() < tally.eventsWritten.get()
                    && Duration.between(lastProgress, Instant.now()).toSeconds() < 120) {
                if (projection.applied() != lastSeen) {
                    lastSeen = projection.applied();
                    lastProgress = Instant.now();
                }
                TimeUnit.MILLISECONDS.sleep(100);
            }
            progress.shutdownNow();
            Instant drained = projection.lastApplied() == null ? Instant.now() : projection.lastApplied();
            // Let redeliveries that were already in flight arrive before the books are closed.
            TimeUnit.MILLISECONDS.sleep(500);
            long outOfOrder = projection.outOfOrder();
            projection.close();
            return report(history.check(), tally, registry, latency.getIntervalHistogram(), outOfOrder,
                    Duration.between(started, drained), Duration.between(started, writersDone), ledgerPool, projectionPool, kafka);
        } finally {
            progress.shutdownNow();
            ledgerPool.close();
            projectionPool.close();
        }
    }

    /** Waits until the projection's group owns partitions, so latency counts from a running consumer. */
    private static void awaitAssignment(EmbeddedKafka kafka, Duration timeout) throws Exception {
        Instant deadline = Instant.now().plus(timeout);
        try (Admin admin = kafka.admin()) {
            while (Instant.now().isBefore(deadline)) {
                org.apache.kafka.clients.admin.ConsumerGroupDescription group;
                try {
                    group = admin.describeConsumerGroups(List.of(ProjectionService.GROUP)).all().get(30, TimeUnit.SECONDS)
                            .get(ProjectionService.GROUP);
                } catch (java.util.concurrent.ExecutionException e) {
                    // Kafka 4 answers "not found" until the consumer's first join reached the coordinator
                    if (!(e.getCause() instanceof org.apache.kafka.common.errors.GroupIdNotFoundException)) {
                        throw e;
                    }
                    TimeUnit.MILLISECONDS.sleep(100);
                    continue;
                }
                boolean assigned = group.members().stream().anyMatch(m -> !m.assignment().topicPartitions().isEmpty());
                if (assigned) {
                    return;
                }
                TimeUnit.MILLISECONDS.sleep(100);
            }
        }
        throw new IllegalStateException("the projection's consumer group got no partitions within " + timeout);
    }

    private void startRelay(TestDatabase ledgerDb, EmbeddedKafka kafka) {
        List<String> args = new ArrayList<>(List.of("relay", settings.relay(), "--http-port", "-1", "--lease-duration", "PT3S",
                "--instance-id", "demo-relay-" + (relays.size() + 1)));
        Map<String, String> env = new HashMap<>();
        env.put("OUTBOX_JDBC_URL", ledgerDb.jdbcUrl());
        env.put("OUTBOX_USER", ledgerDb.user());
        env.put("OUTBOX_PASSWORD", ledgerDb.password());
        env.put("OUTBOX_BOOTSTRAP_SERVERS", kafka.bootstrapServers());
        JavaProcess relay = JavaProcess.start("demo-relay-" + settings.relay(), Main.class, args, List.of(), env);
        relays.add(relay);
        if (!relay.awaitOutput("relay " + settings.relay() + " started", Duration.ofSeconds(120))) {
            throw new IllegalStateException("the relay did not start; its output:\n" + relay.output());
        }
    }

    /**
     * Half-way: a second relay starts (for {@code cdc} a standby on the slot), then the first, which holds the work,
     * is killed -9, and the second takes it over: a failover, timed from Kafka in the report ({@link FailoverGap}).
     */
    private void restartRelay(TestDatabase ledgerDb, EmbeddedKafka kafka) {
        JavaProcess current = relays.get(relays.size() - 1);
        String currentId = "demo-relay-" + relays.size();
        startRelay(ledgerDb, kafka);
        out.printf("  half-way: a second relay is up (pid %d); kill -9 the relay (pid %d) that holds the work%n",
                relays.get(relays.size() - 1).pid(), current.pid());
        out.flush();
        try {
            Set<String> work = work(ledgerDb, currentId);
            long signalMs = System.currentTimeMillis();
            current.kill9();
            // a killed process sends nothing after the signal: every later record is the survivor's
            kill = new FailoverGap.Stop(signalMs, signalMs, work);
        } catch (SQLException e) {
            throw new IllegalStateException("could not read which accounts the relay " + currentId + " publishes", e);
        }
    }

    /** The accounts whose events relay {@code instanceId} publishes now: all for cdc, those of its partitions for poll. */
    private Set<String> work(TestDatabase ledgerDb, String instanceId) throws SQLException {
        Set<String> accounts = new HashSet<>();
        try (Connection c = ledgerDb.connect(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT id FROM account")) {
            while (rs.next()) {
                accounts.add(rs.getString(1));
            }
            return settings.relay().equals("cdc") ? accounts
                    : FailoverGap.heldByPoller(c, instanceId, LedgerService.AGGREGATE, accounts);
        }
    }

    private boolean report(History.Report check, Demo.Tally tally, SimpleMeterRegistry registry, Histogram latency,
                           long outOfOrder, Duration endToEnd, Duration writing, javax.sql.DataSource ledger,
                           javax.sql.DataSource projection, EmbeddedKafka kafka) throws Exception {
        long published = publishedRecords(kafka);
        long duplicatesAbsorbed = (long) counter(registry, "outbox.consumer.duplicates");
        Map<String, long[]> ledgerBooks = books(ledger, "account");
        Map<String, long[]> projectionBooks = books(projection, "account_balance");
        long mismatched = ledgerBooks.entrySet().stream()
                .filter(e -> !java.util.Arrays.equals(e.getValue(), projectionBooks.get(e.getKey()))).count();
        long ledgerTotal = ledgerBooks.values().stream().mapToLong(v -> v[0]).sum();
        long projectionTotal = projectionBooks.values().stream().mapToLong(v -> v[0]).sum();
        boolean booksAgree = mismatched == 0 && ledgerBooks.size() == projectionBooks.size();

        out.println();
        out.println("outbox demo report");
        out.printf("  requests sent                 %,d%n", tally.requests.get());
        out.printf("  transfers executed            %,d%n", tally.transfers.get());
        out.printf("  lost responses (retried)      %,d%n", tally.lostAcks.get());
        out.printf("  double sends                  %,d%n", tally.doubleSends.get());
        out.printf("  retries absorbed by keys      %,d  (replayed, not executed again; %,d '409 in progress' answers)%n",
                tally.retriesAbsorbed.get(), tally.inProgressAnswers.get());
        out.printf("  events written                %,d%n", tally.eventsWritten.get());
        out.printf("  records published             %,d  (%,d more than written: the relay was killed -9 once)%n",
                published, published - tally.eventsWritten.get());
        out.printf("  duplicates absorbed           %,d  (consumer-dedupe skipped them by event id)%n", duplicatesAbsorbed);
        out.printf("  effects applied               %,d%n", check.applied());
        out.printf("  lost                          %,d%n", check.lost());
        out.printf("  applied twice                 %,d%n", check.duplicateEffects());
        out.printf("  unexpected                    %,d%n", check.unexpected());
        out.printf("  out of order                  %,d  (checker) / %,d (projection version chain)%n",
                check.orderViolations(), outOfOrder);
        out.printf("  ledger vs projection          %s  (total %,d vs %,d, %d accounts differ)%n",
                booksAgree ? "EQUAL" : "DIFFERENT", ledgerTotal, projectionTotal, mismatched);
        double seconds = endToEnd.toMillis() / 1000.0;
        out.printf("  throughput                    %,.0f events/s end to end (%,.1f s, writers %,.1f s)%n",
                check.applied() / Math.max(seconds, 0.001), seconds, writing.toMillis() / 1000.0);
        out.printf("  latency commit -> applied     p50 %.1f ms, p99 %.1f ms, max %.1f ms (includes the failover)%n",
                latency.getValueAtPercentile(50) / 1000.0, latency.getValueAtPercentile(99) / 1000.0,
                latency.getMaxValue() / 1000.0);
        if (kill != null) {
            FailoverGap.Gap gap = FailoverGap.measure(FailoverGap.readTopic(kafka.bootstrapServers(), TOPIC), kill);
            out.printf("  failover gap                  %,d ms from the kill -9 to the survivor's first record of the"
                    + " killed relay's work; worst event delay around it %,d ms (Kafka timestamp - createdAt)%n",
                    gap.firstRecordMs(), gap.worstDelayMs());
        }
        boolean ok = check.ok() && outOfOrder == 0 && booksAgree && check.applied() == tally.eventsWritten.get();
        out.println(ok ? "RESULT: OK, every invariant held" : "RESULT: FAILED, see above");
        out.flush();
        return ok;
    }

    private static double counter(SimpleMeterRegistry registry, String name) {
        return registry.find(name).counters().stream().mapToDouble(Counter::count).sum();
    }

    private static long publishedRecords(EmbeddedKafka kafka) throws Exception {
        try (Admin admin = kafka.admin()) {
            var description = admin.describeTopics(List.of(TOPIC)).allTopicNames().get(30, TimeUnit.SECONDS).get(TOPIC);
            Map<TopicPartition, OffsetSpec> request = new HashMap<>();
            description.partitions().forEach(p -> request.put(new TopicPartition(TOPIC, p.partition()), OffsetSpec.latest()));
            return admin.listOffsets(request).all().get(30, TimeUnit.SECONDS).values().stream()
                    .mapToLong(r -> r.offset()).sum();
        }
    }

    private static Map<String, long[]> books(javax.sql.DataSource ds, String table) throws SQLException {
        Map<String, long[]> out = new HashMap<>();
        try (Connection c = ds.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT id, balance, version FROM " + table)) {
            while (rs.next()) {
                out.put(rs.getString(1), new long[] {rs.getLong(2), rs.getLong(3)});
            }
        }
        return out;
    }
}
