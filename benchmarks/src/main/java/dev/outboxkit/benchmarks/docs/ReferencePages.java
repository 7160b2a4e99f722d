package dev.outboxkit.benchmarks.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.regex.Pattern;

/**
 * The pages a user reads, and the rules that keep them a manual rather than a notebook. A reference page is every
 * Markdown file of the repository except the evidence ({@code docs/evidence/}, {@code docs/soak/}), the benchmark
 * run reports ({@code benchmarks/results/}) and the changelog. Dated runs and investigations belong in the
 * evidence, linked from the claim they back; a reference page says what a user gets, in the present tense.
 */
public final class ReferencePages {

    /** Longest line allowed outside tables and code blocks. */
    public static final int MAX_LINE = 200;
    /** Largest share of a page's prose lines that may be dated history. */
    public static final double MAX_DATED_SHARE = 0.10;

    private static final List<String> NOT_REFERENCE = List.of("docs/evidence/", "docs/soak/", "benchmarks/results/",
            "CHANGELOG.md");
    /** Our own work history, which means nothing to a user: a numbered stop or issue of ours. */
    static final Pattern WORK_HISTORY = Pattern.compile("(?i)\\b(stop|issue)s? #?\\d+");
    /** A line that tells of a run: a date, a time of day, the machine's load, "an earlier run", "the same day". */
    static final Pattern DATED = Pattern.compile("\\b20\\d\\d-[01]\\d-[0-3]\\d\\b|\\b[0-2]\\d:[0-5]\\d UTC\\b"
            + "|(?i)\\bload (average )?(of )?\\d|\\b(earlier|previous|yesterday's|today's|last) (quick |full )?runs?\\b"
            + "|\\b(the same|that) day\\b");
    private static final Pattern LOAD_NOTE = Pattern.compile("(?i)\\bload (average )?(of )?\\d");

    private ReferencePages() {
    }

    /** The reference pages of the checkout at {@code repository}, as paths relative to it. */
    public static List<String> pages(Path repository) {
        return gitFiles(repository, "*.md").stream()
                .filter(f -> NOT_REFERENCE.stream().noneMatch(f::startsWith))
                .toList();
    }

    /** How a page reads: its lines, prose lines, dated prose lines and longest line outside tables and code. */
    public record Measure(int lines, int prose, int dated, int longest) {
        public double datedShare() {
            return prose == 0 ? 0 : (double) dated / prose;
        }
    }

    /**
     * Measures {@code content}. A prose line is a non-blank line outside code blocks (table rows included); it is
     * dated when it matches {@link #DATED} or stands under a heading that does.
     */
    public static Measure measure(String content) {
        String[] lines = content.split("\n", -1);
        int prose = 0;
        int dated = 0;
        int longest = 0;
        boolean code = false;
        Deque<Integer> datedHeadings = new ArrayDeque<>(); // levels of the enclosing dated headings
        for (String line : lines) {
            String trimmed = line.strip();
            if (trimmed.startsWith("```")) {
                code = !code;
                continue;
            }
            if (code || trimmed.isEmpty()) {
                continue;
            }
            prose++;
            if (trimmed.startsWith("#")) {
                int level = trimmed.indexOf(' ') > 0 ? trimmed.indexOf(' ') : trimmed.length();
                while (!datedHeadings.isEmpty() && datedHeadings.peek() >= level) {
                    datedHeadings.pop();
                }
                if (DATED.matcher(line).find()) {
                    datedHeadings.push(level);
                }
            }
            if (!datedHeadings.isEmpty() || DATED.matcher(line).find()) {
                dated++;
            }
            if (!trimmed.startsWith("|")) {
                longest = Math.max(longest, line.length());
            }
        }
        return new Measure(lines.length, prose, dated, longest);
    }

    /** What keeps {@code content} (the page named {@code page}) from being a reference page: empty when nothing. */
    public static List<String> problems(String page, String content) {
        List<String> problems = new ArrayList<>();
        String[] lines = content.split("\n", -1);
        boolean code = false;
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i];
            if (line.strip().startsWith("```")) {
                code = !code;
                continue;
            }
            var history = WORK_HISTORY.matcher(line);
            if (history.find()) {
                problems.add(page + ":" + (i + 1) + ": '" + history.group() + "' is our work history, not a user's:"
                        + " say what the user gets, and move the history to docs/evidence/");
            }
            if (!code && !line.strip().startsWith("|") && line.length() > MAX_LINE) {
                problems.add(page + ":" + (i + 1) + ": " + line.length() + " characters, over " + MAX_LINE
                        + " outside tables and code: wrap it");
            }
        }
        Measure measure = measure(content);
        if (measure.dated() > 2 && measure.datedShare() > MAX_DATED_SHARE) {
            problems.add(page + ": " + measure.dated() + " of " + measure.prose() + " prose lines ("
                    + Math.round(100 * measure.datedShare()) + " %) tell of dated runs (dates, loads, earlier runs),"
                    + " over " + Math.round(100 * MAX_DATED_SHARE) + " %: move them to a docs/evidence/ file and"
                    + " link it");
        }
        return problems;
    }

    /**
     * Lab notes in the comments of the main Java sources of {@code repository}: work history or the machine's load.
     * Code comments say why the code is as it is, in the present tense; runs belong in the evidence.
     */
    public static List<String> codeCommentProblems(Path repository) throws IOException {
        List<String> problems = new ArrayList<>();
        for (String file : gitFiles(repository, "*/src/main/*.java")) {
            List<String> lines = java.nio.file.Files.readAllLines(repository.resolve(file), StandardCharsets.UTF_8);
            for (int i = 0; i < lines.size(); i++) {
                String comment = comment(lines.get(i));
                if (comment == null) {
                    continue;
                }
                var history = WORK_HISTORY.matcher(comment);
                var load = LOAD_NOTE.matcher(comment);
                if (history.find()) {
                    problems.add(file + ":" + (i + 1) + ": '" + history.group() + "' in a comment: say why, not when");
                } else if (load.find()) {
                    problems.add(file + ":" + (i + 1) + ": '" + load.group() + "' in a comment: a measurement belongs"
                            + " in docs/performance.md or the evidence");
                }
            }
        }
        return problems;
    }

    /** The comment part of a Java line, or null when it has none. */
    static String comment(String line) {
        String trimmed = line.strip();
        if (trimmed.startsWith("//") || trimmed.startsWith("*") || trimmed.startsWith("/*")) {
            return trimmed;
        }
        int slashes = line.indexOf(" // ");
        return slashes >= 0 && line.lastIndexOf('"', slashes) < 0 ? line.substring(slashes) : null;
    }

    private static List<String> gitFiles(Path repository, String pattern) {
        try {
            Process git = new ProcessBuilder("git", "ls-files", "--cached", "--others", "--exclude-standard", "--",
                    pattern).directory(repository.toFile()).redirectErrorStream(false).start();
            String out = new String(git.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (git.waitFor() != 0) {
                throw new IllegalStateException("git ls-files failed in " + repository);
            }
            return out.lines().filter(l -> !l.isBlank()).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException("git ls-files in " + repository + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
