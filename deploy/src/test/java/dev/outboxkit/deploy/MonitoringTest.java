package dev.outboxkit.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import com.sun.net.httpserver.HttpServer;
import dev.outboxkit.cli.Main;
import dev.outboxkit.consumer.DedupeConsumer;
import dev.outboxkit.relay.RelayMetric;
import dev.outboxkit.testkit.JavaProcess;
import dev.outboxkit.testkit.KafkaProcess;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * deploy/monitoring against a real Prometheus scraping real sidecars: a polling relay (with the retention schedule), a
 * CDC relay, and an idempotent consumer serving its registry, all under a steady load. Prometheus runs a copy of the
 * shipped rules that differs only in {@code for:} (1 s), so expressions are the shipped ones.
 */
@ExtendWith(OutboxTestkitExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class MonitoringTest {

    static final Path RULES = Path.of("monitoring/outboxkit-alerts.yml");
    static final Path DASHBOARD = Path.of("monitoring/outboxkit-dashboard.json");
    private static final Duration WAIT = Duration.ofSeconds(120);
    private static final Pattern METRIC = Pattern.compile("\\b(outbox_[a-z0-9_]+)\\b");
    /** An alert is "query comparison threshold": the query part must return data while the alert is quiet. */
    private static final Pattern ALERT = Pattern.compile("(?s)^(.*\\S)\\s*(>|<|>=|<=)\\s*([0-9.eE+]+)\\s*$");

    private Path promtool;
    private Path prometheusBinary;
    private KafkaProcess kafka;
    private JavaProcess poll;
    private JavaProcess cdc;
    private DedupeConsumer consumer;
    private HttpServer consumerHttp;
    private ScheduledExecutorService load;
    private Prometheus prometheus;
    private TestDatabase cdcDb;
    private String slot;
    private final Map<String, String> targets = new LinkedHashMap<>();

    @BeforeAll
    void start(TestDatabase pollDb, TestDatabase walDb, @TempDir Path dir) throws Exception {
        promtool = Tools.require("promtool", "prometheus");
        prometheusBinary = Tools.require("prometheus", "prometheus");
        cdcDb = walDb;
        slot = "mon_" + walDb.name();
        kafka = KafkaProcess.builder().name("monitoring-kafka").build();
        String prefix = TestKafka.uniqueTopic("monitoring");
        kafka.createTopic(prefix + ".order", 2);

        PrintWriter quiet = new PrintWriter(new StringWriter(), true);
        assertThat(Main.execute(env(pollDb), quiet, quiet, "intents", "enable")).isZero();
        poll = JavaProcess.start("monitoring-poll", Main.class, List.of("relay", "poll", "--http-port", "0",
                "--instance-id", "mon-poll", "--route", prefix + ".${aggregateType}", "--retention-interval", "PT1S",
                "--dead-letter-retention", "P30D"), List.of(), env(pollDb));
        cdc = JavaProcess.start("monitoring-cdc", Main.class, List.of("relay", "cdc", "--http-port", "0",
                "--instance-id", "mon-cdc", "--route", prefix + ".${aggregateType}", "--slot-name", slot), List.of(), env(walDb));

        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        consumer = DedupeConsumer.builder().bootstrapServers(kafka.bootstrapServers()).group("mon-billing")
                .topics(List.of(prefix + ".order")).dataSource(pollDb.dataSource())
                .handler((connection, event) -> { }).meterRegistry(registry).build();
        consumer.start();
        // What a service embedding the consumer does: serve its registry for Prometheus.
        consumerHttp = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 8);
        consumerHttp.createContext("/metrics", ex -> {
            byte[] body = registry.scrape().getBytes(StandardCharsets.UTF_8);
            ex.sendResponseHeaders(200, body.length);
            try (OutputStream out = ex.getResponseBody()) {
                out.write(body);
            }
        });
        consumerHttp.start();

        load = Executors.newSingleThreadScheduledExecutor();
        load.scheduleWithFixedDelay(() -> {
            insert(pollDb);
            insert(walDb);
        }, 0, 100, TimeUnit.MILLISECONDS);

        targets.put("outbox-relay-poll", "127.0.0.1:" + port(poll));
        targets.put("outbox-relay-cdc", "127.0.0.1:" + port(cdc));
        targets.put("order-projection", "127.0.0.1:" + consumerHttp.getAddress().getPort());
        Path rules = dir.resolve("outboxkit-alerts-test.yml");
        Files.writeString(rules, Files.readString(RULES).replaceAll("(?m)^(\\s+)for: \\S+$", "$1for: 1s"));
        prometheus = new Prometheus(prometheusBinary, dir, targets, rules);
    }

    @AfterAll
    void stop() throws Exception {
        if (load != null) {
            load.shutdownNow();
        }
        try (AutoCloseable k = kafka; AutoCloseable p = poll; AutoCloseable c = cdc; AutoCloseable d = consumer;
             AutoCloseable pr = prometheus) {
            if (consumerHttp != null) {
                consumerHttp.stop(0);
            }
        } finally {
            if (cdcDb != null) {
                cdcDb.dropReplicationSlot(slot);
            }
        }
    }

    private Map<String, String> env(TestDatabase db) {
        return Map.of("OUTBOX_JDBC_URL", db.jdbcUrl(), "OUTBOX_USER", db.user(), "OUTBOX_PASSWORD", db.password(),
                "OUTBOX_BOOTSTRAP_SERVERS", kafka.bootstrapServers());
    }

    private static void insert(TestDatabase db) {
        try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement("INSERT INTO outbox_event (id, "
                + "aggregate_type, aggregate_id, event_type, payload) VALUES (?, 'order', ?, 'Placed', '{}'::jsonb)")) {
            ps.setObject(1, UUID.randomUUID());
            ps.setString(2, "o-" + (System.nanoTime() % 7));
            ps.executeUpdate();
        } catch (Exception e) {
            // the load goes on; a test that needs rows waits for them
        }
    }

    private static int port(JavaProcess sidecar) {
        assertThat(sidecar.awaitOutput("health and metrics on http://0.0.0.0:", WAIT)).as(sidecar.output()).isTrue();
        Matcher m = Pattern.compile("health and metrics on http://0\\.0\\.0\\.0:(\\d+)").matcher(sidecar.output());
        assertThat(m.find()).isTrue();
        return Integer.parseInt(m.group(1));
    }

    /** Sample names (as Prometheus stores them) in a /metrics page. */
    private static Set<String> exposedNames(String target) throws Exception {
        String body = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://" + target + "/metrics"))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString()).body();
        Set<String> names = new TreeSet<>();
        for (String line : body.split("\n")) {
            if (!line.startsWith("#") && !line.isBlank()) {
                names.add(line.split("[{ ]", 2)[0]);
            }
        }
        return names;
    }

    /** Every alert rule of the shipped file: name → expression. */
    static Map<String, String> alerts() throws Exception {
        Map<String, String> alerts = new LinkedHashMap<>();
        for (JsonNode group : new YAMLMapper().readTree(RULES.toFile()).path("groups")) {
            for (JsonNode rule : group.path("rules")) {
                alerts.put(rule.path("alert").asText(), rule.path("expr").asText().trim());
            }
        }
        return alerts;
    }

    /** Every panel query of the shipped dashboard: "panel title [refId]" → expression. */
    static Map<String, String> panelQueries() throws Exception {
        Map<String, String> queries = new LinkedHashMap<>();
        for (JsonNode panel : new ObjectMapper().readTree(DASHBOARD.toFile()).path("panels")) {
            for (JsonNode target : panel.path("targets")) {
                queries.put(panel.path("title").asText() + " [" + target.path("refId").asText() + "]",
                        target.path("expr").asText());
            }
        }
        return queries;
    }

    /** The Prometheus sample name of a catalog meter (the _count sample for timers and summaries). */
    static String prometheusName(RelayMetric m) {
        String name = m.meterName().replace('.', '_');
        if (!m.baseUnit().isEmpty() && !name.endsWith("_" + m.baseUnit())) {
            name += "_" + m.baseUnit();
        }
        return switch (m.kind()) {
            case COUNTER -> name + "_total";
            case TIMER, SUMMARY -> name + "_count";
            case GAUGE -> name;
        };
    }

    @Test
    @Order(1)
    void promtoolAcceptsTheShippedRules() throws Exception {
        Tools.Result r = Tools.run(Duration.ofSeconds(60), Path.of("."), promtool.toString(), "check", "rules", RULES.toString());
        assertThat(r.exitCode()).as(r.output()).isZero();
        assertThat(r.output()).contains("SUCCESS: " + alerts().size() + " rules found");
    }

    @Test
    @Order(2)
    void everyMetricARuleOrPanelNamesIsExposedBySidecarOrConsumer() throws Exception {
        Map<String, Set<String>> exposedBy = new LinkedHashMap<>();
        for (Map.Entry<String, String> t : targets.entrySet()) {
            exposedBy.put(t.getKey(), exposedNames(t.getValue()));
        }
        Set<String> exposed = new TreeSet<>();
        exposedBy.values().forEach(exposed::addAll);

        // the catalog, as each relay exposes it
        for (RelayMetric m : RelayMetric.values()) {
            for (String relay : List.of(RelayMetric.POLL, RelayMetric.CDC)) {
                Set<String> names = exposedBy.get("outbox-relay-" + relay);
                if (m.registeredBy(relay)) {
                    assertThat(names).as("relay %s exposes catalog meter %s", relay, m).contains(prometheusName(m));
                }
            }
        }

        Map<String, String> named = new LinkedHashMap<>();
        alerts().forEach((name, expr) -> named.put("alert " + name, expr));
        panelQueries().forEach((panel, expr) -> named.put("panel " + panel, expr));
        List<String> unknown = new ArrayList<>();
        Set<String> used = new LinkedHashSet<>();
        named.forEach((where, expr) -> {
            Matcher m = METRIC.matcher(expr);
            while (m.find()) {
                used.add(m.group(1));
                if (!exposed.contains(m.group(1))) {
                    unknown.add(where + " names " + m.group(1));
                }
            }
        });
        assertThat(unknown).as("metrics no sidecar or consumer exposes (exposed: %s)", exposed).isEmpty();
        // and the dashboard shows every meter of the catalog
        Set<String> onDashboard = new TreeSet<>();
        panelQueries().values().forEach(e -> METRIC.matcher(e).results().forEach(r -> onDashboard.add(r.group(1))));
        for (RelayMetric m : RelayMetric.values()) {
            String family = prometheusName(m).replaceAll("_(total|count)$", "");
            assertThat(onDashboard.stream().anyMatch(n -> n.startsWith(family)))
                    .as("the dashboard has a panel for catalog meter %s (%s)", m, family).isTrue();
        }
        assertThat(used).isNotEmpty();
    }

    @Test
    @Order(3)
    void prometheusScrapesEverySidecar() {
        await().atMost(WAIT).untilAsserted(() -> {
            JsonNode active = prometheus.targets();
            Map<String, String> health = new LinkedHashMap<>();
            active.forEach(t -> health.put(t.path("labels").path("job").asText(), t.path("health").asText()
                    + " " + t.path("lastError").asText()));
            assertThat(health).as(prometheus.log()).hasSize(targets.size())
                    .allSatisfy((job, h) -> assertThat(h).as(job).startsWith("up"));
        });
    }

    @Test
    @Order(4)
    void everyDashboardQueryAndAlertExpressionReturnsData() throws Exception {
        Map<String, String> queries = new LinkedHashMap<>();
        panelQueries().forEach((panel, expr) -> queries.put("panel " + panel, expr));
        alerts().forEach((name, expr) -> {
            Matcher m = ALERT.matcher(expr);
            assertThat(m.matches()).as("alert %s is '<query> <comparison> <threshold>': %s", name, expr).isTrue();
            queries.put("alert " + name + " (its query, without '" + m.group(2) + " " + m.group(3) + "')", m.group(1));
        });
        await().atMost(WAIT).pollInterval(Duration.ofSeconds(2)).untilAsserted(() -> {
            List<String> empty = new ArrayList<>();
            queries.forEach((where, q) -> {
                if (prometheus.query(q).isEmpty()) {
                    empty.add(where + ": " + q);
                }
            });
            assertThat(empty).as("queries without data").isEmpty();
        });
    }

    @Test
    @Order(5)
    void withKafkaStoppedUnderLoadTheBacklogAgeAlertFiresAndResolves() {
        String alert = "OutboxEventsDelayed";
        await().atMost(WAIT).until(() -> prometheus.query("outbox_relay_oldest_unpublished_age_seconds").size() > 0);
        assertThat(prometheus.alertState(alert)).as("before Kafka stops").isEqualTo("inactive");

        kafka.stop();
        Set<String> seen = new LinkedHashSet<>();
        await().atMost(WAIT).pollInterval(Duration.ofMillis(500)).until(() -> {
            seen.add(prometheus.alertState(alert));
            return seen.contains("firing");
        });
        assertThat(seen).as("states while Kafka is down").containsSubsequence("pending", "firing");

        kafka.start();
        await().atMost(WAIT).pollInterval(Duration.ofMillis(500)).until(() -> prometheus.alertState(alert).equals("inactive"));
        assertThat(prometheus.query("outbox_relay_oldest_unpublished_age_seconds < 30")).as("the age is back under the threshold")
                .isNotEmpty();
    }
}
