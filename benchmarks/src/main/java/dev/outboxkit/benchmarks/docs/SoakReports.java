package dev.outboxkit.benchmarks.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Totals over the committed soak reports ({@code docs/soak/soak-*.md}, written by the reliability suite's
 * RandomizedFaultsTest), so that a page quotes them as {@code <!--fig:docs/soak#poll.events-->…<!--/fig-->}: the key
 * is the relay ({@code poll}, {@code cdc}, {@code cdc-wal}) and the figure ({@code reports}, {@code faults},
 * {@code events}, {@code lost}, {@code duplicate_effects}, {@code order_violations}), summed over its reports.
 */
final class SoakReports {

    private static final Pattern TITLE = Pattern.compile("^# Soak: randomized faults, seed \\d+(?:, (\\S+) relays)?",
            Pattern.MULTILINE);
    private static final Pattern FAULTS = Pattern.compile("^seed \\d+: (\\d+) fault\\(s\\) injected", Pattern.MULTILINE);

    private SoakReports() {
    }

    /** The figure {@code key} ({@code relay.figure}) summed over the reports in {@code directory}. */
    static long total(Path directory, String key) {
        int dot = key.indexOf('.');
        if (dot < 0) {
            throw new IllegalArgumentException("a soak total is named relay.figure, e.g. poll.events; got '" + key + "'");
        }
        String relay = key.substring(0, dot);
        String figure = key.substring(dot + 1);
        long total = 0;
        for (String report : reports(directory)) {
            Matcher title = TITLE.matcher(report);
            if (!title.find()) {
                throw new IllegalArgumentException("a soak report without its title line in " + directory);
            }
            if (!relay.equals(title.group(1) == null ? "poll" : title.group(1))) {
                continue;
            }
            total += switch (figure) {
                case "reports" -> 1;
                case "faults" -> number(report, FAULTS, figure);
                case "events" -> row(report, "events committed (intents)");
                case "lost" -> row(report, "lost");
                case "duplicate_effects" -> row(report, "duplicate effects");
                case "order_violations" -> orderViolations(report);
                default -> throw new IllegalArgumentException("no soak figure '" + figure + "': reports, faults,"
                        + " events, lost, duplicate_effects or order_violations");
            };
        }
        return total;
    }

    /** Of the consumer's first applications, and of the first publications where the report counts them too. */
    private static long orderViolations(String report) {
        // the earliest reports name one row "order violations"; later ones split applications and publications
        String applications = "order violations (first applications, per aggregate)";
        long applied = rowPattern(applications).matcher(report).find()
                ? row(report, applications) : row(report, "order violations");
        return applied + optionalRow(report, "order violations (first publications in each partition, per aggregate)");
    }

    private static long row(String report, String label) {
        return number(report, rowPattern(label), label);
    }

    private static long optionalRow(String report, String label) {
        Matcher m = rowPattern(label).matcher(report);
        return m.find() ? Long.parseLong(m.group(1)) : 0;
    }

    private static Pattern rowPattern(String label) {
        return Pattern.compile("^\\| " + Pattern.quote(label) + " \\| (\\d+) \\|", Pattern.MULTILINE);
    }

    private static long number(String report, Pattern pattern, String what) {
        Matcher m = pattern.matcher(report);
        if (!m.find()) {
            throw new IllegalArgumentException("a soak report without '" + what + "'");
        }
        return Long.parseLong(m.group(1));
    }

    private static List<String> reports(Path directory) {
        try (Stream<Path> files = Files.list(directory)) {
            return files.filter(f -> f.getFileName().toString().matches("soak-.*\\.md")).sorted().map(f -> {
                try {
                    return Files.readString(f);
                } catch (IOException e) {
                    throw new UncheckedIOException("cannot read " + f + ": " + e.getMessage(), e);
                }
            }).toList();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list " + directory + ": " + e.getMessage(), e);
        }
    }
}
