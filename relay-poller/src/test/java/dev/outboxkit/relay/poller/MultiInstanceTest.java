package dev.outboxkit.relay.poller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.outboxkit.testkit.History;
import dev.outboxkit.testkit.JavaProcess;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.Sql;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Three relay instances in child JVMs under concurrent writers; one is killed -9 mid-stream, one
 * is frozen (SIGSTOP) for longer than its lease and then resumed. Nothing may be lost, no
 * aggregate reordered, and the frozen instance's late work must be fenced off.
 */
@ExtendWith(OutboxTestkitExtension.class)
class MultiInstanceTest {

    private static final long LEASE_MILLIS = 6000;

    @Test
    void threeInstancesKillAndFreezeLoseNothingAndKeepOrder(TestDatabase db, TestKafka kafka) throws Exception {
        String topic = TestKafka.uniqueTopic("poll-multi");
        kafka.createTopic(topic, 6);
        History history = new History();
        List<JavaProcess> relays = new ArrayList<>();
        try {
            for (String name : List.of("relay-a", "relay-b", "relay-c")) {
                relays.add(JavaProcess.start(name, RelayMain.class, List.of(db.jdbcUrl(), db.user(), db.password(),
                        kafka.bootstrapServers(), topic, name, Long.toString(LEASE_MILLIS), "300"), List.of(), Map.of()));
            }
            for (JavaProcess r : relays) {
                assertThat(r.awaitOutput("RELAY STARTED", Duration.ofSeconds(90))).as(r.output()).isTrue();
            }
            JavaProcess a = relays.get(0);
            JavaProcess b = relays.get(1);
            JavaProcess c = relays.get(2);
            // The three share the 64 partitions (21/21/22).
            await().atMost(Duration.ofSeconds(60)).untilAsserted(() ->
                    assertThat(liveLeasesByHolder(db)).containsOnlyKeys("relay-a", "relay-b", "relay-c")
                            .allSatisfy((holder, n) -> assertThat(n).isBetween(21, 22)));

            try (Writers writers = new Writers(db, history, 4, 40, 2)) {
                await().atMost(Duration.ofSeconds(60)).until(() -> writers.committed() > 2000);
                a.kill9();
                long atKill = writers.committed();
                await().atMost(Duration.ofSeconds(60)).until(() -> writers.committed() > atKill + 2000);

                assertThat(liveLeasesByHolder(db)).containsKey("relay-b");
                b.pause();
                // relay-c takes over everything once relay-a's and relay-b's leases expired.
                await().atMost(Duration.ofSeconds(90)).untilAsserted(() ->
                        assertThat(liveLeasesByHolder(db)).isEqualTo(Map.of("relay-c", 64)));
                long atTakeOver = writers.committed();
                await().atMost(Duration.ofSeconds(60)).until(() -> writers.committed() > atTakeOver + 1000);
                b.resume();
                // The frozen instance finds its leases gone and its work rolled back, and says so.
                assertThat(b.awaitOutput("FENCED", Duration.ofSeconds(60))).as(b.output()).isTrue();
                // It rejoins and gets its share back.
                await().atMost(Duration.ofSeconds(90)).untilAsserted(() ->
                        assertThat(liveLeasesByHolder(db)).containsOnlyKeys("relay-b", "relay-c"));
                long atRejoin = writers.committed();
                await().atMost(Duration.ofSeconds(60)).until(() -> writers.committed() > atRejoin + 1000);
            }
            Outbox.awaitEmpty(db, Duration.ofSeconds(120));
            // Graceful stop gives every lease back.
            for (JavaProcess r : List.of(b, c)) {
                r.terminate(Duration.ofSeconds(60));
                assertThat(r.output()).contains("RELAY STOPPED");
            }
            try (Connection conn = db.connect()) {
                assertThat(Sql.count(conn, "SELECT count(*) FROM outbox_relay_lease")).isZero();
            }
        } finally {
            relays.forEach(JavaProcess::close);
        }
        History.Report report = Topic.check(kafka, List.of(topic), history, "multi-instance");
        assertThat(report.lost()).as(report.summary()).isZero();
        assertThat(report.orderViolations()).as(report.summary()).isZero();
        assertThat(report.unexpected()).as(report.summary()).isZero();
        assertThat(report.intents()).isGreaterThan(5000);
    }

    static Map<String, Integer> liveLeasesByHolder(TestDatabase db) throws Exception {
        Map<String, Integer> out = new HashMap<>();
        try (Connection c = db.connect(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(
                "SELECT holder, count(*) FROM outbox_relay_lease WHERE lease_key LIKE 'poll/%' AND expires_at > now() "
                        + "GROUP BY holder")) {
            while (rs.next()) {
                out.put(rs.getString(1), rs.getInt(2));
            }
        }
        return out;
    }
}
