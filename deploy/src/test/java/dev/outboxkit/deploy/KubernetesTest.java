package dev.outboxkit.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.outboxkit.cli.Main;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * deploy/kubernetes as Debian's kubectl renders it: each overlay's relay has the probes, resources, Secret, grace
 * period and settings this project promises, and every OUTBOX_* variable it sets is an option of the relay it runs.
 */
class KubernetesTest {

    private static final Path KUBERNETES = Path.of("kubernetes");

    /**
     * The measured resident memory (MB) of a relay: the polling sidecar's peak while it drains, {@code relay_rss_mb} of
     * the latest benchmark run (benchmarks/results/latest.json); for the CDC relay, which the harness does not measure
     * alone, the highest "max RSS" of its module benchmark rows (docs/evidence/performance-module-benchmarks-20261129.md).
     */
    private static long measuredRssMb(String relay) throws Exception {
        if (relay.equals("poll")) {
            JsonNode rss = new ObjectMapper().readTree(Path.of("../benchmarks/results/latest.json").toFile())
                    .path("relay_rss_mb");
            assertThat(rss.isNumber()).as("benchmarks/results/latest.json holds relay_rss_mb").isTrue();
            return (long) Math.ceil(rss.asDouble());
        }
        String evidence = Files.readString(Path.of("../docs/evidence/performance-module-benchmarks-20261129.md"));
        Pattern p = Pattern.compile("(?m)^\\| outboxkit, .*\\| (\\d+) MB \\|$");
        Matcher m = p.matcher(evidence);
        long max = 0;
        while (m.find()) {
            max = Math.max(max, Long.parseLong(m.group(1)));
        }
        assertThat(max).as("the module benchmarks state the CDC relay's RSS (%s)", p).isPositive();
        return max;
    }

    private static long bytes(String quantity) {
        Matcher m = Pattern.compile("(\\d+)(Ki|Mi|Gi)?").matcher(quantity);
        assertThat(m.matches()).as("memory quantity %s", quantity).isTrue();
        long n = Long.parseLong(m.group(1));
        return m.group(2) == null ? n : switch (m.group(2)) {
            case "Ki" -> n << 10;
            case "Mi" -> n << 20;
            default -> n << 30;
        };
    }

    /** The environment variables of {@code outbox relay <relay>}, from its own --help. */
    private static Set<String> relayVariables(String relay) {
        StringWriter out = new StringWriter();
        PrintWriter w = new PrintWriter(out, true);
        assertThat(Main.execute(Map.of(), w, w, "relay", relay, "--help")).isZero();
        Set<String> vars = new HashSet<>();
        Matcher m = Pattern.compile("--([a-z][a-z0-9-]+)").matcher(out.toString());
        while (m.find()) {
            vars.add("OUTBOX_" + m.group(1).toUpperCase(Locale.ROOT).replace('-', '_'));
        }
        return vars;
    }

    @ParameterizedTest(name = "overlay {0}")
    @CsvSource({"poll, poll, 2, 1", "cdc, cdc, 2, 1", "sidecar, poll, 3, 2"})
    void everyOverlayRendersARelayReadyForProduction(String overlay, String relay, int replicas, int containers)
            throws Exception {
        Path kubectl = Tools.require("kubectl", "kubectl");
        Tools.Result r = Tools.run(Duration.ofSeconds(60), Path.of("."), kubectl.toString(), "kustomize",
                KUBERNETES.resolve("overlays").resolve(overlay).toString());
        assertThat(r.exitCode()).as(r.output()).isZero();
        List<JsonNode> docs = new ArrayList<>();
        new YAMLMapper().readerFor(JsonNode.class).readValues(r.output()).forEachRemaining(d -> docs.add((JsonNode) d));

        JsonNode config = only(docs, "ConfigMap");
        JsonNode deployment = only(docs, "Deployment");
        JsonNode pdb = only(docs, "PodDisruptionBudget");
        JsonNode service = only(docs, "Service");
        JsonNode pod = deployment.path("spec").path("template");
        JsonNode labels = pod.path("metadata").path("labels");

        assertThat(deployment.path("spec").path("replicas").asInt()).isEqualTo(replicas);
        JsonNode containersNode = pod.path("spec").path("containers");
        assertThat(containersNode).hasSize(containers);
        JsonNode container = null;
        for (JsonNode c : containersNode) {
            if (c.path("name").asText().equals("relay")) {
                container = c;
            }
        }
        assertThat(container).as("a container named relay").isNotNull();
        assertThat(container.path("args").toString()).isEqualTo("[\"relay\",\"" + relay + "\"]");

        // the settings: all real options of this relay, the password only from the Secret
        Set<String> known = relayVariables(relay);
        config.path("data").fieldNames().forEachRemaining(name ->
                assertThat(known).as("%s is an option of 'outbox relay %s'", name, relay).contains(name));
        assertThat(config.path("data").has("OUTBOX_PASSWORD")).as("no password in the ConfigMap").isFalse();
        JsonNode password = null;
        for (JsonNode e : container.path("env")) {
            assertThat(known).as("%s is an option of 'outbox relay %s'", e.path("name").asText(), relay)
                    .contains(e.path("name").asText());
            if (e.path("name").asText().equals("OUTBOX_PASSWORD")) {
                password = e;
            }
        }
        assertThat(password).as("OUTBOX_PASSWORD is set").isNotNull();
        assertThat(password.path("valueFrom").path("secretKeyRef").path("key").asText()).isEqualTo("password");
        assertThat(container.path("envFrom").get(0).path("configMapRef").path("name").asText())
                .isEqualTo(config.path("metadata").path("name").asText());

        // probes on the sidecar's endpoints and the port it listens on
        int httpPort = Integer.parseInt(config.path("data").path("OUTBOX_HTTP_PORT").asText());
        assertThat(container.path("ports").get(0).path("containerPort").asInt()).isEqualTo(httpPort);
        assertThat(container.path("ports").get(0).path("name").asText()).isEqualTo("http");
        assertThat(container.path("livenessProbe").path("httpGet").path("path").asText()).isEqualTo("/health/live");
        assertThat(container.path("readinessProbe").path("httpGet").path("path").asText()).isEqualTo("/health/ready");
        assertThat(container.path("livenessProbe").path("httpGet").path("port").asText()).isEqualTo("http");
        assertThat(container.path("readinessProbe").path("httpGet").path("port").asText()).isEqualTo("http");

        // memory from the measurement, with headroom
        long request = bytes(container.path("resources").path("requests").path("memory").asText());
        long limit = bytes(container.path("resources").path("limits").path("memory").asText());
        assertThat(request).as("memory request above the measured RSS").isGreaterThan(measuredRssMb(relay) * 1_000_000);
        assertThat(limit).isGreaterThan(request);

        // Kubernetes waits longer than the relay's own bound on its stop
        Duration deadline = Duration.parse(config.path("data").path("OUTBOX_SHUTDOWN_DEADLINE").asText());
        assertThat(Duration.ofSeconds(pod.path("spec").path("terminationGracePeriodSeconds").asLong()))
                .isGreaterThan(deadline);
        // a gapless rolling update: a new pod is ready (and warm) before an old one stops, and SIGTERM itself starts
        // the handoff (a preStop sleep would only postpone it)
        assertThat(deployment.path("spec").path("strategy").path("rollingUpdate").path("maxUnavailable").asInt(-1)).isZero();
        assertThat(deployment.path("spec").path("minReadySeconds").asInt()).isGreaterThanOrEqualTo(5);
        assertThat(container.path("lifecycle").has("preStop")).as("no preStop hook on the relay").isFalse();
        assertThat(pod.path("spec").path("securityContext").path("runAsNonRoot").asBoolean()).isTrue();
        assertThat(container.path("securityContext").path("allowPrivilegeEscalation").asBoolean(true)).isFalse();

        // the budget and the Service select exactly these pods
        assertThat(pdb.path("spec").path("minAvailable").asInt()).isEqualTo(1);
        assertThat(pdb.path("spec").path("minAvailable").asInt()).isLessThan(replicas);
        for (JsonNode selector : List.of(pdb.path("spec").path("selector").path("matchLabels"),
                service.path("spec").path("selector"), deployment.path("spec").path("selector").path("matchLabels"))) {
            selector.fields().forEachRemaining(l -> assertThat(labels.path(l.getKey()).asText())
                    .as("pod label %s", l.getKey()).isEqualTo(l.getValue().asText()));
        }
        assertThat(labels.path("app.kubernetes.io/name").asText()).isEqualTo(overlay.equals("sidecar") ? "orders" : "outbox-relay");
    }

    private static JsonNode only(List<JsonNode> docs, String kind) {
        List<JsonNode> of = docs.stream().filter(d -> d.path("kind").asText().equals(kind)).toList();
        assertThat(of).as("one %s", kind).hasSize(1);
        return of.get(0);
    }
}
