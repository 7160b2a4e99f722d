package dev.outboxkit.cli;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Finds broken relative links in Markdown files: a link to a file or folder that does not exist, or
 * to an {@code #anchor} that no heading of the target Markdown file produces under GitHub's rules
 * (lower case; everything but letters, digits, marks, {@code _}, {@code -} and spaces dropped; each
 * space a {@code -}; a repeated heading gets {@code -1}, {@code -2}, ...). Links with a scheme
 * ({@code https:}, {@code mailto:}) are not followed; code blocks and code spans are not links.
 */
final class MarkdownLinks {

    private static final Pattern FENCE = Pattern.compile("^ {0,3}(```|~~~)");
    private static final Pattern HEADING = Pattern.compile("^ {0,3}(#{1,6})[ \\t]+(.*?)[ \\t]*(?:[ \\t]#+)?[ \\t]*$");
    private static final Pattern CODE_SPAN = Pattern.compile("(`+)(.+?)\\1");
    private static final Pattern INLINE_LINK = Pattern.compile("!?\\[((?:[^\\[\\]]|\\[[^\\[\\]]*\\])*)\\]\\(\\s*<?([^)\\s>]*)>?(?:\\s+\"[^\"]*\")?\\s*\\)");
    private static final Pattern REFERENCE_DEFINITION = Pattern.compile("^ {0,3}\\[[^\\]]+\\]:\\s*<?(\\S+?)>?(?:\\s.*)?$");
    private static final Pattern HTML_LINK = Pattern.compile("<(?:a|img)\\b[^>]*?\\b(?:href|src)\\s*=\\s*\"([^\"]*)\"", Pattern.CASE_INSENSITIVE);
    private static final Pattern HTML_ANCHOR = Pattern.compile("<a\\b[^>]*?\\b(?:name|id)\\s*=\\s*\"([^\"]*)\"", Pattern.CASE_INSENSITIVE);
    private static final Pattern HTML_TAG = Pattern.compile("<[^>]+>");
    private static final Pattern SCHEME = Pattern.compile("^[a-zA-Z][a-zA-Z0-9+.-]*:|^//");
    // emphasis underscores (not the ones inside a word, which GitHub keeps)
    private static final Pattern EMPHASIS_UNDERSCORE = Pattern.compile("(?<![\\p{L}\\p{N}])_+|_+(?![\\p{L}\\p{N}])");

    private final Path root;
    private final Map<Path, Set<String>> anchorsByFile = new HashMap<>();

    /** @param root the repository: links starting with {@code /} are resolved from it, and none may leave it */
    MarkdownLinks(Path root) {
        this.root = root.toAbsolutePath().normalize();
    }

    /** One problem per broken link: {@code file:line: [target] why}. */
    List<String> brokenLinks(Path markdownFile) {
        Path file = markdownFile.toAbsolutePath().normalize();
        List<String> problems = new ArrayList<>();
        List<String> lines = read(file);
        boolean inFence = false;
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            if (FENCE.matcher(line).find()) {
                inFence = !inFence;
                continue;
            }
            if (inFence) {
                continue;
            }
            for (String target : targets(line)) {
                String why = check(file, target);
                if (why != null) {
                    problems.add(root.relativize(file) + ":" + (i + 1) + ": [" + target + "] " + why);
                }
            }
        }
        return problems;
    }

    private static List<String> targets(String line) {
        List<String> targets = new ArrayList<>();
        Matcher definition = REFERENCE_DEFINITION.matcher(line);
        if (definition.matches()) {
            targets.add(definition.group(1));
            return targets;
        }
        String text = CODE_SPAN.matcher(line).replaceAll("");
        Matcher inline = INLINE_LINK.matcher(text);
        while (inline.find()) {
            targets.add(inline.group(2));
            // a link around an image: [![alt](image)](target)
            Matcher inner = INLINE_LINK.matcher(inline.group(1));
            while (inner.find()) {
                targets.add(inner.group(2));
            }
        }
        Matcher html = HTML_LINK.matcher(text);
        while (html.find()) {
            targets.add(html.group(1));
        }
        return targets;
    }

    /** Null when the target resolves, else why not. */
    private String check(Path from, String target) {
        if (target.isEmpty()) {
            return "empty link";
        }
        if (SCHEME.matcher(target).find()) {
            return null;
        }
        int hash = target.indexOf('#');
        String pathPart = URLDecoder.decode(hash < 0 ? target : target.substring(0, hash), StandardCharsets.UTF_8);
        String fragment = hash < 0 ? null : URLDecoder.decode(target.substring(hash + 1), StandardCharsets.UTF_8);
        Path resolved;
        if (pathPart.isEmpty()) {
            resolved = from;
        } else if (pathPart.startsWith("/")) {
            resolved = root.resolve(pathPart.substring(1)).normalize();
        } else {
            resolved = from.getParent().resolve(pathPart).normalize();
        }
        if (!resolved.startsWith(root)) {
            return "points outside the repository";
        }
        if (!Files.exists(resolved)) {
            return "no such file or folder: " + root.relativize(resolved);
        }
        if (fragment == null || !resolved.getFileName().toString().toLowerCase().endsWith(".md")) {
            return null;   // folders and other files: existence is all we can check (#L10 anchors are GitHub's)
        }
        if (fragment.isEmpty()) {
            return "empty anchor";
        }
        Set<String> anchors = anchorsByFile.computeIfAbsent(resolved, MarkdownLinks::anchors);
        return anchors.contains(fragment) ? null
                : "no heading in " + root.relativize(resolved) + " has the anchor #" + fragment;
    }

    /** Every anchor GitHub generates for the file's headings, plus explicit {@code <a name|id>}. */
    static Set<String> anchors(Path markdownFile) {
        Set<String> anchors = new LinkedHashSet<>();
        Map<String, Integer> seen = new HashMap<>();
        boolean inFence = false;
        for (String line : read(markdownFile)) {
            if (FENCE.matcher(line).find()) {
                inFence = !inFence;
                continue;
            }
            if (inFence) {
                continue;
            }
            Matcher heading = HEADING.matcher(line);
            if (heading.matches()) {
                String slug = slug(heading.group(2));
                int n = seen.merge(slug, 1, Integer::sum) - 1;
                anchors.add(n == 0 ? slug : slug + "-" + n);
            }
            Matcher html = HTML_ANCHOR.matcher(line);
            while (html.find()) {
                anchors.add(html.group(1));
            }
        }
        return anchors;
    }

    /** GitHub's anchor for a heading's Markdown source (before de-duplication). */
    static String slug(String headingSource) {
        StringBuilder text = new StringBuilder();
        Matcher code = CODE_SPAN.matcher(headingSource);
        int at = 0;
        while (code.find()) {
            text.append(plain(headingSource.substring(at, code.start()))).append(code.group(2));
            at = code.end();
        }
        text.append(plain(headingSource.substring(at)));
        String lower = text.toString().toLowerCase(java.util.Locale.ROOT);
        StringBuilder slug = new StringBuilder();
        lower.codePoints().forEach(c -> {
            if (c == ' ') {
                slug.append('-');
            } else if (c == '-' || Character.isLetterOrDigit(c) || isKept(Character.getType(c))) {
                slug.appendCodePoint(c);
            }
        });
        return slug.toString();
    }

    private static boolean isKept(int type) {
        return type == Character.CONNECTOR_PUNCTUATION || type == Character.NON_SPACING_MARK
                || type == Character.COMBINING_SPACING_MARK || type == Character.ENCLOSING_MARK
                || type == Character.LETTER_NUMBER || type == Character.OTHER_NUMBER;
    }

    /** The rendered text of Markdown outside code spans: link text kept, markup dropped. */
    private static String plain(String markdown) {
        String s = INLINE_LINK.matcher(markdown).replaceAll(m -> Matcher.quoteReplacement(m.group(1)));
        s = HTML_TAG.matcher(s).replaceAll("");
        s = s.replace("*", "");
        return EMPHASIS_UNDERSCORE.matcher(s).replaceAll("");
    }

    private static List<String> read(Path file) {
        try {
            return Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
    }
}
