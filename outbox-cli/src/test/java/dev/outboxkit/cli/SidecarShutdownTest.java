package dev.outboxkit.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.outboxkit.testkit.History;
import dev.outboxkit.testkit.JavaProcess;
import dev.outboxkit.testkit.KafkaProcess;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.Ports;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import dev.outboxkit.testkit.fault.TcpFaultProxy;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * SIGTERM to a sidecar whose PostgreSQL and Kafka both vanished (connections that neither answer nor close, as when
 * their hosts are gone): the process exits within --shutdown-deadline instead of waiting out every driver and client
 * timeout. The test sets a short deadline, so that it waits out 5 s rather than the default's 20 s (below Kubernetes'
 * default 30 s grace period; the README's generated option table, checked by GeneratedReferencesTest, names it).
 */
@ExtendWith(OutboxTestkitExtension.class)
class SidecarShutdownTest {

    private static final Duration WAIT = Duration.ofSeconds(120);
    /** The stop these sidecars are given: nothing answers, so the stop cannot finish before it. */
    private static final Duration DEADLINE = Duration.ofSeconds(5);
    /** The deadline plus the JVM's own exit. */
    private static final Duration BOUND = DEADLINE.plusSeconds(5);

    private static TcpFaultProxy kafkaProxy;
    private static KafkaProcess kafka;

    @BeforeAll
    static void startKafkaBehindAProxy() {
        int brokerPort = Ports.free();
        kafkaProxy = TcpFaultProxy.start("shutdown-kafka", "127.0.0.1", brokerPort);
        kafka = KafkaProcess.builder().name("shutdown-kafka").port(brokerPort)
                .advertisedAddress(kafkaProxy.host(), kafkaProxy.port()).build();
    }

    @AfterAll
    static void stopKafka() {
        try {
            kafka.close();
        } finally {
            kafkaProxy.close();
        }
    }

    /** Both relays at once (they share nothing but the broker), so the test waits out one deadline, not two. */
    @Test
    void sidecarsWhoseDatabaseAndKafkaAreGoneStopWithinTheirDeadline(TestDatabase pollDb, TestDatabase cdcDb)
            throws Exception {
        kafkaProxy.heal();
        String slot = "shutdown_" + cdcDb.name();
        Map<String, TestDatabase> dbs = new LinkedHashMap<>();
        dbs.put("poll", pollDb);
        dbs.put("cdc", cdcDb);
        Map<String, TcpFaultProxy> pgProxies = new LinkedHashMap<>();
        Map<String, JavaProcess> sidecars = new LinkedHashMap<>();
        try {
            for (Map.Entry<String, TestDatabase> e : dbs.entrySet()) {
                String relay = e.getKey();
                TestDatabase db = e.getValue();
                String prefix = TestKafka.uniqueTopic("shutdown-" + relay);
                kafka.createTopic(prefix + ".order", 2);
                TcpFaultProxy pgProxy = TcpFaultProxy.start("shutdown-pg-" + relay, db.server().host(), db.server().port());
                pgProxies.put(relay, pgProxy);
                // A lease longer than the whole stop (BOUND): with 5 s, the CDC relay once lost its lease to the cut-off
                // database during the stop, stood by and exited 0 in 3 s (nothing left to hand over), so the test raced
                // the lease's expiry instead of showing the stop deadline.
                List<String> args = new ArrayList<>(List.of("relay", relay, "--http-port", "0", "--lease-duration", "PT60S",
                        "--shutdown-deadline", DEADLINE.toString(), "--instance-id", "shutdown-" + relay,
                        "--route", prefix + ".${aggregateType}"));
                if (relay.equals("cdc")) {
                    args.addAll(List.of("--slot-name", slot));
                }
                Map<String, String> env = Map.of("OUTBOX_JDBC_URL", db.jdbcUrlVia(pgProxy.host(), pgProxy.port()),
                        "OUTBOX_USER", db.user(), "OUTBOX_PASSWORD", db.password(),
                        "OUTBOX_BOOTSTRAP_SERVERS", kafka.bootstrapServers());
                sidecars.put(relay, JavaProcess.start("shutdown-" + relay, Main.class, args, List.of(), env));
            }
            Map<String, Integer> ports = new LinkedHashMap<>();
            for (Map.Entry<String, JavaProcess> e : sidecars.entrySet()) {
                ports.put(e.getKey(), SidecarRetentionTest.port(e.getValue()));
                TestDatabase db = dbs.get(e.getKey());
                SidecarRetentionTest.write(db, new History(), 20);
                await().atMost(WAIT).until(() -> db.count("SELECT count(*) FROM outbox_event") == 0);
                // Ready: the CDC relay streams. The table empties already in its start-up drain, before Debezium
                // starts; cut off then, Debezium's start fails at once and the stop has nothing left to hang on (it
                // once exited 0 after 14 s at load 22, racing the deadline this test shows).
                int port = ports.get(e.getKey());
                await().atMost(WAIT).until(() -> status(port, "/health/ready") == 200);
            }

            // Both gone at once, with work pending: the relays' batches and lease renewals now hang.
            pgProxies.values().forEach(TcpFaultProxy::blackhole);
            kafkaProxy.blackhole();
            for (String relay : sidecars.keySet()) {
                SidecarRetentionTest.write(dbs.get(relay), new History(), 20);
            }
            for (int port : ports.values()) {
                await().atMost(WAIT).until(() -> status(port, "/health/ready") == 503);
            }

            long start = System.nanoTime();
            for (JavaProcess sidecar : sidecars.values()) {
                new ProcessBuilder("kill", "-TERM", Long.toString(sidecar.pid())).start().waitFor();
            }
            for (Map.Entry<String, JavaProcess> e : sidecars.entrySet()) {
                String relay = e.getKey();
                JavaProcess sidecar = e.getValue();
                Duration left = BOUND.minusNanos(System.nanoTime() - start);
                int exit;
                try {
                    exit = sidecar.waitForExit(left.isNegative() ? Duration.ZERO : left);
                } catch (IllegalStateException stillRunning) {
                    throw new AssertionError("relay " + relay + " still runs " + BOUND + " after SIGTERM; its threads:\n"
                            + sidecar.threadDump() + "\noutput:\n" + sidecar.output(), stillRunning);
                }
                System.out.println("relay " + relay + ": exit " + exit + " " + Duration.ofNanos(System.nanoTime() - start)
                        + " after SIGTERM");
                // A stop that cannot finish (nothing answers) says so, and what the next instance does about it.
                assertThat(exit).as(sidecar.output()).isEqualTo(1);
                assertThat(sidecar.output()).contains("relay " + relay + " did not finish stopping within " + DEADLINE)
                        .contains("published again");
            }
        } finally {
            sidecars.values().forEach(JavaProcess::close);
            pgProxies.values().forEach(TcpFaultProxy::close);
            kafkaProxy.heal();
            cdcDb.dropReplicationSlot(slot);
        }
    }

    @ParameterizedTest(name = "relay {0}")
    @ValueSource(strings = {"poll", "cdc"})
    void aShutdownDeadlineBelowOneSecondIsAUsageError(String relay) {
        CliRun r = CliRun.run(Map.of("OUTBOX_SHUTDOWN_DEADLINE", "PT0.5S"), "relay", relay, "--jdbc-url",
                "jdbc:postgresql://127.0.0.1:1/x", "--user", "x", "--bootstrap-servers", "127.0.0.1:1", "--http-port", "-1");
        assertThat(r.exitCode()).as(r.all()).isEqualTo(2);
        assertThat(r.err()).contains("--shutdown-deadline").contains("below 1 second");
    }

    private static int status(int port, String path) throws Exception {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.discarding()).statusCode();
    }
}
