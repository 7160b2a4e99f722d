package dev.outboxkit.writer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.outboxkit.core.LogicalMessages;
import dev.outboxkit.testkit.DocumentedGrants;
import dev.outboxkit.testkit.Grant;
import dev.outboxkit.testkit.ManualClock;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.PgBouncer;
import dev.outboxkit.testkit.PgBouncer.PoolMode;
import dev.outboxkit.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.postgresql.PGConnection;

/**
 * The writer and idempotency keys through a real PgBouncer in transaction pooling mode, with the one pgjdbc setting it
 * needs ({@code prepareThreshold=0}): several threads share two server sessions, every write mode commits exactly the
 * events of committed transactions, and a key's work runs once however many retries race. Without the setting, two
 * clients that take turns on one server session collide on pgjdbc's statement names; and pgjdbc's
 * {@code setTransactionIsolation}, session-level, reaches other clients.
 */
@ExtendWith(OutboxTestkitExtension.class)
class ThroughPgBouncerTest {

    private static final String PASSWORD = "writer-secret";
    private static final int THREADS = 4;
    private static final int TRANSACTIONS = 24;

    private TestDatabase db;
    private String role;

    @BeforeEach
    void role(TestDatabase db) throws Exception {
        this.db = db;
        this.role = "writer_bouncer_" + db.name();
        List<Grant> grants = new ArrayList<>(DocumentedGrants.writer(true));
        grants.addAll(DocumentedGrants.idempotencyKeys());
        Grant.roleWith(db, "public", role, PASSWORD, grants, null);
        db.exec("CREATE TABLE effect (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), idem_key text NOT NULL, note text)",
                "GRANT SELECT, INSERT ON effect TO \"" + role + "\"");
    }

    @AfterEach
    void dropRole() throws Exception {
        Grant.dropRole(db, role);
    }

    @Test
    void everyWriteModeCommitsExactlyTheEventsOfCommittedTransactions() throws Exception {
        Map<WriteMode, Set<UUID>> committed = new java.util.EnumMap<>(WriteMode.class);
        Set<UUID> rolledBack = ConcurrentHashMap.newKeySet();
        Map<Integer, Set<Integer>> serverPidsByClient = new ConcurrentHashMap<>();
        String slot = db.name() + "_bouncer";
        db.execute("SELECT pg_create_logical_replication_slot(?, 'test_decoding')", slot);
        List<String> decoded;
        try {
            try (PgBouncer bouncer = PgBouncer.builder(db.server()).poolMode(PoolMode.TRANSACTION).poolSize(2).build();
                 HikariDataSource pool = pool(bouncer, "?prepareThreshold=0", 8)) {
                for (WriteMode mode : WriteMode.values()) {
                    OutboxWriter writer = OutboxWriter.builder().mode(mode)
                            .notifyChannel(mode == WriteMode.KEEP ? "outbox_event" : null).build();
                    Set<UUID> ids = ConcurrentHashMap.newKeySet();
                    committed.put(mode, ids);
                    runConcurrently(THREADS, thread -> {
                        for (int i = 0; i < TRANSACTIONS; i++) {
                            boolean commit = i % 6 != 5;
                            List<UUID> written = transaction(pool, writer, mode.name(), thread * 100 + i, commit,
                                    serverPidsByClient);
                            (commit ? ids : rolledBack).addAll(written);
                        }
                        return null;
                    });
                }
            }
            decoded = changes(slot);
        } finally {
            db.execute("SELECT pg_drop_replication_slot(?)", slot);
        }
        Map<WriteMode, Set<UUID>> inWal = new java.util.EnumMap<>(WriteMode.class);
        for (WriteMode mode : WriteMode.values()) {
            inWal.put(mode, new HashSet<>());
        }
        for (String change : decoded) {
            if (change.startsWith("message:")) {
                inWal.get(WriteMode.LOGICAL_MESSAGE).add(LogicalMessages.decode(
                        change.substring(change.indexOf("content:") + "content:".length())).id());
            } else if (change.contains("outbox_event: INSERT")) {
                String type = change.replaceAll(".*aggregate_type\\[text]:'([A-Z_]+)'.*", "$1");
                inWal.get(WriteMode.valueOf(type)).add(UUID.fromString(change.replaceAll(".* id\\[uuid]:'([0-9a-f-]+)'.*", "$1")));
            }
        }
        int committedTransactions = THREADS * (TRANSACTIONS - TRANSACTIONS / 6);
        for (WriteMode mode : WriteMode.values()) {
            assertThat(committed.get(mode)).as(mode + ": committed events").hasSize(committedTransactions * 3);
            assertThat(inWal.get(mode)).as(mode + ": exactly the committed events are in the WAL").isEqualTo(committed.get(mode));
            assertThat(db.count("SELECT count(*) FROM effect WHERE idem_key = ?", mode.name()))
                    .as(mode + ": the business rows committed with the events").isEqualTo(committedTransactions);
        }
        assertThat(rolledBack).hasSize(WriteMode.values().length * THREADS * (TRANSACTIONS / 6) * 3)
                .doesNotContainAnyElementsOf(inWal.values().stream().flatMap(Set::stream).toList());
        assertThat(db.strings("SELECT id::text FROM outbox_event").stream().map(UUID::fromString).toList())
                .as("KEEP leaves its rows, the other modes none").containsExactlyInAnyOrderElementsOf(committed.get(WriteMode.KEEP));
        Set<Integer> serverPids = new HashSet<>();
        serverPidsByClient.values().forEach(serverPids::addAll);
        assertThat(serverPids).as("two server sessions for the whole pool").hasSizeLessThanOrEqualTo(2);
        assertThat(serverPidsByClient.keySet()).as("client connections that shared them").hasSizeGreaterThan(2);
    }

    @Test
    void idempotencyKeysRunEachKeysWorkOnceAndReplayIt() throws Exception {
        ManualClock clock = ManualClock.startingAt(Instant.now().truncatedTo(ChronoUnit.MICROS));
        IdempotencyKeys keys = IdempotencyKeys.builder().clock(clock).retention(Duration.ofHours(1)).build();
        AtomicInteger runs = new AtomicInteger();
        try (PgBouncer bouncer = PgBouncer.builder(db.server()).poolMode(PoolMode.TRANSACTION).poolSize(2).build();
             HikariDataSource pool = pool(bouncer, "?prepareThreshold=0", 12)) {
            for (int wave = 0; wave < 2; wave++) {
                // twelve threads: three race each of four keys at once, in both waves (the second only replays)
                List<Object> outcomes = runConcurrently(12, thread -> {
                    String key = "k-" + (thread % 4);
                    try {
                        return keys.execute(pool, "transfers", key, "{\"key\": \"" + key + "\"}", (c, tx) -> {
                            int run = runs.incrementAndGet();
                            try (PreparedStatement ps = c.prepareStatement("INSERT INTO effect (idem_key, note) VALUES (?, ?)")) {
                                ps.setString(1, key);
                                ps.setString(2, "run " + run);
                                ps.executeUpdate();
                            }
                            tx.add(OutboxMessage.builder("transfer", key, "TransferMade").payloadJson("{\"run\": " + run + "}").build());
                            return StoredResponse.of(201, "{\"run\": " + run + "}");
                        });
                    } catch (RequestInProgressException e) {
                        return e;
                    }
                });
                for (Object o : outcomes) {
                    if (wave == 1) {
                        assertThat(o).as("after completion every retry gets the replay").isInstanceOf(IdempotentResult.class);
                        assertThat(((IdempotentResult) o).replayed()).isTrue();
                    }
                }
            }
            assertThat(runs.get()).as("one run per key").isEqualTo(4);
            assertThat(db.count("SELECT count(*) FROM effect")).isEqualTo(4);
            assertThat(db.count("SELECT count(DISTINCT idem_key) FROM effect")).isEqualTo(4);
            assertThat(db.count("SELECT count(*) FROM outbox_event WHERE aggregate_type = 'transfer'")).isEqualTo(4);

            clock.advance(Duration.ofHours(2));
            assertThat(keys.purgeExpired(pool)).as("purged in batches, each its own transaction").isEqualTo(4);
            assertThatThrownBy(() -> keys.execute(pool, "transfers", "k-0", "{\"key\": \"k-0\"}",
                    (c, tx) -> StoredResponse.of(201, "late"))).isInstanceOf(IdempotencyKeyExpiredException.class);
        }
    }

    /**
     * What a user sees without {@code prepareThreshold=0}: pgjdbc turns a statement it ran five times into a named
     * server-side statement ({@code S_1}, {@code S_2}, … per connection). One server session for the pool makes it
     * deterministic: the second client names its statement as the first did, on the session that has it already.
     */
    @Test
    void withoutPrepareThresholdZeroTwoClientsCollideOnStatementNames() throws Exception {
        try (PgBouncer bouncer = PgBouncer.builder(db.server()).poolMode(PoolMode.TRANSACTION).poolSize(1).build();
             HikariDataSource pool = pool(bouncer, "", 2);
             Connection a = pool.getConnection();
             Connection b = pool.getConnection()) {
            OutboxWriter writer = OutboxWriter.builder().build();
            for (int i = 0; i < 6; i++) {
                writeAndCommit(a, writer, i);
            }
            assertThatThrownBy(() -> {
                for (int i = 0; i < 6; i++) {
                    writeAndCommit(b, writer, i);
                }
            }).isInstanceOf(SQLException.class).hasMessageContaining("prepared statement \"S_")
                    .hasMessageContaining("already exists")
                    .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("42P05"));
        }
    }

    /**
     * What the README says to avoid: pgjdbc's {@code setTransactionIsolation} runs {@code SET SESSION CHARACTERISTICS}
     * on whichever server session is free, which transaction pooling then hands to other clients; {@code SET TRANSACTION}
     * as a transaction's first statement stays in that transaction. One server session for the pool makes it
     * deterministic.
     */
    @Test
    void setTransactionIsolationLeaksToOtherClientsSetTransactionDoesNot() throws Exception {
        try (PgBouncer bouncer = PgBouncer.builder(db.server()).poolMode(PoolMode.TRANSACTION).poolSize(1).build();
             HikariDataSource pool = pool(bouncer, "?prepareThreshold=0", 2);
             Connection a = pool.getConnection();
             Connection b = pool.getConnection()) {
            a.setAutoCommit(false);
            try (Statement s = a.createStatement()) {
                s.execute("SET TRANSACTION ISOLATION LEVEL SERIALIZABLE");
            }
            assertThat(strings(a, "SHOW transaction_isolation")).containsExactly("serializable");
            a.commit();
            assertThat(strings(b, "SHOW transaction_isolation")).as("SET TRANSACTION stays in its transaction")
                    .containsExactly("read committed");

            a.setAutoCommit(true);
            a.setTransactionIsolation(Connection.TRANSACTION_SERIALIZABLE);
            assertThat(strings(b, "SHOW transaction_isolation")).as("setTransactionIsolation reaches another client")
                    .containsExactly("serializable");
            a.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
        }
    }

    private static List<String> strings(Connection c, String sql) throws SQLException {
        List<String> out = new ArrayList<>();
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            while (rs.next()) {
                out.add(rs.getString(1));
            }
        }
        return out;
    }

    private static void writeAndCommit(Connection c, OutboxWriter writer, int i) throws SQLException {
        c.setAutoCommit(false);
        try {
            writer.write(c, TestSupport.event("a-" + i, i));
            c.commit();
        } catch (SQLException e) {
            c.rollback();
            throw e;
        }
    }

    /** One business row and three events, through one of the writer's three ways in turn. */
    private static List<UUID> transaction(HikariDataSource pool, OutboxWriter writer, String type, int n, boolean commit,
                                          Map<Integer, Set<Integer>> serverPidsByClient) throws SQLException {
        List<OutboxMessage> events = new ArrayList<>();
        for (int e = 0; e < 3; e++) {
            events.add(OutboxMessage.builder(type, "agg-" + (n % 7), "Moved").payloadJson("{\"n\": " + n + "}").build());
        }
        List<UUID> ids = new ArrayList<>();
        switch (n % 3) {
            case 0 -> {
                try (Connection c = pool.getConnection()) {
                    c.setAutoCommit(false);
                    business(c, type, n, serverPidsByClient);
                    ids.addAll(writer.write(c, events));
                    if (commit) {
                        c.commit();
                    } else {
                        c.rollback();
                    }
                    c.setAutoCommit(true);
                }
            }
            case 1 -> {
                try (Connection c = pool.getConnection()) {
                    c.setAutoCommit(false);
                    try (OutboxTransaction tx = writer.begin(c)) {
                        business(c, type, n, serverPidsByClient);
                        events.forEach(e -> ids.add(tx.add(e)));
                        if (commit) {
                            tx.commit();
                        } else {
                            tx.rollback();
                        }
                    } finally {
                        c.setAutoCommit(true);
                    }
                }
            }
            default -> {
                try {
                    writer.inTransaction(pool, (c, tx) -> {
                        business(c, type, n, serverPidsByClient);
                        events.forEach(e -> ids.add(tx.add(e)));
                        if (!commit) {
                            throw new IllegalStateException("the work fails: rolled back");
                        }
                        return null;
                    });
                } catch (IllegalStateException expected) {
                    assertThat(commit).as("only the work meant to fail fails").isFalse();
                }
            }
        }
        return ids;
    }

    /** The business change: a row in {@code effect} named after the mode; notes which server session ran it. */
    private static void business(Connection c, String type, int n, Map<Integer, Set<Integer>> serverPidsByClient)
            throws SQLException {
        recordServerPid(c, serverPidsByClient);
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO effect (idem_key, note) VALUES (?, ?)")) {
            ps.setString(1, type);
            ps.setString(2, "n " + n);
            ps.executeUpdate();
        }
    }

    private static void recordServerPid(Connection c, Map<Integer, Set<Integer>> serverPidsByClient) throws SQLException {
        int client = System.identityHashCode(c.unwrap(PGConnection.class));
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT pg_backend_pid()")) {
            rs.next();
            serverPidsByClient.computeIfAbsent(client, k -> ConcurrentHashMap.newKeySet()).add(rs.getInt(1));
        }
    }

    /** Every change the slot decoded (read directly: the slot is no pooler's business). */
    private List<String> changes(String slot) throws SQLException {
        try (Connection c = db.connect(); Statement s = c.createStatement()) {
            // the test server commits asynchronously and a slot decodes only flushed WAL: one synchronous commit
            s.execute("SET synchronous_commit = on");
            s.execute("CREATE TEMP TABLE wal_flush (x int)");
            List<String> out = new ArrayList<>();
            try (PreparedStatement ps = c.prepareStatement("SELECT data FROM pg_logical_slot_get_changes(?, NULL, NULL)")) {
                ps.setString(1, slot);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        out.add(rs.getString(1));
                    }
                }
            }
            return out;
        }
    }

    private HikariDataSource pool(PgBouncer bouncer, String parameters, int size) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(bouncer.jdbcUrl(db) + parameters);
        config.setUsername(role);
        config.setPassword(PASSWORD);
        config.setMaximumPoolSize(size);
        config.setMinimumIdle(0);
        config.setConnectionTimeout(30_000);
        return new HikariDataSource(config);
    }

    interface ThreadWork {
        Object run(int thread) throws Exception;
    }

    /** Runs {@code work} on {@code threads} threads released together; returns their results, rethrows the first failure. */
    private static List<Object> runConcurrently(int threads, ThreadWork work) throws Exception {
        ExecutorService executor = Executors.newFixedThreadPool(threads);
        try {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<Object>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                futures.add(executor.submit((Callable<Object>) () -> {
                    start.await();
                    return work.run(thread);
                }));
            }
            start.countDown();
            List<Object> out = new ArrayList<>();
            for (Future<Object> f : futures) {
                out.add(f.get(180, TimeUnit.SECONDS));
            }
            return out;
        } finally {
            executor.shutdownNow();
        }
    }
}
