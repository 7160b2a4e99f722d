package dev.outboxkit.benchmarks.internal;

import dev.outboxkit.benchmarks.Numbers;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The report's side-by-side table: the same measurements for outboxkit's two relays and the peers a Java team
 * would pick instead, from the keys of this run. A cell whose key the system has no counterpart for is "–"; one
 * whose key was not measured says so; peers that cannot run on these machines are named, with the reason.
 */
final class PeerTable {

    /** Columns: outboxkit's polling relay, its CDC relay, stock Debezium, Spring Modulith, namastack-outbox. */
    private static final List<String> SYSTEMS = List.of("outboxkit polling relay", "outboxkit CDC relay",
            "stock Debezium (EventRouter)", "Spring Modulith (JDBC registry + Kafka)",
            "namastack-outbox (JDBC store + Kafka handler)");

    /** One measurement: its label and the key per column (null: no counterpart). */
    private record Line(String label, String unit, List<String> keys) {
        Line(String label, String unit, String... keys) {
            this(label, unit, Arrays.asList(keys));
        }
    }

    private static final List<Line> LINES = List.of(
            new Line("backlog drain", "events/s", "poller_drain_eps", "cdc_drain_eps", "stock_debezium_eps",
                    "modulith_drain_eps", "namastack_drain_eps"),
            new Line("commit→ack p50 at 200/s", "ms", "poller_p50_ms_at_200", "cdc_p50_ms_at_200", null,
                    "modulith_p50_ms_at_200", "namastack_p50_ms_at_200"),
            new Line("commit→ack p99 at 200/s", "ms", "poller_p99_ms_at_200", "cdc_p99_ms_at_200", null,
                    "modulith_p99_ms_at_200", "namastack_p99_ms_at_200"),
            new Line("commit→ack p50 at 5,000/s", "ms", "poller_p50_ms_at_5000", "cdc_p50_ms_at_5000", null,
                    "modulith_p50_ms_at_5000", "namastack_p50_ms_at_5000"),
            new Line("commit→ack p99 at 5,000/s", "ms", "poller_p99_ms_at_5000", "cdc_p99_ms_at_5000", null,
                    "modulith_p99_ms_at_5000", "namastack_p99_ms_at_5000"),
            new Line("writer cost: tx/s with the event ÷ without (8 clients)", "ratio", "writer_tax_ratio",
                    "writer_tax_ratio", null, "modulith_writer_tax_ratio",
                    "namastack_writer_tax_ratio"),
            new Line("crash: events committed before kill -9", "events", "poller_crash_committed",
                    "cdc_crash_committed", null, "modulith_crash_committed",
                    "namastack_crash_committed"),
            new Line("crash: events lost", "events", "poller_crash_lost", "cdc_crash_lost", null, "modulith_crash_lost",
                    "namastack_crash_lost"),
            new Line("crash: duplicate deliveries", "events", "poller_crash_duplicates", "cdc_crash_duplicates", null,
                    "modulith_crash_duplicates", "namastack_crash_duplicates"),
            new Line("crash: per-aggregate order violations", "events", "poller_crash_order_violations",
                    "cdc_crash_order_violations", null, "modulith_crash_order_violations",
                    "namastack_crash_order_violations"));

    private PeerTable() {
    }

    static String render(Report report) {
        StringBuilder md = new StringBuilder("\n## Peers side by side (same machine, same run, same work)\n\n");
        md.append("| measurement | unit | ").append(String.join(" | ", SYSTEMS)).append(" |\n");
        md.append("|---|---|").append("---:|".repeat(SYSTEMS.size())).append('\n');
        for (Line line : LINES) {
            List<String> cells = new ArrayList<>();
            for (String key : line.keys()) {
                cells.add(cell(report, key));
            }
            md.append("| ").append(line.label()).append(" | ").append(line.unit()).append(" | ")
                    .append(String.join(" | ", cells)).append(" |\n");
        }
        md.append("\nThe writer cost of both relays is the one writer's (`writer_tax_ratio`). The crash runs kill the"
                + " process that writes and publishes (SIGKILL) mid-run, restart it, and compare what committed with"
                + " what Kafka holds (testkit `History`). Not measured yet: **gruelbox transaction-outbox**.\n");
        return md.toString();
    }

    private static String cell(Report report, String key) {
        if (key == null) {
            return "–";
        }
        Row row = report.row(key);
        return row == null || row.stat() == null ? "not measured" : Numbers.format(row.stat().median());
    }
}
