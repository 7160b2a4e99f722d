package dev.outboxkit.benchmarks.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The repository's reference pages against their rules: every marked figure equals its source, no page reads as a
 * notebook, and no main source comment carries a lab note. Each failure names the file, the line and the fix.
 */
class ReferencePagesTest {

    private static final Path REPOSITORY = Path.of("..").toAbsolutePath().normalize();

    @Test
    void everyMarkedFigureEqualsItsSource() throws Exception {
        Figures figures = new Figures(REPOSITORY);
        List<String> problems = new ArrayList<>();
        int markers = 0;
        for (String page : ReferencePages.pages(REPOSITORY)) {
            String content = Files.readString(REPOSITORY.resolve(page));
            markers += Figures.markers(content).size();
            problems.addAll(figures.problems(page, content));
        }
        assertThat(problems).as("figures that differ from their source").isEmpty();
        assertThat(markers).as("marked figures on the reference pages").isGreaterThan(0);
    }

    @Test
    void referencePagesReadAsAManual() throws Exception {
        List<String> pages = ReferencePages.pages(REPOSITORY);
        assertThat(pages).contains("README.md", "docs/performance.md", "docs/reliability.md")
                .noneMatch(p -> p.startsWith("docs/evidence/"));
        List<String> problems = new ArrayList<>();
        for (String page : pages) {
            problems.addAll(ReferencePages.problems(page, Files.readString(REPOSITORY.resolve(page))));
        }
        assertThat(problems).as("reference pages that read as a notebook").isEmpty();
    }

    @Test
    void mainSourceCommentsCarryNoLabNotes() throws Exception {
        assertThat(ReferencePages.codeCommentProblems(REPOSITORY)).as("lab notes in code comments").isEmpty();
    }
}
