package dev.outboxkit.benchmarks.scenarios;

import dev.outboxkit.benchmarks.BenchContext;
import dev.outboxkit.benchmarks.LatencyProfile;
import dev.outboxkit.benchmarks.Measurements;
import dev.outboxkit.benchmarks.Metric;
import dev.outboxkit.benchmarks.MetricCatalog;
import dev.outboxkit.benchmarks.Scenario;
import dev.outboxkit.benchmarks.load.Await;
import dev.outboxkit.benchmarks.load.DbSampler;
import dev.outboxkit.benchmarks.load.EventIdReader;
import dev.outboxkit.benchmarks.load.KafkaAckObserver;
import dev.outboxkit.benchmarks.load.LatencyTracker;
import dev.outboxkit.benchmarks.load.ModulithPeer;
import dev.outboxkit.benchmarks.load.NamastackPeer;
import dev.outboxkit.benchmarks.load.OpenLoopDriver;
import dev.outboxkit.benchmarks.load.OutboxInsertTarget;
import dev.outboxkit.benchmarks.load.PeerApp;
import dev.outboxkit.benchmarks.load.PhaseCpu;
import dev.outboxkit.benchmarks.load.Relays;
import dev.outboxkit.benchmarks.load.SyntheticEvents;
import dev.outboxkit.core.EventIds;
import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.relay.Relay;
import dev.outboxkit.relay.cdc.CdcRelay;
import dev.outboxkit.testkit.TestDatabase;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code <relay>_p50_ms_at_<rate>}, {@code <relay>_p99_ms_at_<rate>}: commit→ack through a relay
 * with its default settings, open loop at each rate of the mode (200 and 5,000 events/s): writer
 * threads insert one event per transaction at fixed times ({@link OpenLoopDriver}), a consumer in
 * this JVM sees each record ({@link KafkaAckObserver}); both instants on one clock. One relay,
 * started on an empty table and ready before the load begins, serves the rates one after the other
 * (each with its own warm-up, excluded). The peers (Spring Modulith, namastack-outbox) are measured the same way:
 * their writer threads call the peer's {@code @Transactional} method that publishes one event, in this JVM.
 */
public final class RelayLatency implements Scenario {

    /** Which relay. */
    public enum Kind {
        POLLER("poller"), CDC("cdc"),
        /** The Spring Modulith peer: its own transactions publish the event, its externalizer sends it. */
        MODULITH("modulith"),
        /** The namastack-outbox peer: its own transactions schedule the record, its scheduler's handler sends it. */
        NAMASTACK("namastack");

        final String key;

        Kind(String key) {
            this.key = key;
        }

        boolean peer() {
            return this == MODULITH || this == NAMASTACK;
        }
    }

    private static final Logger log = LoggerFactory.getLogger(RelayLatency.class);
    /**
     * Writer threads of the open-loop generator. Each commits one event per transaction and waits for its commit's
     * flush, so the rate one thread offers is bounded by the commit latency: four threads committed at most about
     * 4,200 events/s on an idle 2-core machine, short of the 5,000 offered. Sixteen let PostgreSQL's group commit
     * share the flushes; the threads are idle unless the schedule hands them an event.
     */
    static final int WRITERS = 16;
    private final Kind system;

    public RelayLatency(Kind system) {
        this.system = system;
    }

    @Override
    public String name() {
        return system.key + "_latency";
    }

    @Override
    public List<Metric> metrics() {
        return switch (system) {
            case POLLER -> List.of(MetricCatalog.POLLER_P50_MS_AT_200, MetricCatalog.POLLER_P99_MS_AT_200, p50At5000(),
                    MetricCatalog.POLLER_P99_MS_AT_5000);
            case CDC -> List.of(MetricCatalog.CDC_P50_MS_AT_200, MetricCatalog.CDC_P99_MS_AT_200, p50At5000(),
                    MetricCatalog.CDC_P99_MS_AT_5000);
            case MODULITH -> List.of(MetricCatalog.MODULITH_P50_MS_AT_200, MetricCatalog.MODULITH_P99_MS_AT_200,
                    p50At5000(), MetricCatalog.MODULITH_P99_MS_AT_5000);
            case NAMASTACK -> List.of(MetricCatalog.NAMASTACK_P50_MS_AT_200, MetricCatalog.NAMASTACK_P99_MS_AT_200,
                    p50At5000(), MetricCatalog.NAMASTACK_P99_MS_AT_5000);
        };
    }

    private Metric p50At5000() {
        return Metric.of(LatencyProfile.key(system.key, "p50", 5000), "ms",
                "p50 commit→ack through " + MetricCatalog.systemLabel(system.key) + " at 5000 events/s offered (open loop)");
    }

    @Override
    public Measurements run(BenchContext context) throws Exception {
        TestDatabase db = context.newDatabase();
        String topic = context.uniqueTopic(system.key + "-latency");
        context.kafka().createTopic(topic, BacklogDrain.PARTITIONS);
        String bootstrap = context.kafka().bootstrapServers();
        int bytes = context.payloadBytes();
        Measurements m = new Measurements();
        if (system.peer()) {
            try (PeerApp peer = system == Kind.MODULITH ? ModulithPeer.start(db, bootstrap, topic)
                    : NamastackPeer.start(db, bootstrap, topic)) {
                OpenLoopDriver.TargetFactory targets = () -> (n, commit) -> {
                    UUID id = EventIds.next();
                    peer.publish(id, SyntheticEvents.aggregateId(n), n, SyntheticEvents.payload(n, bytes));
                    commit.done(id);
                };
                for (int rate : context.sizes().latencyRates()) {
                    m.latency(measure(context, db, topic, rate, targets, EventIdReader.JSON_ID_FIELD));
                    peer.betweenRates();
                }
            }
            return m;
        }
        Relay relay = system == Kind.POLLER
                ? Relays.poller(db, bootstrap, TopicRoute.of(topic), new SimpleMeterRegistry())
                : Relays.cdc(db, bootstrap, TopicRoute.of(topic), new SimpleMeterRegistry());
        try {
            relay.start();
            Await.until(name() + " relay ready", () -> relay.health().ready(), Duration.ofMinutes(2), 20,
                    () -> relay.health().live() ? null : "relay down: " + relay.health().detail());
            for (int rate : context.sizes().latencyRates()) {
                m.latency(measure(context, db, topic, rate, OutboxInsertTarget.factory(db, BacklogDrain.SCHEMA, bytes),
                        EventIdReader.HEADER));
            }
        } finally {
            relay.close();
            if (relay instanceof CdcRelay cdc) {
                db.dropReplicationSlot(cdc.slotName());
            }
        }
        return m;
    }

    private LatencyProfile measure(BenchContext context, TestDatabase db, String topic, int rate,
                                   OpenLoopDriver.TargetFactory targets, EventIdReader ids) throws Exception {
        LatencyTracker tracker = new LatencyTracker();
        // What the server did meanwhile: the relays name their sessions outboxkit-poll / -cdc…;
        // the peers do not name their own, so there every session of its database counts
        try (DbSampler server = DbSampler.start(context.postgres(), db, system.peer() ? "" : "outboxkit");
             KafkaAckObserver acks = KafkaAckObserver.start(context.kafka().bootstrapServers(), List.of(topic), tracker,
                     ids)) {
            PhaseCpu cpu = PhaseCpu.start(db);
            OpenLoopDriver.Result result = OpenLoopDriver.run(rate, context.sizes().warmup(),
                    context.sizes().latencyWindow(), context.sizes().ackTimeout(), WRITERS, targets, tracker, cpu::stop);
            String machine = cpu.report(PHASE);
            if (acks.failure() != null) {
                throw new IllegalStateException("the ack observer failed: " + acks.failure(), acks.failure());
            }
            // Whether the writers kept up: they never wait for the relay (open loop), so a committed rate below the offered
            // one is the writers' own shortfall (their commits and the CPU), not the relay's.
            writeEvidence(context, name(), rate, server.report(name() + " at " + rate + " events/s (repeat "
                    + context.repeat() + ")", tracker) + "\n" + writers(rate, result) + "\n" + machine);
            return result.profile(system.key);
        }
    }

    /** What {@link PhaseCpu} measures over: the schedule of one rate, until its last event is handed to a writer. */
    static final String PHASE = "the phase's schedule (warm-up and timed window, while the writers ran)";

    /** Whether the writers kept up with the schedule, as one Markdown line. */
    static String writers(int rate, OpenLoopDriver.Result result) {
        return String.format(java.util.Locale.ROOT, "Writers (%d threads, one insert per transaction): offered %d "
                + "events/s, committed %.0f events/s; the worst delay between an event's intended time and its writer "
                + "picking it up %.0f ms%n", WRITERS, rate, result.achievedRate(), result.maxLagMs());
    }

    /** What the machine did during a phase, beside the run's other scratch files (tmp/db-evidence/). */
    static void writeEvidence(BenchContext context, String scenario, int rate, String report) throws java.io.IOException {
        Path dir = Files.createDirectories(context.workDir().resolve("db-evidence"));
        Path file = dir.resolve(scenario + "-" + rate + "-r" + context.repeat() + ".md");
        Files.writeString(file, report);
        log.info("{}: what the database and the machine did during the phase at {} events/s: {}", scenario, rate, file);
    }
}
