package dev.outboxkit.relay.poller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.outboxkit.testkit.History;
import dev.outboxkit.testkit.JavaProcess;
import dev.outboxkit.testkit.OutboxRows;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.RelayLeases;
import dev.outboxkit.testkit.Sql;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Three relay instances in child JVMs under concurrent writers; one is killed -9 mid-stream, one
 * is frozen (SIGSTOP) for longer than its lease and then resumed. Nothing may be lost, no
 * aggregate reordered, and the frozen instance's late work must be fenced off. The killed one's
 * partitions are taken over at once (its liveness lock vanished with its connections), measured
 * from the kill to the survivor's acknowledgement of an event of them; the frozen one's only at
 * its lease expiry (its connections stay open).
 */
@ExtendWith(OutboxTestkitExtension.class)
class MultiInstanceTest {

    private static final long LEASE_MILLIS = 6000;
    /** relay-a's own lease (each holder sets its lease's expiry): long, so that only its liveness lock can explain a fast takeover. */
    private static final long KILLED_LEASE_MILLIS = 60_000;

    @Test
    void threeInstancesKillAndFreezeLoseNothingAndKeepOrder(TestDatabase db, TestKafka kafka) throws Exception {
        String topic = TestKafka.uniqueTopic("poll-multi");
        kafka.createTopic(topic, 6);
        History history = new History();
        List<JavaProcess> relays = new ArrayList<>();
        try {
            for (String name : List.of("relay-a", "relay-b", "relay-c")) {
                relays.add(JavaProcess.start(name, RelayMain.class, List.of(db.jdbcUrl(), db.user(), db.password(),
                        kafka.bootstrapServers(), topic, name,
                        Long.toString(name.equals("relay-a") ? KILLED_LEASE_MILLIS : LEASE_MILLIS), "300"), List.of(), Map.of()));
            }
            for (JavaProcess r : relays) {
                assertThat(r.awaitOutput("RELAY STARTED", Duration.ofSeconds(90))).as(r.output()).isTrue();
            }
            JavaProcess a = relays.get(0);
            JavaProcess b = relays.get(1);
            JavaProcess c = relays.get(2);
            // The three share the 64 partitions (21/21/22).
            await().atMost(Duration.ofSeconds(60)).untilAsserted(() ->
                    assertThat(RelayLeases.partitionsByHolder(db)).containsOnlyKeys("relay-a", "relay-b", "relay-c")
                            .allSatisfy((holder, n) -> assertThat(n).isBetween(21, 22)));

            try (Writers writers = new Writers(db, history, 4, 40, 2)) {
                await().atMost(Duration.ofSeconds(60)).until(() -> writers.committed() > 2000);
                Set<String> killedLeases = leasesOf(db, "relay-a").keySet();
                long killedAt = System.nanoTime();
                a.kill9();
                commitProbe(db, history, aggregateIn(db, killedLeases)); // so that one row at least waits
                // its rows as any other instance sees them (its claim in flight was never committed): only a survivor,
                // after taking a lease of relay-a, can delete one, once Kafka acknowledged it
                long[] backlog = rowsIn(db, killedLeases, Long.MAX_VALUE);
                await().atMost(Duration.ofMillis(KILLED_LEASE_MILLIS)).pollInterval(Duration.ofMillis(5))
                        .until(() -> !RelayLeases.partitionsByHolder(db).containsKey("relay-a"));
                long leasesMillis = (System.nanoTime() - killedAt) / 1_000_000;
                await().atMost(Duration.ofMillis(KILLED_LEASE_MILLIS)).pollInterval(Duration.ofMillis(5))
                        .until(() -> rowsIn(db, killedLeases, backlog[1])[0] < backlog[0]);
                long ackMillis = (System.nanoTime() - killedAt) / 1_000_000;
                System.out.printf("FAILOVER poll kill -9 -> the killed instance's leases taken: %d ms; the first of its "
                        + "%d waiting rows acknowledged (and deleted) by a survivor: %d ms (its lease %d ms)%n", leasesMillis,
                        backlog[0], ackMillis, KILLED_LEASE_MILLIS);
                // Bounds for a loaded CI machine (the target, 1 s to the first ack, is for a quiet one). Without the
                // liveness lock neither could be met: the leases were renewed at most a second before the kill.
                assertThat(leasesMillis).as("leases taken at once, not at expiry").isLessThan(10_000);
                assertThat(ackMillis).as("published long before the lease could expire").isLessThan(KILLED_LEASE_MILLIS / 2);
                assertThat(b.output() + c.output()).contains("relay-a gone (the database closed its session");
                long atKill = writers.committed();
                await().atMost(Duration.ofSeconds(60)).until(() -> writers.committed() > atKill + 2000);

                assertThat(RelayLeases.partitionsByHolder(db)).containsKey("relay-b");
                b.pause();
                Map<String, Timestamp> frozenUntil = leasesOf(db, "relay-b");
                // relay-c takes over relay-b's partitions once their leases expired.
                await().atMost(Duration.ofSeconds(90)).untilAsserted(() ->
                        assertThat(RelayLeases.partitionsByHolder(db)).isEqualTo(Map.of("relay-c", 64)));
                // its connections are open, so its liveness lock is held: no lease of it was taken before it expired
                for (Map.Entry<String, Timestamp> lease : frozenUntil.entrySet()) {
                    assertThat(acquiredAt(db, lease.getKey())).as("%s taken over", lease.getKey())
                            .isAfterOrEqualTo(lease.getValue());
                }
                long atTakeOver = writers.committed();
                await().atMost(Duration.ofSeconds(60)).until(() -> writers.committed() > atTakeOver + 1000);
                b.resume();
                // The frozen instance finds its leases gone and its work rolled back, and says so.
                assertThat(b.awaitOutput("FENCED", Duration.ofSeconds(60))).as(b.output()).isTrue();
                // It rejoins and gets its share back.
                await().atMost(Duration.ofSeconds(90)).untilAsserted(() ->
                        assertThat(RelayLeases.partitionsByHolder(db)).containsOnlyKeys("relay-b", "relay-c"));
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

    /** The live leases of {@code holder}: key to expiry (database clock). */
    private static Map<String, Timestamp> leasesOf(TestDatabase db, String holder) throws Exception {
        Map<String, Timestamp> out = new HashMap<>();
        try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement("SELECT lease_key, expires_at FROM "
                + "outbox_relay_lease WHERE holder = ? AND expires_at > now()")) {
            ps.setString(1, holder);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.put(rs.getString(1), rs.getTimestamp(2));
                }
            }
        }
        assertThat(out).as("leases of %s", holder).isNotEmpty();
        return out;
    }

    private static Timestamp acquiredAt(TestDatabase db, String leaseKey) throws Exception {
        try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement(
                "SELECT acquired_at FROM outbox_relay_lease WHERE lease_key = ?")) {
            ps.setString(1, leaseKey);
            try (ResultSet rs = ps.executeQuery()) {
                assertThat(rs.next()).as("lease %s held", leaseKey).isTrue();
                return rs.getTimestamp(1);
            }
        }
    }

    /** Rows of the partitions of {@code leaseKeys} (poll/n) with seq at most {@code maxSeq}: their count and largest seq. */
    private static long[] rowsIn(TestDatabase db, Set<String> leaseKeys, long maxSeq) throws Exception {
        Integer[] partitions = leaseKeys.stream().map(k -> Integer.parseInt(k.substring("poll/".length())))
                .toArray(Integer[]::new);
        try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement("SELECT count(*), coalesce(max(seq), 0)"
                + " FROM outbox_event WHERE seq <= ? AND ((hashtext(aggregate_type || '/' || aggregate_id) & 2147483647) % 64)"
                + " = ANY (?)")) {
            ps.setLong(1, maxSeq);
            ps.setArray(2, c.createArrayOf("int4", partitions));
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return new long[] {rs.getLong(1), rs.getLong(2)};
            }
        }
    }

    /** An aggregate id of type account that hashes into one of the partitions of {@code leaseKeys} (poll/n). */
    private static String aggregateIn(TestDatabase db, Set<String> leaseKeys) throws Exception {
        Integer[] partitions = leaseKeys.stream().map(k -> Integer.parseInt(k.substring("poll/".length())))
                .toArray(Integer[]::new);
        try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement("SELECT 'probe-' || g FROM "
                + "generate_series(1, 10000) g WHERE ((hashtext('account/probe-' || g) & 2147483647) % 64) = ANY (?) LIMIT 1")) {
            ps.setArray(1, c.createArrayOf("int4", partitions));
            try (ResultSet rs = ps.executeQuery()) {
                assertThat(rs.next()).isTrue();
                return rs.getString(1);
            }
        }
    }

    private static void commitProbe(TestDatabase db, History history, String aggregate) throws Exception {
        try (Connection c = db.connect()) {
            history.committed(OutboxRows.insert(c, "account", aggregate, "{\"probe\": true}"), aggregate, 0);
        }
    }
}
