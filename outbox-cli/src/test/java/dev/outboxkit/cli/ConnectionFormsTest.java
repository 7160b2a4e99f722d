package dev.outboxkit.cli;

import static dev.outboxkit.cli.SidecarRetentionTest.read;
import static dev.outboxkit.cli.SidecarRetentionTest.write;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.outboxkit.testkit.History;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import dev.outboxkit.testkit.TestPostgres;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.awaitility.core.ConditionFactory;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;
import sun.misc.Signal;

/**
 * Both sidecars take the same connection forms — user and password in the URL, flags, environment, a config
 * file — and relay a backlog end to end with each, as a role whose password the server checks. Sidecars run in
 * this JVM (Main.execute) and stop on a real SIGTERM raised here, one at a time.
 */
@ExtendWith(OutboxTestkitExtension.class)
class ConnectionFormsTest {

    private static final String ROLE = "outbox_conn_forms";
    private static final String PASSWORD = "pw-" + UUID.randomUUID();
    private static final int BACKLOG = 300;
    private static final int LIVE = 50;
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final Duration POLL = Duration.ofMillis(250);

    /** The ways a sidecar can be told where the database is and who it connects as. */
    enum Form { URL, FLAGS, ENVIRONMENT, CONFIG_FILE }

    @BeforeAll
    static void passwordRole(TestPostgres postgres) {
        // REPLICATION for the CDC relay's slot; the poller does not need it, and one role keeps the table simple
        postgres.createPasswordRole(ROLE, PASSWORD, "REPLICATION");
    }

    static Stream<Arguments> forms() {
        List<Arguments> cases = new ArrayList<>();
        for (String relay : List.of("poll", "cdc")) {
            for (Form form : Form.values()) {
                cases.add(Arguments.of(relay, form));
            }
        }
        return cases.stream();
    }

    @ParameterizedTest(name = "relay {0}, {1}")
    @MethodSource("forms")
    void eachFormRelaysABacklogEndToEnd(String relay, Form form, TestDatabase db, TestKafka kafka, @TempDir Path dir)
            throws Exception {
        assertThatThrownBy(() -> connect(db, PASSWORD + "-wrong")).as("the server checks the role's password")
                .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("28P01"));
        grant(db, relay);
        String name = relay + "-" + form.name().toLowerCase().replace('_', '-');
        String prefix = TestKafka.uniqueTopic("conn-" + name);
        String topic = prefix + ".order";
        kafka.createTopic(topic, 2);
        String slot = "conn_" + db.name();
        History history = new History();
        write(db, history, BACKLOG);

        List<String> args = new ArrayList<>(List.of("relay", relay, "--http-port", "-1", "--instance-id", "conn-" + name,
                "--route", prefix + ".${aggregateType}"));
        if (relay.equals("cdc")) {
            args.addAll(List.of("--slot-name", slot));
        }
        Map<String, String> env = connection(form, db, kafka, dir, args);

        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CompletableFuture<Integer> sidecar = CompletableFuture.supplyAsync(() -> Main.execute(env,
                new PrintWriter(out, true), new PrintWriter(err, true), args.toArray(String[]::new)));
        try {
            whileRunning(sidecar, out, err).until(() -> delivered(kafka, topic).size() >= BACKLOG);
            if (relay.equals("cdc")) {
                // Debezium's replication connection logged in as the role (with its password): later rows come through it
                String walsenderAsRole = "SELECT count(*) FROM pg_replication_slots s JOIN pg_stat_activity a"
                        + " ON a.pid = s.active_pid WHERE s.slot_name = '" + slot + "' AND a.usename = '" + ROLE + "'";
                whileRunning(sidecar, out, err).until(() -> db.count(walsenderAsRole) == 1);
            } else {
                assertThat(db.count("SELECT count(*) FROM pg_stat_activity WHERE usename = '" + ROLE + "' AND datname = '"
                        + db.name() + "' AND application_name = 'outboxkit-poll'")).isPositive();
            }
            write(db, history, LIVE);
            whileRunning(sidecar, out, err).until(() -> delivered(kafka, topic).size() >= BACKLOG + LIVE
                    && db.count("SELECT count(*) FROM outbox_event") == 0);
            History.Report report = read(kafka, topic, history);
            assertThat(report.ok()).as(report.summary()).isTrue();
            assertThat(report.intents()).isEqualTo(BACKLOG + LIVE);
        } finally {
            stop(sidecar, out);
            if (relay.equals("cdc")) {
                db.dropReplicationSlot(slot);
            }
        }
        assertThat(sidecar.get()).as(out + "" + err).isZero();
        assertThat(out.toString()).contains("relay " + relay + " started").contains("relay " + relay + " stopped");
        assertThat(out + "" + err).doesNotContain(PASSWORD);
    }

    @ParameterizedTest(name = "relay {0}")
    @ValueSource(strings = {"poll", "cdc"})
    void noUserAnywhereIsAConfigurationErrorNamingEveryPlace(String relay, TestDatabase db, TestKafka kafka) {
        CliRun r = CliRun.run(Map.of("OUTBOX_JDBC_URL", db.jdbcUrl() + "?password=" + PASSWORD,
                "OUTBOX_BOOTSTRAP_SERVERS", kafka.bootstrapServers()), "relay", relay, "--http-port", "-1");
        assertThat(r.exitCode()).as(r.all()).isEqualTo(2);
        assertThat(r.err()).contains("configuration error: user is required: set --user, OUTBOX_USER or user= in the "
                + "--config file, or put user=ROLE (and password=…) in the JDBC URL (--jdbc-url, OUTBOX_JDBC_URL or "
                + "jdbc-url= in the --config file)");
        assertThat(r.all()).doesNotContain(PASSWORD);
    }

    /** Adds the form's connection settings (and Kafka's) to {@code args}, or returns them as the environment. */
    private static Map<String, String> connection(Form form, TestDatabase db, TestKafka kafka, Path dir, List<String> args)
            throws Exception {
        String url = db.jdbcUrl();
        switch (form) {
            case URL -> args.addAll(List.of("--jdbc-url", url + "?user=" + ROLE + "&password=" + PASSWORD,
                    "--bootstrap-servers", kafka.bootstrapServers()));
            case FLAGS -> args.addAll(List.of("--jdbc-url", url, "--user", ROLE, "--password", PASSWORD,
                    "--bootstrap-servers", kafka.bootstrapServers()));
            case ENVIRONMENT -> {
                return Map.of("OUTBOX_JDBC_URL", url, "OUTBOX_USER", ROLE, "OUTBOX_PASSWORD", PASSWORD,
                        "OUTBOX_BOOTSTRAP_SERVERS", kafka.bootstrapServers());
            }
            case CONFIG_FILE -> {
                Path file = dir.resolve("outbox.properties");
                Properties p = new Properties();
                p.setProperty("jdbc-url", url);
                p.setProperty("user", ROLE);
                p.setProperty("password", PASSWORD);
                p.setProperty("bootstrap-servers", kafka.bootstrapServers());
                try (var w = Files.newBufferedWriter(file)) {
                    p.store(w, null);
                }
                args.addAll(List.of("--config", file.toString()));
            }
        }
        return Map.of();
    }

    /** The grants each relay's README documents, in this test's database. */
    private static void grant(TestDatabase db, String relay) throws SQLException {
        List<String> grants = relay.equals("poll") ? List.of(
                "GRANT USAGE ON SCHEMA public TO " + ROLE,
                "GRANT SELECT, INSERT, UPDATE, DELETE ON public.outbox_event TO " + ROLE,
                "GRANT SELECT, INSERT, UPDATE ON public.outbox_dead_letter TO " + ROLE,
                "GRANT SELECT, INSERT, UPDATE, DELETE ON public.outbox_relay_lease, public.outbox_relay_member TO " + ROLE,
                "GRANT USAGE ON SEQUENCE public.outbox_fence_seq TO " + ROLE,
                "GRANT SELECT, INSERT, UPDATE, DELETE ON public.outbox_relay_report TO " + ROLE)
                : List.of(
                "GRANT USAGE ON SCHEMA public TO " + ROLE,
                "GRANT SELECT, DELETE ON public.outbox_event TO " + ROLE,
                "GRANT SELECT, INSERT, UPDATE ON public.outbox_dead_letter TO " + ROLE,
                "GRANT SELECT, INSERT, UPDATE, DELETE ON public.outbox_relay_lease TO " + ROLE,
                "GRANT USAGE ON SEQUENCE public.outbox_fence_seq TO " + ROLE,
                "GRANT SELECT, INSERT, UPDATE, DELETE ON public.outbox_cdc_offset, public.outbox_cdc_slot TO " + ROLE,
                "GRANT SELECT, INSERT, DELETE ON public.outbox_cdc_heartbeat TO " + ROLE,
                "GRANT SELECT, INSERT, UPDATE, DELETE ON public.outbox_relay_report TO " + ROLE,
                "CREATE PUBLICATION outboxkit_pub FOR TABLE public.outbox_event, public.outbox_cdc_heartbeat"
                        + " WITH (publish = 'insert')");
        try (Connection c = db.connect(); Statement s = c.createStatement()) {
            for (String grant : grants) {
                s.execute(grant);
            }
        }
    }

    private static Connection connect(TestDatabase db, String password) throws SQLException {
        Properties p = new Properties();
        p.setProperty("user", ROLE);
        p.setProperty("password", password);
        return DriverManager.getConnection(db.jdbcUrl(), p);
    }

    private static Set<UUID> delivered(TestKafka kafka, String topic) {
        Set<UUID> ids = new HashSet<>();
        for (ConsumerRecord<byte[], byte[]> r : kafka.readAll(List.of(topic))) {
            ids.add(UUID.fromString(header(r, "id")));
        }
        return ids;
    }

    private static String header(ConsumerRecord<byte[], byte[]> r, String name) {
        return new String(r.headers().lastHeader(name).value(), StandardCharsets.UTF_8);
    }

    /** Waits for a condition, failing at once (with the sidecar's output) if the sidecar exits meanwhile. */
    private static ConditionFactory whileRunning(CompletableFuture<Integer> sidecar, StringWriter out, StringWriter err) {
        return await().atMost(WAIT).pollInterval(POLL)
                .failFast(() -> assertThat(sidecar.isDone()).as("sidecar exited: %s%s", out, err).isFalse());
    }

    /**
     * SIGTERM, as an orchestrator sends it, but only once the sidecar said it started: its handler is registered by
     * then (before that, the JVM's own handler would end the test run). The handler stays registered for the JVM's
     * life, so a raise after the sidecar finished only meets its spent latch. A sidecar that never started is left to
     * the failing test's JVM.
     */
    private static void stop(CompletableFuture<Integer> sidecar, StringWriter out) throws Exception {
        if (!sidecar.isDone() && out.toString().contains(" started")) {
            Signal.raise(new Signal("TERM"));
            sidecar.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        }
    }
}
