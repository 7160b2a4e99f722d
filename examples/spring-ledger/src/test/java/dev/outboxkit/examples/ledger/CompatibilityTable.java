package dev.outboxkit.examples.ledger;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The compatibility table of outbox-spring-boot-autoconfigure/README.md ("Supported Spring Boot lines") and the
 * Boot lines that spring-boot-lines/ runs: what {@link CompatibilityTableTest} checks the resolved versions against.
 */
final class CompatibilityTable {

    static final String README = "outbox-spring-boot-autoconfigure/README.md";
    /** A row: | 4.1.2 | 12.4.0 | … |, the Boot version first. */
    private static final Pattern ROW = Pattern.compile("(?m)^\\| (\\d+\\.\\d+\\.\\d+) \\|.*\\|$");

    private CompatibilityTable() {
    }

    /** The repository's root: the sample's tests run in spring-boot-lines/boot-x.y. */
    static Path root() {
        for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
            if (Files.exists(p.resolve("spring-boot-lines/pom.xml")) && Files.exists(p.resolve(README))) {
                return p;
            }
        }
        throw new IllegalStateException("no spring-boot-lines/pom.xml above " + Path.of("").toAbsolutePath()
                + ": run the sample's tests from the repository (spring-boot-lines/boot-x.y)");
    }

    /** The table's rows, as written. */
    static Set<String> rows() {
        Set<String> rows = new TreeSet<>();
        Matcher m = ROW.matcher(read(root().resolve(README)));
        while (m.find()) {
            rows.add(m.group());
        }
        return rows;
    }

    /** The Boot version of each row. */
    static Set<String> bootVersions() {
        Set<String> versions = new TreeSet<>();
        Matcher m = ROW.matcher(read(root().resolve(README)));
        while (m.find()) {
            versions.add(m.group(1));
        }
        return versions;
    }

    /** The spring-boot-starter-parent version of each module of spring-boot-lines/pom.xml. */
    static Set<String> linesRun() {
        Set<String> versions = new TreeSet<>();
        Matcher module = Pattern.compile("<module>([^<]+)</module>").matcher(read(root().resolve("spring-boot-lines/pom.xml")));
        Pattern parent = Pattern.compile("<artifactId>spring-boot-starter-parent</artifactId>\\s*<version>([^<]+)</version>");
        while (module.find()) {
            Matcher v = parent.matcher(read(root().resolve("spring-boot-lines").resolve(module.group(1)).resolve("pom.xml")));
            if (!v.find()) {
                throw new IllegalStateException("spring-boot-lines/" + module.group(1) + "/pom.xml has no spring-boot-starter-parent");
            }
            versions.add(v.group(1));
        }
        return versions;
    }

    /** A jar's version from its Maven metadata on the class path. */
    static String mavenVersion(String groupId, String artifactId) {
        String path = "META-INF/maven/" + groupId + "/" + artifactId + "/pom.properties";
        try (InputStream in = CompatibilityTable.class.getClassLoader().getResourceAsStream(path)) {
            if (in == null) {
                throw new IllegalStateException(groupId + ":" + artifactId + " is not on the class path (no " + path + ")");
            }
            Properties p = new Properties();
            p.load(in);
            return p.getProperty("version");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
