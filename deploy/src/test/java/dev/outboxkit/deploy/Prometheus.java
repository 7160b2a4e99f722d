package dev.outboxkit.deploy;

import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.outboxkit.testkit.Ports;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/** A real Prometheus server (Debian's binary) in a child process, with its HTTP API. */
final class Prometheus implements AutoCloseable {

    private static final ObjectMapper JSON = new ObjectMapper();
    private final HttpClient http = HttpClient.newHttpClient();
    private final Process process;
    private final Path log;
    private final String base;

    /**
     * Scrapes {@code targets} (job name → host:port) every second and evaluates {@code rules} every second.
     */
    Prometheus(Path binary, Path dir, Map<String, String> targets, Path rules) throws IOException {
        int port = Ports.free();
        base = "http://127.0.0.1:" + port;
        String scrapes = targets.entrySet().stream().map(t -> "  - job_name: " + t.getKey() + "\n"
                + "    static_configs:\n      - targets: ['" + t.getValue() + "']\n").collect(Collectors.joining());
        Path config = dir.resolve("prometheus.yml");
        Files.writeString(config, "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                + "rule_files:\n  - " + rules.toAbsolutePath() + "\nscrape_configs:\n" + scrapes);
        log = dir.resolve("prometheus.log");
        process = new ProcessBuilder(binary.toString(), "--config.file=" + config, "--storage.tsdb.path=" + dir.resolve("data"),
                "--web.listen-address=127.0.0.1:" + port, "--log.level=warn").redirectErrorStream(true)
                .redirectOutput(log.toFile()).start();
        await().atMost(Duration.ofSeconds(60)).ignoreExceptions()
                .failFast("prometheus exited: " + log, () -> !process.isAlive())
                .until(() -> get("/-/ready").statusCode() == 200);
    }

    private HttpResponse<String> get(String pathAndQuery) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(URI.create(base + pathAndQuery)).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    }

    /** {@code /api/v1/...} as JSON; throws with Prometheus' error when the call failed. */
    JsonNode api(String pathAndQuery) {
        try {
            HttpResponse<String> r = get("/api/v1/" + pathAndQuery);
            JsonNode body = JSON.readTree(r.body());
            if (!"success".equals(body.path("status").asText())) {
                throw new AssertionError("Prometheus refused " + pathAndQuery + ": " + r.body());
            }
            return body.path("data");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** The instant vector {@code promql} evaluates to now. */
    JsonNode query(String promql) {
        return api("query?query=" + URLEncoder.encode(promql, StandardCharsets.UTF_8)).path("result");
    }

    /** The state of alert {@code name} ("inactive", "pending" or "firing"). */
    String alertState(String name) {
        for (JsonNode group : api("rules?type=alert").path("groups")) {
            for (JsonNode rule : group.path("rules")) {
                if (rule.path("name").asText().equals(name)) {
                    return rule.path("state").asText();
                }
            }
        }
        throw new AssertionError("Prometheus has no alert rule " + name);
    }

    JsonNode targets() {
        return api("targets?state=active").path("activeTargets");
    }

    String log() {
        try {
            return Files.readString(log);
        } catch (IOException e) {
            return "(no log: " + e.getMessage() + ")";
        }
    }

    @Override
    public void close() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(20, TimeUnit.SECONDS)) {
            process.destroyForcibly();
        }
    }
}
