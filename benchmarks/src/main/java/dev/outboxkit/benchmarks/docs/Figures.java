package dev.outboxkit.benchmarks.docs;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.outboxkit.benchmarks.Metric;
import dev.outboxkit.benchmarks.MetricCatalog;
import dev.outboxkit.benchmarks.Numbers;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The figures a reference page quotes, each marked with the source it comes from, so that no figure is copied by
 * hand. A marker wraps the figure's text:
 *
 * <pre>{@code <!--fig:benchmarks/results/latest.json#poller_drain_eps-->57,219<!--/fig-->}</pre>
 *
 * <ul>
 *   <li>A {@code .json} source: the key is a top-level key or a JSON pointer ({@code /a/b}); the figure is the value
 *       printed as the run report prints numbers ({@link Numbers#format}), or with {@code #key:N} N decimals.</li>
 *   <li>{@code target}: the target {@link MetricCatalog} defines for the key, for example {@code ≥ 0.8} or
 *       {@code ≤ 25 ms}.</li>
 *   <li>{@code docs/soak}: a total over the committed soak reports, such as {@code poll.events} ({@link SoakReports}).
 *   </li>
 *   <li>Any other file (an evidence report): checked, not rendered. The key is a label, and some line of the source
 *       must hold the label's words in their order and the figure's text (a label never holds {@code |}, which
 *       would split a Markdown table's cell).</li>
 * </ul>
 *
 * Markdown renders the comments invisibly, so a reader sees only the figure.
 */
public final class Figures {

    /** {@code <!--fig:SOURCE#KEY-->TEXT<!--/fig-->}; the text never holds a marker. */
    static final Pattern MARKER = Pattern.compile("<!--fig:([^#>]+)#([^>]*?)-->(.*?)<!--/fig-->");
    static final String TARGET = "target";

    private final Path repository;
    private final Map<String, Metric> metrics;
    private final Map<Path, JsonNode> json = new HashMap<>();
    private final Map<Path, List<String>> lines = new HashMap<>();
    private final ObjectMapper mapper = new ObjectMapper();

    /** Reads the sources from {@code repository} (the root of the checkout), targets from {@link MetricCatalog}. */
    public Figures(Path repository) {
        this(repository, catalog());
    }

    Figures(Path repository, Map<String, Metric> metrics) {
        this.repository = repository;
        this.metrics = Map.copyOf(metrics);
    }

    /** One marked figure of a page. */
    public record Marker(String source, String key, String text, int line) {
        String where(String page) {
            return page + ":" + line + ": figure '" + text + "' from " + source + "#" + key;
        }
    }

    /** Every marked figure of {@code content}, in order. */
    public static List<Marker> markers(String content) {
        List<Marker> found = new ArrayList<>();
        Matcher m = MARKER.matcher(content);
        while (m.find()) {
            if (quoted(content, m)) {
                continue;
            }
            int line = 1 + (int) content.substring(0, m.start()).chars().filter(c -> c == '\n').count();
            found.add(new Marker(m.group(1).strip(), m.group(2).strip(), m.group(3), line));
        }
        return found;
    }

    /** A marker shown as an example, in inline code ({@code `<!--fig:…-->…<!--/fig-->`}), is not a figure. */
    private static boolean quoted(String content, Matcher m) {
        return m.start() > 0 && content.charAt(m.start() - 1) == '`';
    }

    /** {@code content} with every renderable figure replaced by what its source says now. */
    public String render(String content) {
        Matcher m = MARKER.matcher(content);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            if (quoted(content, m)) {
                continue;
            }
            Marker marker = new Marker(m.group(1).strip(), m.group(2).strip(), m.group(3), 0);
            String text;
            try {
                text = rendered(marker).orElse(marker.text());
            } catch (IllegalArgumentException | UncheckedIOException e) {
                text = marker.text(); // problems() names it
            }
            m.appendReplacement(out, Matcher.quoteReplacement(
                    "<!--fig:" + m.group(1) + "#" + m.group(2) + "-->" + text + "<!--/fig-->"));
        }
        m.appendTail(out);
        return out.toString();
    }

    /** What is wrong with the figures of {@code content} (the page named {@code page}): empty when every one holds. */
    public List<String> problems(String page, String content) {
        List<String> problems = new ArrayList<>();
        for (Marker marker : markers(content)) {
            try {
                Optional<String> expected = rendered(marker);
                if (expected.isPresent()) {
                    if (!expected.get().equals(marker.text())) {
                        problems.add(marker.where(page) + " differs from its source, which says '" + expected.get()
                                + "': run docs/build-readme.sh to render the figures again");
                    }
                } else if (lines(marker.source()).stream()
                        .noneMatch(l -> holdsInOrder(l, marker.key()) && l.contains(marker.text()))) {
                    problems.add(marker.where(page) + ": no line of " + marker.source() + " holds both '"
                            + marker.key() + "' (its words in order) and '" + marker.text() + "'");
                }
            } catch (IllegalArgumentException | UncheckedIOException e) {
                problems.add(marker.where(page) + ": " + e.getMessage());
            }
        }
        return problems;
    }

    /** Whether {@code line} holds the words of {@code label} in their order (a table row: "poll 17 multi-host ×5"). */
    static boolean holdsInOrder(String line, String label) {
        int from = 0;
        for (String word : label.strip().split("\\s+")) {
            int at = line.indexOf(word, from);
            if (at < 0) {
                return false;
            }
            from = at + word.length();
        }
        return true;
    }

    /** The text the marker's source gives, or empty for a source that is only checked. */
    Optional<String> rendered(Marker marker) {
        String key = marker.key();
        int decimals = -1;
        int colon = key.lastIndexOf(':');
        if (colon > 0) {
            decimals = Integer.parseInt(key.substring(colon + 1));
            key = key.substring(0, colon);
        }
        if (marker.source().equals(TARGET)) {
            return Optional.of(target(key));
        }
        Path source = inside(marker.source());
        if (Files.isDirectory(source)) {
            return Optional.of(String.format(Locale.ROOT, "%,d", SoakReports.total(source, key)));
        }
        if (!marker.source().endsWith(".json")) {
            return Optional.empty();
        }
        JsonNode root = json(marker.source());
        JsonNode value = key.startsWith("/") ? root.at(key) : root.path(key);
        if (!value.isNumber()) {
            throw new IllegalArgumentException(marker.source() + " has no number under '" + key + "'"
                    + (value.isMissingNode() ? "" : " (it holds " + value + ")"));
        }
        return Optional.of(decimals < 0 ? Numbers.format(value.asDouble()) : fixed(value.asDouble(), decimals));
    }

    private String target(String key) {
        Metric metric = metrics.get(key);
        if (metric == null || metric.target() == null) {
            throw new IllegalArgumentException("MetricCatalog defines no target for '" + key + "'");
        }
        String unit = metric.unit().equals("ratio") ? "" : " " + metric.unit();
        String kind = metric.target().kind() == Metric.Target.Kind.AT_LEAST ? "≥ " : "≤ ";
        // a bar is exact: as few digits as it has, thousands separated
        BigDecimal bar = BigDecimal.valueOf(metric.target().bar()).stripTrailingZeros();
        String digits = bar.scale() <= 0 ? String.format(Locale.ROOT, "%,d", bar.longValueExact()) : bar.toPlainString();
        return kind + digits + unit;
    }

    private static String fixed(double value, int decimals) {
        BigDecimal rounded = BigDecimal.valueOf(value).setScale(decimals, RoundingMode.HALF_UP);
        return String.format(Locale.ROOT, Math.abs(value) >= 1000 ? "%,." + decimals + "f" : "%." + decimals + "f",
                rounded.doubleValue());
    }

    private JsonNode json(String source) {
        return json.computeIfAbsent(file(source), path -> {
            try {
                return mapper.readTree(path.toFile());
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read " + source + ": " + e.getMessage(), e);
            }
        });
    }

    private List<String> lines(String source) {
        return lines.computeIfAbsent(file(source), path -> {
            try {
                return Files.readAllLines(path);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read " + source + ": " + e, e);
            }
        });
    }

    /** {@code source} inside the repository (a file or the soak reports' folder). */
    private Path inside(String source) {
        Path path = repository.resolve(source).normalize();
        if (!path.startsWith(repository.normalize())) {
            throw new IllegalArgumentException("the source " + source + " is not a file of the repository");
        }
        return path;
    }

    private Path file(String source) {
        Path path = inside(source);
        if (!Files.isRegularFile(path)) {
            throw new IllegalArgumentException("the source " + source + " is not a file of the repository");
        }
        return path;
    }

    private static Map<String, Metric> catalog() {
        Map<String, Metric> byKey = new HashMap<>();
        MetricCatalog.required().forEach(m -> byKey.put(m.key(), m));
        return byKey;
    }

    /**
     * Renders the figures of the reference pages in place ({@code --write}) or lists what differs (the default;
     * exit status 1 when something does). Run from the repository's root; docs/build-readme.sh runs it.
     */
    public static void main(String[] args) throws IOException {
        boolean write = List.of(args).contains("--write");
        Path repository = Path.of("").toAbsolutePath();
        Figures figures = new Figures(repository);
        List<String> problems = new ArrayList<>();
        for (String page : ReferencePages.pages(repository)) {
            Path file = repository.resolve(page);
            String content = Files.readString(file);
            if (write) {
                String rendered = figures.render(content);
                if (!rendered.equals(content)) {
                    Files.writeString(file, rendered);
                    System.out.println(page + ": figures rendered");
                }
                problems.addAll(figures.problems(page, rendered));
            } else {
                problems.addAll(figures.problems(page, content));
            }
        }
        problems.forEach(System.err::println);
        if (!problems.isEmpty()) {
            System.exit(1);
        }
    }
}
