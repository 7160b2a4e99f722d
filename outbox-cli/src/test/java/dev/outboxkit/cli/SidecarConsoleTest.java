package dev.outboxkit.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.outboxkit.testkit.JavaProcess;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code relay poll --console}: the operator console on the sidecar's HTTP port shows the relay holding its leases,
 * logs in with the token from the file, and never prints the token; the console options refuse what cannot work.
 */
@ExtendWith(OutboxTestkitExtension.class)
class SidecarConsoleTest {

    private static final String TOKEN = "sidecar-console-token-5f0c7d1e9a";

    @Test
    void theSidecarServesTheConsoleWithItsRelaysLeasesAndTheTokenFromAFile(TestDatabase db, TestKafka kafka,
                                                                           @TempDir Path dir) throws Exception {
        Path tokenFile = dir.resolve("console-token");
        Files.writeString(tokenFile, TOKEN + "\n");
        Map<String, String> env = Map.of("OUTBOX_JDBC_URL", db.jdbcUrl(), "OUTBOX_USER", db.user(),
                "OUTBOX_PASSWORD", db.password(), "OUTBOX_BOOTSTRAP_SERVERS", kafka.bootstrapServers());
        List<String> args = List.of("relay", "poll", "--http-port", "0", "--instance-id", "console-sidecar", "--console",
                "--console-write-actions", "--console-token-file", tokenFile.toString(), "--console-operator", "night-shift");
        try (JavaProcess sidecar = JavaProcess.start("console-sidecar", Main.class, args, List.of(), env)) {
            int port = SidecarRetentionTest.port(sidecar);
            assertThat(sidecar.output()).contains("console on http://0.0.0.0:" + port + "/console/");
            HttpClient http = HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NEVER).build();
            await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
                HttpResponse<String> overview = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/console/"))
                        .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
                assertThat(overview.statusCode()).isEqualTo(200);
                assertThat(overview.headers().firstValue("Content-Security-Policy")).isPresent();
                assertThat(overview.body()).contains("data-holder=\"console-sidecar\"").contains("● holder")
                        .doesNotContain(db.jdbcUrl());
                // its membership row, and the relay's own registry for the publish-rate chart
                assertThat(overview.body()).containsPattern("[0-9]+ partitions, joined").contains("id=\"publish-chart\"");
            });
            HttpResponse<String> login = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/console/login"))
                    .header("Content-Type", "application/x-www-form-urlencoded").timeout(Duration.ofSeconds(30))
                    .POST(HttpRequest.BodyPublishers.ofString("token=" + TOKEN)).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(login.statusCode()).isEqualTo(303);
            String cookie = login.headers().firstValue("Set-Cookie").orElseThrow().split(";")[0];
            HttpResponse<String> page = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/console/dead-letters"))
                    .header("Cookie", cookie).timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(page.body()).contains("Logged in as <strong>night-shift</strong>");
            assertThat(sidecar.awaitOutput("logged in", Duration.ofSeconds(10))).isTrue();
            assertThat(sidecar.output()).doesNotContain(TOKEN);
        }
    }

    @Test
    void outboxConsoleServesTheConsoleWithoutARelay(TestDatabase db) throws Exception {
        db.exec("INSERT INTO outbox_relay_lease (lease_key, holder, fence, expires_at) VALUES ('poll/0', 'relay-elsewhere', 4, "
                + "now() + interval '1 hour')");
        java.util.UUID event;
        try (java.sql.Connection c = db.connect()) {
            event = dev.outboxkit.testkit.OutboxRows.insert(c, "order", "o-1", "{\"shown\": \"with --console-show-payloads\"}");
        }
        Map<String, String> env = Map.of("OUTBOX_JDBC_URL", db.jdbcUrl(), "OUTBOX_USER", db.user(), "OUTBOX_PASSWORD", db.password());
        try (JavaProcess console = JavaProcess.start("console-alone", Main.class,
                List.of("console", "--http-port", "0", "--console-show-payloads"), List.of(), env)) {
            assertThat(console.awaitOutput("console on http://0.0.0.0:", Duration.ofSeconds(60))).as(console.output()).isTrue();
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("console on http://0\\.0\\.0\\.0:(\\d+)/console/").matcher(console.output());
            assertThat(m.find()).as(console.output()).isTrue();
            HttpResponse<String> overview = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + m.group(1) + "/console/")).timeout(Duration.ofSeconds(30)).build(),
                    HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
            assertThat(overview.statusCode()).isEqualTo(200);
            assertThat(overview.body()).contains("data-holder=\"relay-elsewhere\"").doesNotContain("This process's relay")
                    .as("no relay in this process: the fleet's publish rate, from the relays' reports")
                    .contains("id=\"publish-chart\"").contains("every relay instance")
                    .as("and it says where Kafka's readiness is reported instead").contains("id=\"no-relay-here\"");
            HttpResponse<String> eventPage = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + m.group(1) + "/console/events?id=" + event)).timeout(Duration.ofSeconds(30)).build(),
                    HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
            assertThat(eventPage.body()).contains("id=\"event-payload\"").contains("with --console-show-payloads");
            assertThat(console.output()).doesNotContainIgnoringCase("password");
        }
    }

    @Test
    void theConsoleOptionsRefuseWhatCannotWork(TestDatabase db, @TempDir Path dir) throws Exception {
        Map<String, String> env = Map.of("OUTBOX_JDBC_URL", db.jdbcUrl(), "OUTBOX_USER", db.user(),
                "OUTBOX_PASSWORD", db.password(), "OUTBOX_BOOTSTRAP_SERVERS", "127.0.0.1:9");
        CliRun noToken = CliRun.run(env, "relay", "poll", "--http-port", "0", "--console", "--console-write-actions");
        assertThat(noToken.exitCode()).as(noToken.all()).isEqualTo(2);
        assertThat(noToken.err()).contains("--console-write-actions needs an operator token").contains("--console-token-file");

        CliRun noHttp = CliRun.run(env, "relay", "poll", "--http-port", "-1", "--console");
        assertThat(noHttp.exitCode()).as(noHttp.all()).isEqualTo(2);
        assertThat(noHttp.err()).contains("--console needs the HTTP server");

        CliRun unsetVariable = CliRun.run(env, "relay", "poll", "--http-port", "0", "--console", "--console-token-env", "NO_SUCH_TOKEN_VAR");
        assertThat(unsetVariable.exitCode()).as(unsetVariable.all()).isEqualTo(2);
        assertThat(unsetVariable.err()).contains("NO_SUCH_TOKEN_VAR is not set");

        Path shortToken = dir.resolve("short");
        Files.writeString(shortToken, "abc\n");
        CliRun tooShort = CliRun.run(env, "relay", "poll", "--http-port", "0", "--console", "--console-token-file", shortToken.toString());
        assertThat(tooShort.exitCode()).as(tooShort.all()).isEqualTo(2);
        assertThat(tooShort.err()).contains("at least 16 characters").doesNotContain("abc\n");

        CliRun badTraceUrl = CliRun.run(env, "console", "--http-port", "0", "--console-trace-url", "https://jaeger.example/trace/");
        assertThat(badTraceUrl.exitCode()).as(badTraceUrl.all()).isEqualTo(2);
        assertThat(badTraceUrl.err()).contains("--console-trace-url").contains("has no {traceId}")
                .contains("for example https://jaeger.example/trace/{traceId}");

        CliRun standaloneNoToken = CliRun.run(env, "console", "--http-port", "0", "--console-write-actions");
        assertThat(standaloneNoToken.exitCode()).as(standaloneNoToken.all()).isEqualTo(2);
        assertThat(standaloneNoToken.err()).contains("--console-write-actions needs an operator token");
    }
}
