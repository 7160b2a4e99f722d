package dev.outboxkit.benchmarks.internal;

import dev.outboxkit.benchmarks.LatencyProfile;
import dev.outboxkit.benchmarks.Numbers;
import dev.outboxkit.benchmarks.Sizes;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Locale;
import java.util.Map;

/** {@code latest.md}: method and machine, the results table, latency detail, what is missing, the charts. */
public final class MarkdownReport {

    private MarkdownReport() {
    }

    public static String render(Report report, Map<String, String> charts) {
        StringBuilder md = new StringBuilder();
        md.append("# outboxkit benchmarks\n\n");
        md.append("- **Run:** `").append(report.mode()).append("` mode, ")
                .append(DateTimeFormatter.ofPattern("uuuu-MM-dd HH:mm 'UTC'").withZone(ZoneOffset.UTC).format(report.date()))
                .append(", ").append(repeats(report)).append(", payloads ").append(payloads(report)).append(", ")
                .append(Math.round(report.durationSeconds())).append(" s in all\n");
        Machine m = report.machine();
        md.append("- **Machine:** ").append(m.cores()).append(" cores (").append(m.cpu()).append("), ")
                .append(String.format(Locale.ROOT, "%.1f", m.memoryGib())).append(" GiB memory, ").append(m.os())
                .append("; load average ").append(m.loadAverage()).append(" at the start, ")
                .append(report.loadAtEnd()).append(" at the end\n");
        md.append("- **Versions:** ");
        md.append(String.join(", ", report.versions().entrySet().stream()
                .map(e -> e.getKey() + " " + e.getValue()).toList())).append('\n');
        md.append("- **Method:** ").append(Report.METHOD).append('\n');
        if (busy(m.loadAverage(), m.cores()) || busy(report.loadAtEnd(), m.cores())) {
            md.append("- **Warning:** the machine was busier than its ").append(m.cores())
                    .append(" cores (load average above it): other work competed with this run, so absolute numbers"
                            + " are low and noisy; compare the same-run ratios.\n");
        }
        md.append('\n');

        md.append("| metric | value | unit | spread (min – max) | target | verdict |\n");
        md.append("|---|---:|---|---|---|---|\n");
        for (Row row : report.rows()) {
            md.append("| `").append(row.metric().key()).append("` | ");
            if (row.stat() == null) {
                md.append("— | ").append(row.metric().unit()).append(" | | ");
            } else {
                Stat s = row.stat();
                md.append(Numbers.format(s.median())).append(" | ").append(row.metric().unit()).append(" | ");
                md.append(s.count() == 1 ? "n=1" : Numbers.format(s.min()) + " – " + Numbers.format(s.max()) + " (n=" + s.count() + ")");
                md.append(" | ");
            }
            md.append(row.metric().target() == null ? "" : row.metric().target().toString()).append(" | ");
            md.append(switch (row.verdict()) {
                case PASS -> "pass";
                case UNSTEADY -> "**unsteady** (a repeat lies more than "
                        + Math.round(row.metric().target().steadiness() * 100) + " % from the median)";
                case FAIL -> "**misses target**";
                case NO_TARGET -> "";
                case MISSING -> "not measured";
            }).append(" |\n");
        }

        if (!report.latencies().isEmpty()) {
            md.append("\n## Latency, commit → ack (ms, open loop)\n\n");
            md.append("| system | offered /s | achieved /s | events | lost | p50 | p90 | p99 | p99.9 | max |\n");
            md.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
            for (LatencyProfile p : report.latencies()) {
                md.append("| ").append(p.system()).append(" | ").append(p.rate()).append(" | ")
                        .append(Numbers.format(p.achievedRate())).append(" | ").append(p.count()).append(" | ")
                        .append(p.lost()).append(" | ").append(Numbers.format(p.p50())).append(" | ")
                        .append(Numbers.format(p.p90())).append(" | ").append(Numbers.format(p.p99())).append(" | ")
                        .append(Numbers.format(p.p999())).append(" | ").append(Numbers.format(p.max())).append(" |\n");
            }
        }

        if (!Sizes.Mode.BACKLOG.label().equals(report.mode())) { // the backlog mode measures no peer
            md.append(PeerTable.render(report));
        }

        Map<String, String> missing = report.missing();
        if (!missing.isEmpty()) {
            md.append("\n## Not measured in this run\n\n");
            missing.forEach((key, reason) -> md.append("- `").append(key).append("`: ").append(reason).append('\n'));
        }

        md.append("\n## Meaning of each key\n\n");
        for (Row row : report.rows()) {
            md.append("- `").append(row.metric().key()).append("` (").append(row.metric().unit()).append("): ")
                    .append(row.metric().meaning()).append('\n');
        }

        if (!charts.isEmpty()) {
            md.append("\n## Charts\n\n");
            charts.forEach((file, title) -> md.append("![").append(title).append("](").append(file).append(")\n\n"));
        }
        return md.toString();
    }

    /** True when the 1-minute load average exceeds the core count. */
    static boolean busy(String loadAverage, int cores) {
        try {
            return Double.parseDouble(loadAverage.split(" ")[0]) > cores;
        } catch (NumberFormatException e) {
            return false;
        }
    }

    /** {@link Report#repeatsLabel()}, naming the headline scenarios when they ran more often than the rest. */
    static String repeats(Report report) {
        if (report.headlineRepeats() == report.repeats() || report.headlineScenarios().isEmpty()) {
            return report.repeatsLabel();
        }
        return report.repeatsLabel() + " (scenarios "
                + String.join(", ", report.headlineScenarios().stream().map(n -> "`" + n + "`").toList()) + ")";
    }

    private static String payloads(Report report) {
        return String.join(" and ", report.payloadSizes().stream().map(b -> b % 1024 == 0 ? b / 1024 + " KB" : b + " B").toList());
    }

    public static void write(Report report, Map<String, String> charts, Path file) throws IOException {
        Files.writeString(file, render(report, charts), StandardCharsets.UTF_8);
    }
}
