package dev.outboxkit.benchmarks;

import dev.outboxkit.benchmarks.scenarios.BacklogAfterOutage;
import dev.outboxkit.benchmarks.scenarios.CdcDrain;
import dev.outboxkit.benchmarks.scenarios.ConsumerThroughput;
import dev.outboxkit.benchmarks.scenarios.DebeziumCeilingDrain;
import dev.outboxkit.benchmarks.scenarios.DebeziumCeilingLatency;
import dev.outboxkit.benchmarks.scenarios.DualWriteLatencyFloor;
import dev.outboxkit.benchmarks.scenarios.CrashRecovery;
import dev.outboxkit.benchmarks.scenarios.Failover;
import dev.outboxkit.benchmarks.scenarios.JmhHotPaths;
import dev.outboxkit.benchmarks.scenarios.KafkaLatencyFloor;
import dev.outboxkit.benchmarks.scenarios.KafkaProduceCeiling;
import dev.outboxkit.benchmarks.scenarios.ModulithDrain;
import dev.outboxkit.benchmarks.scenarios.NamastackDrain;
import dev.outboxkit.benchmarks.scenarios.PeerWriterTax;
import dev.outboxkit.benchmarks.scenarios.NotifyCommitRatio;
import dev.outboxkit.benchmarks.scenarios.PgDrainCeiling;
import dev.outboxkit.benchmarks.scenarios.PollerDrain;
import dev.outboxkit.benchmarks.scenarios.PollerLoops;
import dev.outboxkit.benchmarks.scenarios.PollerPipeline;
import dev.outboxkit.benchmarks.scenarios.PollerTracingCost;
import dev.outboxkit.benchmarks.scenarios.RelayLatency;
import dev.outboxkit.benchmarks.scenarios.RelayRss;
import dev.outboxkit.benchmarks.scenarios.StockDebeziumDrain;
import dev.outboxkit.benchmarks.scenarios.WriterModeTax;
import dev.outboxkit.benchmarks.scenarios.WriterOutbox;
import java.util.List;

/**
 * Every scenario {@code benchmarks/run.sh} runs, in order. Within a repeat they run one after
 * the other in this order, so a ratio's two sides (a relay and its ceiling) should sit next to
 * each other here.
 *
 * <p>Adding a scenario: write one class implementing {@link Scenario} (in
 * {@code dev.outboxkit.benchmarks.scenarios}) and add one line below. The keys it declares leave
 * {@link MetricCatalog#PENDING} by themselves; ratios in {@link MetricCatalog#RATIOS} fill in as
 * soon as both sides are measured.
 *
 * <p>The backlog mode ({@link Sizes.Mode#BACKLOG}) runs {@link #backlog()} instead, and no other mode runs those:
 * {@link #forMode} is the one place that decides.
 */
public final class ScenarioCatalog {

    private ScenarioCatalog() {
    }

    /** The scenarios {@code mode} runs: {@link #backlog()} in the backlog mode, {@link #all()} in every other. */
    public static List<Scenario> forMode(Sizes.Mode mode) {
        return mode == Sizes.Mode.BACKLOG ? backlog() : all();
    }

    /** The backlog mode's scenarios: a huge backlog drained after an outage, the polling relay, then the CDC relay. */
    public static List<Scenario> backlog() {
        return List.of(new BacklogAfterOutage(BacklogAfterOutage.Kind.POLLER),
                new BacklogAfterOutage(BacklogAfterOutage.Kind.CDC));
    }

    /** Every scenario of the smoke, quick and full modes, in order. */
    public static List<Scenario> all() {
        return List.of(
                new PgDrainCeiling(),
                new PollerDrain(),
                new PollerTracingCost(),
                new PollerPipeline(),
                new PollerLoops(),
                new ModulithDrain(),
                new NamastackDrain(),
                new KafkaProduceCeiling(),
                new CdcDrain(),
                new DebeziumCeilingDrain(),
                new StockDebeziumDrain(),
                new WriterOutbox(),
                new PeerWriterTax(PeerWriterTax.Kind.MODULITH),
                new PeerWriterTax(PeerWriterTax.Kind.NAMASTACK),
                new WriterModeTax(),
                new NotifyCommitRatio(),
                new ConsumerThroughput(),
                new KafkaLatencyFloor(),
                new DualWriteLatencyFloor(),
                new RelayLatency(RelayLatency.Kind.POLLER),
                new RelayLatency(RelayLatency.Kind.CDC),
                new DebeziumCeilingLatency(),
                new RelayLatency(RelayLatency.Kind.MODULITH),
                new RelayLatency(RelayLatency.Kind.NAMASTACK),
                new RelayRss(),
                new CrashRecovery(CrashRecovery.Kind.POLLER),
                new CrashRecovery(CrashRecovery.Kind.CDC),
                new CrashRecovery(CrashRecovery.Kind.MODULITH),
                new CrashRecovery(CrashRecovery.Kind.NAMASTACK),
                new Failover(),
                new JmhHotPaths());
    }
}
