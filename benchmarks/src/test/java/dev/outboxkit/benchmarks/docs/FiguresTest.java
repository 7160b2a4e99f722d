package dev.outboxkit.benchmarks.docs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxkit.benchmarks.Metric;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** How figures are rendered from and checked against their sources, and what the page rules count. */
class FiguresTest {

    @TempDir
    Path repository;

    private Figures figures() throws Exception {
        Files.createDirectories(repository.resolve("results"));
        Files.writeString(repository.resolve("results/run.json"),
                "{\"drain_eps\": 57218.77, \"p99_ms\": 15.391, \"ratio\": 0.8989, \"nested\": {\"ms\": 3.339}}");
        Files.writeString(repository.resolve("evidence.md"), "| resume after a crash | 0.38–0.91 s |\n| other | 7 s |\n");
        return new Figures(repository, Map.of(
                "ratio", Metric.of("ratio", "ratio", "a ratio").atLeast(0.8),
                "p99_ms", Metric.of("p99_ms", "ms", "a latency").atMost(25),
                "drain_eps", Metric.of("drain_eps", "events/s", "a rate")));
    }

    @Test
    void rendersValuesAsTheReportPrintsThemAndTargetsFromTheCatalog() throws Exception {
        String page = "drain <!--fig:results/run.json#drain_eps-->?<!--/fig--> events/s,"
                + " p99 <!--fig:results/run.json#p99_ms-->?<!--/fig--> ms (<!--fig:results/run.json#p99_ms:2-->?<!--/fig-->),"
                + " <!--fig:results/run.json#/nested/ms-->?<!--/fig-->, ratio <!--fig:results/run.json#ratio-->?<!--/fig-->"
                + " (target <!--fig:target#ratio-->?<!--/fig-->, <!--fig:target#p99_ms-->?<!--/fig-->)";
        String rendered = figures().render(page);
        assertThat(rendered).isEqualTo("drain <!--fig:results/run.json#drain_eps-->57,219<!--/fig--> events/s,"
                + " p99 <!--fig:results/run.json#p99_ms-->15.4<!--/fig--> ms (<!--fig:results/run.json#p99_ms:2-->15.39<!--/fig-->),"
                + " <!--fig:results/run.json#/nested/ms-->3.34<!--/fig-->, ratio <!--fig:results/run.json#ratio-->0.899<!--/fig-->"
                + " (target <!--fig:target#ratio-->≥ 0.8<!--/fig-->, <!--fig:target#p99_ms-->≤ 25 ms<!--/fig-->)");
        assertThat(figures().problems("page.md", rendered)).isEmpty();
    }

    @Test
    void aFigureCopiedByHandThatDriftedIsNamedWithItsSource() throws Exception {
        assertThat(figures().problems("page.md", "one\nthe drain <!--fig:results/run.json#drain_eps-->45,968<!--/fig-->"))
                .singleElement().asString()
                .contains("page.md:2", "'45,968'", "results/run.json#drain_eps", "'57,219'", "docs/build-readme.sh");
    }

    @Test
    void evidenceFiguresAreCheckedAgainstTheLineTheirLabelNames() throws Exception {
        Figures figures = figures();
        assertThat(figures.problems("p.md", "<!--fig:evidence.md#resume-->0.38–0.91 s<!--/fig-->")).isEmpty();
        assertThat(figures.problems("p.md", "<!--fig:evidence.md#resume-->7 s<!--/fig-->"))
                .singleElement().asString().contains("no line of evidence.md holds both 'resume'", "and '7 s'");
        assertThat(figures.problems("p.md", "<!--fig:evidence.md#resume crash-->0.38–0.91 s<!--/fig-->")).isEmpty();
        assertThat(figures.problems("p.md", "<!--fig:evidence.md#crash resume-->0.38–0.91 s<!--/fig-->")).hasSize(1);
        assertThat(figures.render("<!--fig:evidence.md#resume-->0.38–0.91 s<!--/fig-->"))
                .isEqualTo("<!--fig:evidence.md#resume-->0.38–0.91 s<!--/fig-->");
    }

    @Test
    void soakTotalsAreSummedOverTheReportsOfTheirRelay() throws Exception {
        Files.createDirectories(repository.resolve("soak"));
        Files.writeString(repository.resolve("soak/soak-1-seed7.md"), report("# Soak: randomized faults, seed 7", 239850, 77, false)
                .replace("order violations (first applications, per aggregate)", "order violations"));
        Files.writeString(repository.resolve("soak/soak-2-seed9.md"), report("# Soak: randomized faults, seed 9, poll relays", 1000000, 23, true));
        Files.writeString(repository.resolve("soak/soak-3-seed9-cdc.md"), report("# Soak: randomized faults, seed 9, cdc relays", 5, 1, true));
        Files.writeString(repository.resolve("soak/notes.txt"), "not a report");
        String page = "<!--fig:soak#poll.events-->?<!--/fig--> events, <!--fig:soak#poll.faults-->?<!--/fig--> faults,"
                + " <!--fig:soak#poll.reports-->?<!--/fig--> reports, lost <!--fig:soak#poll.lost-->?<!--/fig-->,"
                + " order <!--fig:soak#poll.order_violations-->?<!--/fig-->; cdc <!--fig:soak#cdc.events-->?<!--/fig-->";
        assertThat(figures().render(page)).isEqualTo("<!--fig:soak#poll.events-->1,239,850<!--/fig--> events,"
                + " <!--fig:soak#poll.faults-->100<!--/fig--> faults, <!--fig:soak#poll.reports-->2<!--/fig--> reports,"
                + " lost <!--fig:soak#poll.lost-->0<!--/fig-->, order <!--fig:soak#poll.order_violations-->3<!--/fig-->;"
                + " cdc <!--fig:soak#cdc.events-->5<!--/fig-->");
        assertThat(figures().problems("p.md", "<!--fig:soak#poll.speed-->1<!--/fig-->"))
                .singleElement().asString().contains("no soak figure 'speed'");
    }

    private static String report(String title, long events, int faults, boolean publicationOrder) {
        return title + "\n\n| figure | value |\n|---|---|\n| events committed (intents) | " + events + " |\n| lost | 0 |\n"
                + "| duplicate effects | 0 |\n| order violations (first applications, per aggregate) | 1 |\n"
                + (publicationOrder ? "| order violations (first publications in each partition, per aggregate) | 1 |\n" : "")
                + "\n## Faults injected\n\nseed 7: " + faults + " fault(s) injected and healed {kill9=1}\n";
    }

    @Test
    void aMarkerInInlineCodeIsAnExampleNotAFigure() throws Exception {
        String page = "write `<!--fig:results/run.json#drain_eps-->…<!--/fig-->` and run the tool";
        assertThat(Figures.markers(page)).isEmpty();
        assertThat(figures().render(page)).isEqualTo(page);
        assertThat(figures().problems("p.md", page)).isEmpty();
    }

    @Test
    void unknownKeysSourcesAndTargetsAreProblems() throws Exception {
        Figures figures = figures();
        assertThat(figures.problems("p.md", "<!--fig:results/run.json#nope-->1<!--/fig-->"))
                .singleElement().asString().contains("has no number under 'nope'");
        assertThat(figures.problems("p.md", "<!--fig:results/missing.json#x-->1<!--/fig-->"))
                .singleElement().asString().contains("is not a file of the repository");
        assertThat(figures.problems("p.md", "<!--fig:../outside.md#x-->1<!--/fig-->"))
                .singleElement().asString().contains("is not a file of the repository");
        assertThat(figures.problems("p.md", "<!--fig:target#drain_eps-->≥ 1<!--/fig-->"))
                .singleElement().asString().contains("defines no target for 'drain_eps'");
    }

    @Test
    void pageRulesFindWorkHistoryLongLinesAndDatedSections() {
        String notebook = "# Page\n\nWhat you get.\n\n## A run on 2026-12-01\n\nIt was slow.\nThen fast.\n\n"
                + "## Reference\n\nStop 12 fixed it.\n" + "x".repeat(201) + "\n| " + "y".repeat(300) + " |\n"
                + "```\n" + "z".repeat(300) + "\n```\n";
        ReferencePages.Measure measure = ReferencePages.measure(notebook);
        assertThat(measure.prose()).isEqualTo(9);
        assertThat(measure.dated()).isEqualTo(3); // the dated heading and the two lines under it
        assertThat(ReferencePages.problems("p.md", notebook))
                .anySatisfy(p -> assertThat(p).contains("p.md:12", "'Stop 12'"))
                .anySatisfy(p -> assertThat(p).contains("p.md:13", "201 characters"))
                .anySatisfy(p -> assertThat(p).contains("3 of 9 prose lines (33 %)"))
                .hasSize(3);
    }

    @Test
    void commentsAreFoundWhereJavaHasThem() {
        assertThat(ReferencePages.comment("    // issue 30: why")).isEqualTo("// issue 30: why");
        assertThat(ReferencePages.comment("     * at load 3.5")).isEqualTo("* at load 3.5");
        assertThat(ReferencePages.comment("int x = 1; // stop 4")).isEqualTo(" // stop 4");
        assertThat(ReferencePages.comment("String s = \"a // b\";")).isNull();
        assertThat(ReferencePages.comment("int x = 1;")).isNull();
    }
}
