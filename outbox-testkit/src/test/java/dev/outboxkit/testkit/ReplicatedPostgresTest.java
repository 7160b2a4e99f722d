package dev.outboxkit.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.outboxkit.testkit.ReplicatedPostgres.Node;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A primary and its synchronous standby on the embedded PostgreSQL 17 and on the machine's own binaries (15 here):
 * failovers under committed writes, rejoins, a planned switchover, and what becomes of a logical slot.
 */
class ReplicatedPostgresTest {

    private static final Logger log = LoggerFactory.getLogger(ReplicatedPostgresTest.class);
    private static final Duration WAIT = Duration.ofSeconds(60);

    /**
     * The machine's binaries: {@code OUTBOXKIT_TEST_POSTGRES_BIN}, else {@code pg_ctl} on the PATH, else the newest
     * {@code /usr/lib/postgresql/<major>/bin} (Debian's layout, not on the PATH by default).
     */
    static ReplicatedPostgres.Builder binaries(String kind) {
        if (kind.equals("embedded")) {
            return ReplicatedPostgres.builder().embeddedBinaries();
        }
        String configured = System.getenv("OUTBOXKIT_TEST_POSTGRES_BIN");
        if (configured != null && !configured.isEmpty()) {
            return ReplicatedPostgres.builder().binDirectory(Path.of(configured));
        }
        if (Stream.of(System.getenv("PATH").split(":")).anyMatch(dir -> Files.isExecutable(Path.of(dir, "pg_ctl")))) {
            return ReplicatedPostgres.builder().machineBinaries();
        }
        Path debian = Path.of("/usr/lib/postgresql");
        List<Path> majors = new ArrayList<>();
        if (Files.isDirectory(debian)) {
            try (Stream<Path> dirs = Files.list(debian)) {
                dirs.filter(d -> d.getFileName().toString().matches("\\d+")
                                && Files.isExecutable(d.resolve("bin").resolve("pg_ctl")))
                        .forEach(majors::add);
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }
        Assumptions.assumeFalse(majors.isEmpty(), "no PostgreSQL binaries of the machine: neither OUTBOXKIT_TEST_POSTGRES_BIN,"
                + " pg_ctl on the PATH nor /usr/lib/postgresql/<major>/bin (apt-get install postgresql)");
        majors.sort(Comparator.comparingInt(d -> Integer.parseInt(d.getFileName().toString())));
        return ReplicatedPostgres.builder().binDirectory(majors.get(majors.size() - 1).resolve("bin"));
    }

    @ParameterizedTest(name = "{0} binaries")
    @ValueSource(strings = {"embedded", "machine"})
    void fiveFailoversUnderCommittedWritesLoseNoCommittedRowAndTheUrlsFollowThePrimary(String kind) throws Exception {
        try (ReplicatedPostgres pg = binaries(kind).build()) {
            if (kind.equals("embedded")) {
                assertThat(pg.majorVersion()).isEqualTo(17);
            }
            assertThat(pg.standbyIsSynchronous()).isTrue();
            assertThat(pg.timeline()).isEqualTo(1);
            long systemId = pg.systemIdentifier();
            assertThat(systemIdentifier(pg.standby())).isEqualTo(systemId);
            assertThat(pg.jdbcUrl("db")).isEqualTo("jdbc:postgresql://127.0.0.1:" + pg.primary().port() + ",127.0.0.1:"
                    + pg.standby().port() + "/db?targetServerType=primary");
            assertThat(pg.port()).isEqualTo(pg.endpoint().port());

            TestDatabase db = pg.newEmptyDatabase();
            RowWriter rows = RowWriter.onNewTable(db);
            List<Long> failovers = new ArrayList<>();
            List<Long> promotions = new ArrayList<>();
            List<Long> rejoins = new ArrayList<>();

            for (int round = 1; round <= 5; round++) {
                Node oldPrimary = pg.primary();
                Node next = pg.standby();
                long before = rows.acknowledged();
                try (Connection throughEndpoint = connect(pg.endpointJdbcUrl(db.name()))) {
                    assertThat(serverPort(throughEndpoint)).isEqualTo(oldPrimary.port());
                    RowWriter.Writing writer = rows.start();
                    await().atMost(WAIT).until(() -> rows.acknowledged() >= before + 100);

                    if (round % 2 == 1) {
                        failovers.add(pg.failover().toMillis());
                    } else {
                        // a managed service notices the crash after a while: the gap between crash and promotion
                        pg.crashPrimary();
                        assertThat(pg.primary()).isSameAs(oldPrimary);
                        assertThatThrownBy(db::connect).as("no primary in the gap").isInstanceOf(SQLException.class);
                        promotions.add(pg.promoteStandby().toMillis());
                    }
                    assertThat(writer.endedByFailure(WAIT)).as("the writer saw the primary go").isTrue();
                    assertThat(pg.primary()).isSameAs(next);
                    assertThat(pg.standby()).isSameAs(oldPrimary);
                    assertThat(oldPrimary.isRunning()).isFalse();
                    assertThat(pg.timeline()).isEqualTo(round + 1);
                    assertThat(pg.standbyIsSynchronous()).isFalse();
                    assertThatThrownBy(() -> serverPort(throughEndpoint))
                            .as("a connection through the endpoint to the old primary is reset")
                            .isInstanceOfSatisfying(SQLException.class,
                                    e -> assertThat(e.getSQLState()).as(e.toString()).startsWith("08"));
                }
                assertThat(rows.present()).as("round %d: every acknowledged commit is on the new primary", round)
                        .containsAll(rows.acknowledgedIds());

                // with no standby the new primary commits alone; both URLs reach it
                for (String url : List.of(db.jdbcUrl(), pg.endpointJdbcUrl(db.name()))) {
                    try (Connection c = connect(url)) {
                        assertThat(serverPort(c)).as(url).isEqualTo(next.port());
                        rows.insertOne(c);
                    }
                }

                rejoins.add(pg.rejoin().toMillis());
                assertThat(pg.standby()).isSameAs(oldPrimary);
                assertThat(oldPrimary.isRunning()).isTrue();
                assertThat(pg.standbyIsSynchronous()).isTrue();
                long last;
                try (Connection c = db.connect()) {
                    last = rows.insertOne(c);
                }
                String lsn = pg.currentLsn();
                await().atMost(WAIT).until(() -> pg.standbyReplayed(lsn));
                try (Connection c = connect(oldPrimary.jdbcUrl(db.name()))) {
                    assertThat(Sql.count(c, "SELECT count(*) FROM t WHERE id = " + last))
                            .as("the rejoined standby serves reads of what was committed").isEqualTo(1);
                    assertThat(Sql.strings(c, "SELECT pg_is_in_recovery()::text")).containsExactly("true");
                }
                assertThat(systemIdentifier(oldPrimary)).isEqualTo(systemId);
            }

            Set<Long> present = rows.present();
            assertThat(present).containsAll(rows.acknowledgedIds());
            assertThat(rows.unexplained(present)).as("rows nobody committed").isEmpty();
            assertThat(pg.timeline()).isEqualTo(6);
            assertThat(pg.systemIdentifier()).isEqualTo(systemId);
            log.info("{}: 5 failovers, {} acknowledged commits kept, {} in doubt; failover() ms {}, promoteStandby() ms {},"
                    + " rejoin() ms {}", pg.describe(), rows.acknowledged(), rows.inDoubt(), failovers, promotions, rejoins);
            db.close();
        }
    }

    @ParameterizedTest(name = "{0} binaries")
    @ValueSource(strings = {"embedded", "machine"})
    void aPlannedSwitchoverKeepsEveryCommitAndTheNodesTakeTurns(String kind) throws Exception {
        try (ReplicatedPostgres pg = binaries(kind).build()) {
            Node a = pg.primary();
            Node b = pg.standby();
            assertThatThrownBy(pg::promoteStandby).as("two primaries").isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("still runs");
            assertThatThrownBy(pg::rejoin).as("a running standby is not replaced").isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("is running");

            pg.createPasswordRole("relay_user", "relay-secret", "REPLICATION");
            passwordIsCheckedAndTheStandbyServesReplication(pg);

            TestDatabase db = pg.newEmptyDatabase();
            RowWriter rows = RowWriter.onNewTable(db);
            List<Long> switchovers = new ArrayList<>();
            for (Node expected : List.of(b, a)) {
                long before = rows.acknowledged();
                RowWriter.Writing writer = rows.start();
                await().atMost(WAIT).until(() -> rows.acknowledged() >= before + 100);
                Node old = pg.primary();
                switchovers.add(pg.switchover().toMillis());
                assertThat(writer.endedByFailure(WAIT)).as("the clean stop ended the writer's session").isTrue();
                assertThat(pg.primary()).isSameAs(expected);
                assertThat(old.isRunning()).isFalse();
                assertThat(Files.readString(old.logFile())).as("a clean shutdown").contains("database system is shut down");
                assertThat(rows.present()).containsAll(rows.acknowledgedIds());
                try (Connection c = connect(pg.endpointJdbcUrl(db.name()))) {
                    assertThat(serverPort(c)).isEqualTo(expected.port());
                    rows.insertOne(c);
                }
                pg.rejoin();
                assertThat(pg.standbyIsSynchronous()).isTrue();
            }
            assertThat(pg.timeline()).isEqualTo(3);
            // both nodes were made again from base backups: the rules came with the copies
            passwordIsCheckedAndTheStandbyServesReplication(pg);
            Set<Long> present = rows.present();
            assertThat(present).containsAll(rows.acknowledgedIds());
            assertThat(rows.unexplained(present)).as("rows nobody committed").isEmpty();
            log.info("{}: switchover() ms {}", pg.describe(), switchovers);
            db.close();
        }
    }

    /** Each node refuses a wrong password; the right one reaches the primary, and the standby serves replication. */
    private static void passwordIsCheckedAndTheStandbyServesReplication(ReplicatedPostgres pg) throws SQLException {
        for (Node node : List.of(pg.primary(), pg.standby())) {
            assertThatThrownBy(() -> connect(node.jdbcUrl("postgres"), "relay_user", "wrong").close())
                    .as("%s checks the password", node)
                    .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("28P01"));
        }
        try (Connection c = connect(pg.jdbcUrl("postgres"), "relay_user", "relay-secret")) {
            assertThat(serverPort(c)).isEqualTo(pg.primary().port());
        }
        Properties replication = new Properties();
        replication.setProperty("user", "relay_user");
        replication.setProperty("password", "relay-secret");
        replication.setProperty("replication", "true");
        replication.setProperty("preferQueryMode", "simple");
        replication.setProperty("assumeMinServerVersion", "9.4");
        try (Connection c = DriverManager.getConnection(pg.standby().jdbcUrl("postgres"), replication)) {
            assertThat(Sql.strings(c, "IDENTIFY_SYSTEM")).as("a physical replication session on the standby")
                    .containsExactly(String.valueOf(pg.systemIdentifier()));
        }
    }

    /**
     * PostgreSQL 17 copies a logical slot made with {@code failover => true} to the standby, where it survives the
     * promotion with its position; 15 copies no logical slot, so a CDC relay's slot is gone after a failover.
     */
    @ParameterizedTest(name = "{0} binaries")
    @ValueSource(strings = {"embedded", "machine"})
    void aFailoverSlotIsUsableAfterEachPromotionOn17AndALogicalSlotIsLostOn15(String kind) throws Exception {
        try (ReplicatedPostgres pg = binaries(kind).build()) {
            TestDatabase db = pg.newEmptyDatabase();
            db.exec("CREATE TABLE t (id bigint PRIMARY KEY)");
            if (pg.majorVersion() < 17) {
                db.execute("SELECT pg_create_logical_replication_slot(?, 'test_decoding')", "relay_slot");
                db.exec("INSERT INTO t VALUES (1)");
                pg.failover();
                assertThat(db.count("SELECT count(*) FROM pg_replication_slots WHERE slot_name = ?", "relay_slot"))
                        .as("PostgreSQL %d copies no logical slot to a standby", pg.majorVersion()).isZero();
                assertThatThrownBy(pg::unsyncedFailoverSlots).isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("failover slots need PostgreSQL 17");
                db.close();
                return;
            }
            // slot name, plugin, temporary, two-phase, failover
            db.execute("SELECT pg_create_logical_replication_slot(?, 'test_decoding', false, false, true)", "relay_slot");
            List<Long> syncs = new ArrayList<>();
            for (int round = 1; round <= 2; round++) {
                long begin = System.nanoTime();
                // created while the standby streams, the slot is copied on its own; after a rejoin it needs a consumer
                awaitSlotsSynced(pg, round == 1 ? () -> { } : () -> consume(db, "relay_slot"));
                syncs.add((System.nanoTime() - begin) / 1_000_000);
                assertThat(syncedOn(pg.standby(), "relay_slot")).isTrue();
                db.execute("INSERT INTO t VALUES (?)", round);
                if (round == 1) {
                    pg.failover();
                } else {
                    pg.switchover();
                }
                assertThat(db.strings("SELECT data FROM pg_logical_slot_get_changes(?, NULL, NULL)", "relay_slot"))
                        .as("round %d: the slot on the promoted node streams the row committed before", round)
                        .contains("table public.t: INSERT: id[bigint]:" + round);
                pg.rejoin();
                assertThat(pg.unsyncedFailoverSlots()).as("the new standby starts without the slot").contains("relay_slot");
            }
            awaitSlotsSynced(pg, () -> consume(db, "relay_slot"));
            log.info("{}: failover slot synced to the standby after {} ms (after build, after rejoin)", pg.describe(), syncs);
            db.close();
        }
    }

    /**
     * What a streaming relay does to its slot: read and confirm. A confirmation moves the slot's restart position
     * to the running-transactions record decoded before it, at most one record per confirmation, so a record is
     * logged first ({@code pg_log_standby_snapshot}, which the primary otherwise writes every 15 s with activity).
     */
    private static void consume(TestDatabase db, String slot) throws SQLException {
        db.exec("SELECT pg_log_standby_snapshot()");
        db.strings("SELECT data FROM pg_logical_slot_get_changes(?, NULL, NULL)", slot);
    }

    private interface Step {
        void run() throws Exception;
    }

    /** Fails with the standby's log, where PostgreSQL says why it does not synchronize a slot. */
    private static void awaitSlotsSynced(ReplicatedPostgres pg, Step eachPoll) throws Exception {
        try {
            await().atMost(WAIT).pollInterval(Duration.ofMillis(200)).until(() -> {
                eachPoll.run();
                return pg.unsyncedFailoverSlots().isEmpty();
            });
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            throw new AssertionError("failover slots " + pg.unsyncedFailoverSlots() + " not synced to " + pg.standby()
                    + " in " + WAIT + "; its log:\n" + Files.readString(pg.standby().logFile()), e);
        }
    }

    private static boolean syncedOn(Node node, String slot) throws SQLException {
        try (Connection c = node.connectAdmin("postgres")) {
            return Sql.count(c, "SELECT count(*) FROM pg_replication_slots WHERE slot_name = ? AND synced"
                    + " AND NOT temporary", slot) == 1;
        }
    }

    private static int serverPort(Connection c) throws SQLException {
        return (int) Sql.count(c, "SELECT inet_server_port()");
    }

    private static long systemIdentifier(Node node) throws SQLException {
        try (Connection c = node.connectAdmin("postgres")) {
            return Long.parseLong(Sql.strings(c, "SELECT system_identifier::text FROM pg_control_system()").get(0));
        }
    }

    private static Connection connect(String url) throws SQLException {
        return connect(url, "postgres", "");
    }

    private static Connection connect(String url, String user, String password) throws SQLException {
        Properties p = new Properties();
        p.setProperty("user", user);
        p.setProperty("password", password);
        return DriverManager.getConnection(url, p);
    }
}
