package dev.outboxkit.benchmarks;

import dev.outboxkit.benchmarks.scenarios.JmhHotPaths;
import dev.outboxkit.benchmarks.scenarios.KafkaLatencyFloor;
import dev.outboxkit.benchmarks.scenarios.KafkaProduceCeiling;
import dev.outboxkit.benchmarks.scenarios.NotifyCommitRatio;
import dev.outboxkit.benchmarks.scenarios.PgDrainCeiling;
import dev.outboxkit.benchmarks.scenarios.WriterTaxBaseline;
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
 */
public final class ScenarioCatalog {

    private ScenarioCatalog() {
    }

    public static List<Scenario> all() {
        return List.of(
                new PgDrainCeiling(),
                // the poller drain scenario goes here (poller_drain_eps), next to its ceiling
                new KafkaProduceCeiling(),
                // the CDC and stock Debezium drain scenarios go here (cdc_drain_eps, stock_debezium_eps)
                new WriterTaxBaseline(),
                // the writer scenario goes here (writer_outbox_tps, same TransferWorkload with an outbox hook)
                new NotifyCommitRatio(),
                // the consumer scenario goes here (consumer_eps, consumer_plain_eps)
                new KafkaLatencyFloor(),
                // the relay latency scenarios go here (poller_/cdc_ p50/p99 at 200 and 5000), then relay_rss_mb
                new JmhHotPaths());
    }
}
