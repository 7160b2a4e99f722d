package dev.outboxkit.benchmarks;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * {@code benchmarks/run.sh} runs this. Options:
 * <ul>
 *   <li>{@code --quick} or {@code --mode smoke|quick|full|backlog} (default full); {@code backlog} runs only the
 *       backlog-after-an-outage scenarios ({@link ScenarioCatalog#backlog()}), which no other mode runs</li>
 *   <li>{@code --out DIR} where latest.json, latest.md and the charts go (default benchmarks/results; the backlog
 *       mode writes into {@code DIR/backlog}, so it never replaces the other modes' reports)</li>
 *   <li>{@code --backlog-events N} override the mode's backlog size (the backlog mode's 10,000,000 events, for a
 *       short trial run)</li>
 *   <li>{@code --only name,name} run only these scenarios (names as in the log); the other keys are reported missing</li>
 *   <li>{@code --repeats N} override the mode's repeat counts: N repeats of every scenario, the headline ones
 *       included</li>
 * </ul>
 * Exit status: 0 when the reports were written (whatever the verdicts), 2 for a usage error,
 * 1 when the run itself failed.
 */
public final class BenchmarkMain {

    private BenchmarkMain() {
    }

    public static void main(String[] args) {
        Sizes sizes;
        Path out = Path.of("benchmarks", "results");
        Set<String> only = new LinkedHashSet<>();
        try {
            Sizes.Mode mode = Sizes.Mode.FULL;
            Integer repeats = null;
            Integer backlogEvents = null;
            for (int i = 0; i < args.length; i++) {
                switch (args[i]) {
                    case "--quick" -> mode = Sizes.Mode.QUICK;
                    case "--mode" -> mode = Sizes.Mode.parse(value(args, ++i, "--mode"));
                    case "--out" -> out = Path.of(value(args, ++i, "--out"));
                    case "--only" -> only.addAll(Arrays.asList(value(args, ++i, "--only").split(",")));
                    case "--repeats" -> repeats = Integer.parseInt(value(args, ++i, "--repeats"));
                    case "--backlog-events" -> backlogEvents = Integer.parseInt(value(args, ++i, "--backlog-events"));
                    default -> throw new IllegalArgumentException("unknown option " + args[i]
                            + "; use --quick, --mode smoke|quick|full|backlog, --out DIR, --only a,b, --repeats N,"
                            + " --backlog-events N");
                }
            }
            sizes = Sizes.of(mode);
            if (repeats != null) {
                sizes = sizes.withRepeats(repeats);
            }
            if (backlogEvents != null) {
                sizes = sizes.withBacklogEvents(backlogEvents);
            }
            if (mode == Sizes.Mode.BACKLOG) {
                out = out.resolve("backlog");
            }
        } catch (IllegalArgumentException e) {
            System.err.println("benchmarks: " + e.getMessage());
            System.exit(2);
            return;
        }
        List<Scenario> scenarios = ScenarioCatalog.forMode(sizes.mode());
        if (!only.isEmpty()) {
            Set<String> known = scenarios.stream().map(Scenario::name).collect(Collectors.toSet());
            for (String name : only) {
                if (!known.contains(name)) {
                    System.err.println("benchmarks: --only " + name + " is not a scenario; known: " + known);
                    System.exit(2);
                }
            }
            scenarios = scenarios.stream().filter(s -> only.contains(s.name())).toList();
        }
        try {
            BenchmarkRunner.Outputs outputs = BenchmarkRunner.run(sizes, scenarios, out);
            System.out.println("results: " + outputs.markdown().toAbsolutePath());
            System.exit(0);
        } catch (Exception e) {
            System.err.println("benchmarks: the run failed: " + e);
            e.printStackTrace();
            System.exit(1);
        }
    }

    private static String value(String[] args, int i, String option) {
        if (i >= args.length) {
            throw new IllegalArgumentException(option + " needs a value");
        }
        return args[i];
    }
}
