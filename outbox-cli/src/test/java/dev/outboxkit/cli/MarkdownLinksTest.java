package dev.outboxkit.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Every relative link in the repository's Markdown files leads somewhere (file, folder, heading). */
class MarkdownLinksTest {

    /** The repository root: the tests run in outbox-cli/. */
    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

    @Test
    void everyRelativeLinkInTheRepositorysMarkdownResolves() throws Exception {
        List<Path> files = markdownFiles();
        assertThat(files).as("Markdown files found under %s", ROOT)
                .contains(ROOT.resolve("README.md"), ROOT.resolve("outbox-cli/README.md"), ROOT.resolve("docs/performance.md"));
        MarkdownLinks links = new MarkdownLinks(ROOT);
        List<String> broken = new ArrayList<>();
        for (Path file : files) {
            broken.addAll(links.brokenLinks(file));
        }
        assertThat(broken).as("broken relative links (file:line: [target] why); fix the link or the heading").isEmpty();
    }

    @Test
    void anchorsFollowGitHubsRules() {
        assertThat(MarkdownLinks.slug("1. What it is, and why")).isEqualTo("1-what-it-is-and-why");
        assertThat(MarkdownLinks.slug("Metrics (Micrometer, tag `relay=poll`; the CDC relay uses the same names with `relay=cdc`)"))
                .isEqualTo("metrics-micrometer-tag-relaypoll-the-cdc-relay-uses-the-same-names-with-relaycdc");
        assertThat(MarkdownLinks.slug("`published_at` (schema version 7)")).isEqualTo("published_at-schema-version-7");
        assertThat(MarkdownLinks.slug("Reconciliation — *and* [retention](x.md) ≥ 1 × day"))
                .isEqualTo("reconciliation--and-retention--1--day");
        assertThat(MarkdownLinks.slug("_Emphasis_ and snake_case")).isEqualTo("emphasis-and-snake_case");
    }

    @Test
    void aBrokenFileLinkAMissingAnchorAndALinkOutOfTheRepositoryAreReported(@TempDir Path repo) throws IOException {
        Files.createDirectories(repo.resolve("mod"));
        Files.writeString(repo.resolve("mod/README.md"), "# Module\n\n## Known limits\n\n## Known limits\n");
        Files.writeString(repo.resolve("README.md"), String.join("\n",
                "# Front",
                "See [the module](mod/README.md), [its limits](mod/README.md#known-limits-1),",
                "[here](#front), [a folder](mod/), [root-relative](/mod/README.md) and [the web](https://example.com/x.md).",
                "`[not a link](nowhere.md)`",
                "```",
                "[also not a link](nowhere.md)",
                "```",
                "Broken: [gone](mod/GONE.md), [no anchor](mod/README.md#known-limits-2), [self](#nope),",
                "[outside](../elsewhere.md), ![image](mod/missing.png).",
                "",
                "[ref]: mod/also-gone.md"));
        List<String> broken = new MarkdownLinks(repo).brokenLinks(repo.resolve("README.md"));
        assertThat(broken).containsExactly(
                "README.md:8: [mod/GONE.md] no such file or folder: mod/GONE.md",
                "README.md:8: [mod/README.md#known-limits-2] no heading in mod/README.md has the anchor #known-limits-2",
                "README.md:8: [#nope] no heading in README.md has the anchor #nope",
                "README.md:9: [../elsewhere.md] points outside the repository",
                "README.md:9: [mod/missing.png] no such file or folder: mod/missing.png",
                "README.md:11: [mod/also-gone.md] no such file or folder: mod/also-gone.md");
    }

    /** Tracked Markdown files, and new ones not ignored yet, as git lists them. */
    private static List<Path> markdownFiles() throws Exception {
        Process git = new ProcessBuilder("git", "-C", ROOT.toString(), "ls-files", "-z", "--cached", "--others",
                "--exclude-standard", "--", "*.md").redirectErrorStream(false).start();
        byte[] out = git.getInputStream().readAllBytes();
        String err = new String(git.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(git.waitFor(60, TimeUnit.SECONDS)).as("git ls-files finished").isTrue();
        assertThat(git.exitValue()).as("git ls-files in %s failed: %s (the test needs a git checkout)", ROOT, err)
                .isZero();
        return Arrays.stream(new String(out, StandardCharsets.UTF_8).split("\0"))
                .filter(name -> !name.isEmpty())
                .map(name -> ROOT.resolve(name).normalize())
                .filter(Files::isRegularFile)   // deleted in the work tree, not yet in the index
                .distinct()
                .toList();
    }
}
