package dev.outboxkit.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.Ports;
import dev.outboxkit.testkit.internal.SidecarContent;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The image that {@code -Pimage} builds into target/outbox-image.tar (Jib, no Docker engine): its configuration as a
 * container runtime reads it, and its file system running both relays against real PostgreSQL and Kafka as the
 * image's user, the way a runtime starts it (its root, its entrypoint, its environment).
 */
@ExtendWith(OutboxTestkitExtension.class)
class ImageIT {

    private static final Path TARBALL = Path.of("target/outbox-image.tar");
    private static final ObjectMapper JSON = new ObjectMapper();

    /** {@code default_java_opts} of bin/outbox: the image must start the JVM the same way. */
    private static List<String> launcherJvmOptions() throws IOException {
        Matcher m = Pattern.compile("(?m)^default_java_opts=\"([^\"]*)\"").matcher(Files.readString(Path.of("../bin/outbox")));
        assertThat(m.find()).as("bin/outbox sets default_java_opts").isTrue();
        return Arrays.asList(m.group(1).trim().split("\\s+"));
    }

    /** Extracts the tarball and returns the image's config blob (OCI image layout, as Jib writes it). */
    private static JsonNode config(Path dir) throws Exception {
        assertThat(TARBALL).as("build it with ./mvnw -B -pl deploy -am -Pimage package").exists();
        Tools.Result untar = Tools.run(Duration.ofSeconds(120), dir, "tar", "-xf", TARBALL.toAbsolutePath().toString());
        assertThat(untar.exitCode()).as(untar.output()).isZero();
        return JSON.readTree(dir.resolve(blob(manifest(dir).path("config").path("digest").asText())).toFile());
    }

    private static JsonNode manifest(Path dir) throws IOException {
        if (Files.exists(dir.resolve("index.json"))) {
            JsonNode index = JSON.readTree(dir.resolve("index.json").toFile());
            return JSON.readTree(dir.resolve(blob(index.path("manifests").get(0).path("digest").asText())).toFile());
        }
        // docker-save layout: manifest.json names the config and layer files directly
        JsonNode m = JSON.readTree(dir.resolve("manifest.json").toFile()).get(0);
        return JSON.createObjectNode().set("config", JSON.createObjectNode().put("digest", "file:" + m.path("Config").asText()));
    }

    private static String blob(String digest) {
        return digest.startsWith("file:") ? digest.substring(5) : "blobs/" + digest.replace(':', '/');
    }

    @Test
    void theImageRunsTheOutboxCommandAsItsNonRootUserWithTheLaunchersJvmOptions(@TempDir Path dir) throws Exception {
        JsonNode config = config(dir).path("config");
        List<String> entrypoint = new ArrayList<>();
        config.path("Entrypoint").forEach(e -> entrypoint.add(e.asText()));
        List<String> expected = new ArrayList<>(List.of("/opt/java/bin/java"));
        expected.addAll(launcherJvmOptions());
        expected.addAll(List.of("-cp", "@/app/jib-classpath-file", "dev.outboxkit.cli.Main"));
        assertThat(entrypoint).isEqualTo(expected);
        assertThat(config.path("Cmd").isMissingNode() || config.path("Cmd").isNull() || config.path("Cmd").isEmpty())
                .as("no default arguments: the orchestrator says which relay").isTrue();

        String user = config.path("User").asText();
        assertThat(user).isEqualTo("65532:65532");
        Map<String, String> env = env(config);
        assertThat(env).containsEntry("OUTBOX_HTTP_PORT", "8080");
        assertThat(config.path("ExposedPorts").has("8080/tcp")).as(config.toString()).isTrue();
        assertThat(config.path("ExposedPorts").size()).isEqualTo(1);
        // what deploy/kubernetes runs is this image
        assertThat(Files.readString(Path.of("kubernetes/base/deployment.yaml")))
                .contains("image: outboxkit/outbox:" + System.getProperty("outboxkit.version"));
    }

    /** The image's file system: its layers extracted, in order, into {@code dir/rootfs}. */
    private static Path rootfs(Path dir) throws Exception {
        Path root = dir.resolve("rootfs");
        Files.createDirectories(root);
        for (JsonNode layer : manifest(dir).path("layers")) {
            Tools.Result r = Tools.run(Duration.ofSeconds(120), root, "tar", "--warning=no-unknown-keyword", "-xzf",
                    dir.resolve(blob(layer.path("digest").asText())).toString());
            assertThat(r.exitCode()).as(r.output()).isZero();
        }
        return root;
    }

    /** The image's entrypoint with {@code args}, run in its file system as its user ({@code unshare} + {@code chroot}). */
    private static List<String> inImage(JsonNode config, Path root, String... args) throws IOException {
        Files.createDirectories(root.resolve("proc"));
        Path unshare = Tools.require("unshare", "util-linux");
        Path chroot = Tools.require("chroot", "coreutils");
        List<String> command = new ArrayList<>(List.of(unshare.toString(), "--mount", "--mount-proc=" + root.resolve("proc"),
                chroot.toString(), "--userspec=" + config.path("User").asText(), root.toString()));
        config.path("Entrypoint").forEach(e -> command.add(e.asText()));
        command.addAll(List.of(args));
        return command;
    }

    @Test
    void itHoldsNoBrokerNoPostgresqlAndNoServletContainer(@TempDir Path dir) throws Exception {
        config(dir);
        Path root = rootfs(dir);
        List<String> found = new ArrayList<>();
        List<String> jars = new ArrayList<>();
        try (Stream<Path> files = Files.walk(root)) {
            for (Path file : files.filter(Files::isRegularFile).toList()) {
                String path = root.relativize(file).toString();
                found.addAll(SidecarContent.summary(List.of(path)));
                if (path.endsWith(".jar")) {
                    jars.add(file.getFileName().toString());
                    SidecarContent.violations(file).forEach(v -> found.add(path + ": " + v));
                }
            }
        }
        assertThat(found).as("a Kafka broker, PostgreSQL or a servlet container in the image").isEmpty();
        // the sidecar is there: both relays, the CLI, the Kafka client, the JDBC driver, Debezium's connector
        assertThat(jars).anyMatch(j -> j.startsWith("outbox-cli-")).anyMatch(j -> j.startsWith("relay-poller-"))
                .anyMatch(j -> j.startsWith("relay-debezium-")).anyMatch(j -> j.startsWith("kafka-clients-"))
                .anyMatch(j -> j.startsWith("postgresql-")).anyMatch(j -> j.startsWith("debezium-connector-postgres-"))
                .noneMatch(j -> j.startsWith("outbox-testkit-") || j.startsWith("outbox-dev-tools-"));
    }

    /** The SBOM in the image (and beside the tarball) names every jar, the JRE and every C library the image holds. */
    @Test
    void itsSbomNamesEveryJarTheJreAndEveryCLibrary(@TempDir Path dir) throws Exception {
        config(dir);
        Path root = rootfs(dir);
        JsonNode sbom = JSON.readTree(root.resolve("app/sbom/outbox-image-cyclonedx.json").toFile());
        assertThat(Files.readString(Path.of("target/outbox-image-cyclonedx.json")))
                .isEqualTo(Files.readString(root.resolve("app/sbom/outbox-image-cyclonedx.json")));
        assertThat(sbom.path("bomFormat").asText()).isEqualTo("CycloneDX");
        assertThat(sbom.path("metadata").path("component").path("type").asText()).isEqualTo("container");
        List<String> named = new ArrayList<>();
        StringBuilder described = new StringBuilder();
        for (JsonNode c : sbom.path("components")) {
            named.add(c.path("name").asText() + "-" + c.path("version").asText() + ".jar");
            named.add(c.path("name").asText());
            described.append(c.path("description").asText()).append('\n');
        }
        List<String> missing = new ArrayList<>();
        try (Stream<Path> files = Files.walk(root)) {
            for (Path file : files.filter(Files::isRegularFile).toList()) {
                String inImage = "/" + root.relativize(file);
                if (inImage.endsWith(".jar") && inImage.startsWith("/app/") && !named.contains(file.getFileName().toString())) {
                    missing.add(inImage);
                } else if (inImage.contains(".so") && !inImage.startsWith("/opt/java/")
                        && !named.contains(inImage) && !described.toString().contains(inImage)) {
                    missing.add(inImage);
                }
            }
        }
        assertThat(missing).as("files of the image that its SBOM does not name").isEmpty();
        assertThat(sbom.path("components").findValuesAsText("type")).contains("platform");
        assertThat(described.toString()).contains("/opt/java").contains("java.base");
    }

    @Test
    void devAndDemoSayTheyAreNotInTheImage(@TempDir Path dir) throws Exception {
        JsonNode config = config(dir).path("config");
        Path root = rootfs(dir);
        for (String command : List.of("dev", "demo")) {
            ProcessBuilder pb = new ProcessBuilder(inImage(config, root, command)).redirectErrorStream(true).directory(root.toFile());
            pb.environment().clear();
            pb.environment().putAll(env(config));
            Process p = pb.start();
            String output = new String(p.getInputStream().readAllBytes());
            assertThat(p.waitFor(60, TimeUnit.SECONDS)).as(output).isTrue();
            assertThat(p.exitValue()).as(output).isEqualTo(2);
            assertThat(output).contains("'outbox " + command + "' is not in this jar").contains("bin/outbox " + command);
        }
    }

    /** Both relays, so the image's trimmed JRE (no java.desktop) is proven with Debezium's code paths too. */
    @ParameterizedTest
    @ValueSource(strings = {"poll", "cdc"})
    void itsFileSystemRunsTheRelayAgainstRealServers(String kind, @TempDir Path dir, TestDatabase db, TestKafka kafka)
            throws Exception {
        JsonNode config = config(dir).path("config");
        Path root = rootfs(dir);

        String prefix = TestKafka.uniqueTopic("image-" + kind);
        kafka.createTopic(prefix + ".order", 2);
        int port = Ports.free();
        String slot = "image_" + db.name();
        List<String> args = new ArrayList<>(List.of("relay", kind, "--route", prefix + ".${aggregateType}"));
        if (kind.equals("cdc")) {
            args.addAll(List.of("--slot-name", slot));
        }
        List<String> command = inImage(config, root, args.toArray(String[]::new));
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true).directory(root.toFile());
        pb.environment().clear();
        pb.environment().putAll(env(config));
        pb.environment().putAll(Map.of("OUTBOX_JDBC_URL", db.jdbcUrl(), "OUTBOX_USER", db.user(),
                "OUTBOX_PASSWORD", db.password(), "OUTBOX_BOOTSTRAP_SERVERS", kafka.bootstrapServers(),
                "OUTBOX_HTTP_PORT", Integer.toString(port)));
        Path log = dir.resolve("relay.log");
        pb.redirectOutput(log.toFile());
        Process relay = pb.start();
        try {
            await().atMost(Duration.ofSeconds(120)).ignoreExceptions()
                    .failFast("the image's relay exited", () -> !relay.isAlive())
                    .until(() -> get(port, "/health/ready") == 200);
            try (Connection c = db.connect(); Statement s = c.createStatement()) {
                s.execute("INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload)"
                        + " SELECT gen_random_uuid(), 'order', 'o-' || i, 'Placed', '{}'::jsonb FROM generate_series(1, 20) i");
            }
            await().atMost(Duration.ofSeconds(60)).until(() -> count(db) == 0);
            assertThat(kafka.readAll(List.of(prefix + ".order"))).hasSize(20);
            new ProcessBuilder("kill", "-TERM", Long.toString(relay.pid())).start().waitFor(10, TimeUnit.SECONDS);
            assertThat(relay.waitFor(30, TimeUnit.SECONDS)).as(Files.readString(log)).isTrue();
            assertThat(relay.exitValue()).as(Files.readString(log)).isZero();
            assertThat(Files.readString(log)).contains("relay " + kind + " stopped").doesNotContain("NoClassDefFoundError");
        } finally {
            relay.destroyForcibly();
            if (kind.equals("cdc")) {
                db.dropReplicationSlot(slot);
            }
        }
    }

    private static Map<String, String> env(JsonNode config) {
        Map<String, String> env = new HashMap<>();
        config.path("Env").forEach(e -> {
            String[] kv = e.asText().split("=", 2);
            env.put(kv[0], kv[1]);
        });
        return env;
    }

    private static int get(int port, String path) throws Exception {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    private static long count(TestDatabase db) throws Exception {
        try (Connection c = db.connect(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT count(*) FROM outbox_event")) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
