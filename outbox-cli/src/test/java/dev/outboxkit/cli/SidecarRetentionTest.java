package dev.outboxkit.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.outboxkit.testkit.History;
import dev.outboxkit.testkit.JavaProcess;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.time.Duration;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Retention inside the relay sidecar: on schedule, one sidecar per schema at a time, never in the relay's way. */
@ExtendWith(OutboxTestkitExtension.class)
class SidecarRetentionTest {

    private static final Duration WAIT = Duration.ofSeconds(120);
    /** Retention's own lock (RetentionLock's class), not the relays' liveness locks, which every sidecar holds too. */
    private static final String ADVISORY = "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted"
            + " AND objsubid = 2 AND classid = hashtext('outboxkit.retention')::oid"
            + " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())";

    private static Map<String, String> env(TestDatabase db, TestKafka kafka) {
        return Map.of("OUTBOX_JDBC_URL", db.jdbcUrl(), "OUTBOX_USER", db.user(), "OUTBOX_PASSWORD", db.password(),
                "OUTBOX_BOOTSTRAP_SERVERS", kafka.bootstrapServers());
    }

    private static JavaProcess sidecar(String name, TestDatabase db, TestKafka kafka, String prefix, String... extra) {
        List<String> args = new ArrayList<>(List.of("relay", "poll", "--http-port", "0", "--lease-duration", "PT30S",
                "--route", prefix + ".${aggregateType}", "--instance-id", name));
        args.addAll(List.of(extra));
        return JavaProcess.start(name, Main.class, args, List.of(), env(db, kafka));
    }

    static int port(JavaProcess sidecar) {
        assertThat(sidecar.awaitOutput("health and metrics on http://0.0.0.0:", WAIT)).as(sidecar.output()).isTrue();
        Matcher m = Pattern.compile("health and metrics on http://0\\.0\\.0\\.0:(\\d+)").matcher(sidecar.output());
        assertThat(m.find()).isTrue();
        return Integer.parseInt(m.group(1));
    }

    private static HttpResponse<String> get(int port, String path) throws Exception {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    }

    /** A Prometheus sample of {@code name} whose labels contain {@code label}; 0 when absent. */
    private static double metric(int port, String name, String label) throws Exception {
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name) + "\\{[^}]*" + Pattern.quote(label) + "[^}]*\\} (\\S+)$")
                .matcher(get(port, "/metrics").body());
        return m.find() ? Double.parseDouble(m.group(1)) : 0;
    }

    private static void deadLetter(TestDatabase db, int daysAgo) throws Exception {
        db.exec("INSERT INTO outbox_dead_letter (id, seq, aggregate_type, aggregate_id, event_type, payload, headers,"
                + " created_at, error_class, error_message, attempts, parked_at, parked_by) VALUES (gen_random_uuid(), 1,"
                + " 'order', 'o', 'T', '{}', '{}', now(), 'E', 'm', 1, now() - interval '" + daysAgo + " days', 'r')");
    }

    /** Writes {@code n} events over a few aggregates, each its own transaction, and records them in {@code history}. */
    static void write(TestDatabase db, History history, int n) throws Exception {
        try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement(
                "INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload) VALUES (?, 'order', ?, 'Placed', ?::jsonb)")) {
            for (int i = 0; i < n; i++) {
                UUID id = UUID.randomUUID();
                String aggregate = "o-" + (i % 5);
                ps.setObject(1, id);
                ps.setString(2, aggregate);
                ps.setString(3, "{\"i\": " + i + "}");
                ps.executeUpdate();
                history.committed(id, aggregate, System.nanoTime());
            }
        }
    }

    /** Reads the topic as a consumer would: first delivery of an id applies it. */
    static History.Report read(TestKafka kafka, String topic, History history) {
        Set<UUID> seen = new HashSet<>();
        for (ConsumerRecord<byte[], byte[]> r : kafka.readAll(List.of(topic))) {
            UUID id = UUID.fromString(new String(r.headers().lastHeader("id").value(), StandardCharsets.UTF_8));
            history.delivered(id);
            if (seen.add(id)) {
                history.applied(id, new String(r.key(), StandardCharsets.UTF_8));
            }
        }
        return history.check();
    }

    @Test
    void theSidecarPurgesOnScheduleButNeverWhatARedeliveryCanStillReach(TestDatabase db, TestKafka kafka) throws Exception {
        String prefix = TestKafka.uniqueTopic("sidecar-ret");
        String topic = prefix + ".order";
        kafka.createTopic(topic, 2);
        assertThat(CliRun.run(env(db, kafka), "intents", "enable").exitCode()).isZero();
        LocalDate old = LocalDate.now(ZoneOffset.UTC).minusDays(20);
        db.exec("SELECT outbox_intent_create_partitions('" + old + "', 1)");
        String oldPartition = "outbox_intent_p" + old.toString().replace("-", "");
        deadLetter(db, 40);
        deadLetter(db, 2);
        // ten ids applied long ago from offsets 0..9 of a topic; the group committed only up to 5
        try (Admin admin = kafka.admin()) {
            admin.alterConsumerGroupOffsets("billing", Map.of(new TopicPartition(topic, 0), new OffsetAndMetadata(5))).all().get();
        }
        db.exec("INSERT INTO processed_event (consumer_group, event_id, processed_at, topic, kafka_partition, kafka_offset)"
                + " SELECT 'billing', gen_random_uuid(), now() - interval '10 days', '" + topic + "', 0, o FROM generate_series(0, 9) o");
        History history = new History();
        write(db, history, 50);

        try (JavaProcess relay = sidecar("sidecar-ret", db, kafka, prefix, "--retention-interval", "PT1S",
                "--dead-letter-retention", "P30D", "--group", "billing", "--processed-retention", "P7D")) {
            int port = port(relay);
            await().atMost(WAIT).until(() -> db.count("SELECT count(*) FROM outbox_dead_letter") == 1
                    && db.count("SELECT count(*) FROM processed_event") == 5
                    && db.count("SELECT count(to_regclass('" + oldPartition + "'))") == 0);
            double rounds = metric(port, "outbox_retention_runs_total", "outcome=\"success\"");
            assertThat(rounds).isPositive();
            assertThat(metric(port, "outbox_retention_purged_total", "what=\"dead_letters\"")).isEqualTo(1);
            assertThat(metric(port, "outbox_retention_purged_total", "what=\"processed_events\"")).isEqualTo(5);
            assertThat(metric(port, "outbox_retention_purged_total", "what=\"intent_partitions\"")).isEqualTo(1);
            // later rounds still keep the ids the group has not committed past
            await().atMost(WAIT).until(() -> metric(port, "outbox_retention_runs_total", "outcome=\"success\"") >= rounds + 2);
            assertThat(db.count("SELECT count(*) FROM processed_event WHERE kafka_offset >= 5")).isEqualTo(5);
            assertThat(get(port, "/metrics").body()).contains("outbox_retention_since_last_success_seconds")
                    .contains("outbox_retention_duration_seconds");
            await().atMost(WAIT).until(() -> db.count("SELECT count(*) FROM outbox_event") == 0);
            History.Report report = read(kafka, topic, history);
            assertThat(report.ok()).as(report.summary()).isTrue();

            assertThat(relay.terminate(WAIT)).as(relay.output()).isZero();
            assertThat(relay.output()).contains("schedule stopped").contains("relay poll stopped");
        }
    }

    @Test
    void ofTwoSidecarsOnlyOneRunsARound(TestDatabase db, TestKafka kafka) throws Exception {
        String prefix = TestKafka.uniqueTopic("sidecar-lock");
        kafka.createTopic(prefix + ".order", 2);
        deadLetter(db, 40);
        String[] retention = {"--retention-interval", "PT1S", "--dead-letter-retention", "P30D"};
        try (Connection blocker = db.connect(); Statement s = blocker.createStatement();
             JavaProcess a = sidecar("sidecar-a", db, kafka, prefix, retention);
             JavaProcess b = sidecar("sidecar-b", db, kafka, prefix, retention)) {
            // Whoever starts a round first stays inside it: its purge waits for the dead-letter table.
            blocker.setAutoCommit(false);
            s.execute("LOCK TABLE outbox_dead_letter IN EXCLUSIVE MODE");
            int portA = port(a);
            int portB = port(b);
            await().atMost(WAIT).until(() -> db.count(ADVISORY) == 1
                    && metric(portA, "outbox_retention_runs_total", "outcome=\"skipped\"")
                    + metric(portB, "outbox_retention_runs_total", "outcome=\"skipped\"") >= 3);
            assertThat(db.count(ADVISORY)).isEqualTo(1);
            assertThat(metric(portA, "outbox_retention_runs_total", "outcome=\"success\"")
                    + metric(portB, "outbox_retention_runs_total", "outcome=\"success\"")).isZero();
            blocker.commit();

            await().atMost(WAIT).until(() -> db.count("SELECT count(*) FROM outbox_dead_letter") == 0);
            await().atMost(WAIT).until(() -> metric(portA, "outbox_retention_runs_total", "outcome=\"success\"") >= 1
                    && metric(portB, "outbox_retention_runs_total", "outcome=\"success\"") >= 1);
            assertThat(metric(portA, "outbox_retention_purged_total", "what=\"dead_letters\"")
                    + metric(portB, "outbox_retention_purged_total", "what=\"dead_letters\"")).isEqualTo(1);
            assertThat(a.terminate(WAIT)).as(a.output()).isZero();
            assertThat(b.terminate(WAIT)).as(b.output()).isZero();
        }
    }

    @Test
    void aFailingRoundNeitherStopsPublishingNorFailsReadiness(TestDatabase db, TestKafka kafka) throws Exception {
        String prefix = TestKafka.uniqueTopic("sidecar-fail");
        String topic = prefix + ".order";
        kafka.createTopic(topic, 2);
        History history = new History();
        write(db, history, 20);
        try (JavaProcess relay = sidecar("sidecar-fail", db, kafka, prefix, "--retention-interval", "PT1S",
                "--group", "billing", "--consumer-jdbc-url", "jdbc:postgresql://127.0.0.1:1/nowhere?connectTimeout=2")) {
            int port = port(relay);
            await().atMost(WAIT).until(() -> metric(port, "outbox_retention_runs_total", "outcome=\"failure\"") >= 2);
            assertThat(relay.output()).contains("retention on schema public failed").contains("keeps publishing");
            write(db, history, 20);
            await().atMost(WAIT).until(() -> db.count("SELECT count(*) FROM outbox_event") == 0);
            assertThat(get(port, "/health/ready").statusCode()).isEqualTo(200);
            assertThat(metric(port, "outbox_retention_runs_total", "outcome=\"success\"")).isZero();
            History.Report report = read(kafka, topic, history);
            assertThat(report.ok()).as(report.summary()).isTrue();
            assertThat(report.intents()).isEqualTo(40);
            assertThat(relay.terminate(WAIT)).as(relay.output()).isZero();
        }
    }

    @Test
    void aRetentionIntervalBelowOneSecondIsAUsageError() {
        CliRun r = CliRun.run(Map.of(), "relay", "poll", "--jdbc-url", "jdbc:postgresql://127.0.0.1:1/x", "--user", "x",
                "--bootstrap-servers", "127.0.0.1:1", "--http-port", "-1", "--retention-interval", "PT0.1S");
        assertThat(r.exitCode()).as(r.all()).isEqualTo(2);
        assertThat(r.err()).contains("--retention-interval").contains("at least 1 second");
    }
}
