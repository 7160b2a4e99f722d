package dev.outboxkit.writer;

import static dev.outboxkit.writer.TestSupport.accounts;
import static dev.outboxkit.writer.TestSupport.balance;
import static dev.outboxkit.writer.TestSupport.event;
import static dev.outboxkit.writer.TestSupport.events;
import static dev.outboxkit.writer.TestSupport.move;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Events commit with the business change or not at all. */
@ExtendWith(OutboxTestkitExtension.class)
class OutboxWriterTest {

    private final OutboxWriter writer = OutboxWriter.builder().build();

    @Test
    void commitWritesBusinessRowsAndEventsTogether(TestDatabase db) throws Exception {
        accounts(db, 2, 100);
        List<UUID> ids;
        try (Connection c = db.connect()) {
            c.setAutoCommit(false);
            try (OutboxTransaction tx = writer.begin(c)) {
                move(c, 1, 2, 30);
                tx.add(event("1", 1));
                tx.add(event("2", 2));
                ids = tx.commit();
            }
            assertThat(c.getAutoCommit()).as("autocommit stays off").isFalse();
            // the connection is idle again and can run the next transaction
            move(c, 2, 1, 5);
            c.commit();
        }
        assertThat(balance(db, 1)).isEqualTo(75);
        assertThat(balance(db, 2)).isEqualTo(125);
        assertThat(ids).hasSize(2);
        assertThat(db.strings("SELECT id::text FROM outbox_event ORDER BY seq"))
                .containsExactly(ids.get(0).toString(), ids.get(1).toString());
        assertThat(db.strings("SELECT payload::text FROM outbox_event ORDER BY seq").get(0))
                .isEqualTo("{\"n\": 1, \"note\": \"" + "x".repeat(40) + "\"}");
    }

    @Test
    void rollbackLeavesNeitherBusinessRowsNorEvents(TestDatabase db) throws Exception {
        accounts(db, 2, 100);
        try (Connection c = db.connect()) {
            c.setAutoCommit(false);
            try (OutboxTransaction tx = writer.begin(c)) {
                move(c, 1, 2, 30);
                tx.add(event("1", 1));
                tx.flush();
                assertThat(countIn(c, "SELECT count(*) FROM outbox_event")).as("visible inside the transaction").isEqualTo(1);
                tx.rollback();
            }
            // write() in a transaction the caller rolls back
            move(c, 1, 2, 10);
            writer.write(c, events("1", 3));
            c.rollback();
            // close() without commit rolls back
            try (OutboxTransaction tx = writer.begin(c)) {
                move(c, 1, 2, 10);
                tx.add(event("1", 9));
                tx.flush();
            }
        }
        assertThat(balance(db, 1)).isEqualTo(100);
        assertThat(db.count("SELECT count(*) FROM outbox_event")).isZero();
    }

    @Test
    void anExceptionInTheWorkRollsEverythingBack(TestDatabase db) throws Exception {
        accounts(db, 2, 100);
        assertThatThrownBy(() -> writer.inTransaction(db.dataSource(), (c, tx) -> {
            move(c, 1, 2, 30);
            tx.add(event("1", 1));
            tx.flush();
            throw new IllegalStateException("business rule violated");
        })).isInstanceOf(IllegalStateException.class).hasMessage("business rule violated");
        // a checked exception is wrapped, the transaction rolled back as well
        assertThatThrownBy(() -> writer.inTransaction(db.dataSource(), (c, tx) -> {
            move(c, 1, 2, 30);
            tx.add(event("1", 2));
            throw new java.io.IOException("downstream unavailable");
        })).isInstanceOf(WorkFailedException.class).hasCauseInstanceOf(java.io.IOException.class);
        // a failing statement (CHECK balance >= 0) rolls back the events added before it
        assertThatThrownBy(() -> writer.inTransaction(db.dataSource(), (c, tx) -> {
            tx.add(event("1", 3));
            tx.flush();
            move(c, 1, 2, 1000);
            return null;
        })).isInstanceOf(SQLException.class).hasMessageContaining("account_balance_check");
        assertThat(balance(db, 1)).isEqualTo(100);
        assertThat(db.count("SELECT count(*) FROM outbox_event")).isZero();

        Integer result = writer.inTransaction(db.dataSource(), (c, tx) -> {
            move(c, 1, 2, 30);
            tx.add(event("1", 4));
            return 42;
        });
        assertThat(result).isEqualTo(42);
        assertThat(balance(db, 1)).isEqualTo(70);
        assertThat(db.count("SELECT count(*) FROM outbox_event")).isEqualTo(1);
        try (Connection c = db.dataSource().getConnection()) {
            assertThat(c.getAutoCommit()).as("the pooled connection got its autocommit back").isTrue();
        }
    }

    @Test
    void aConnectionKilledMidTransactionCommitsNothing(TestDatabase db) throws Exception {
        accounts(db, 2, 100);
        // events written with write(), the backend killed before the caller's commit
        try (Connection c = db.connect()) {
            c.setAutoCommit(false);
            int pid = backendPid(c);
            move(c, 1, 2, 30);
            writer.write(c, events("1", 3));
            terminate(db, pid);
            assertThatThrownBy(c::commit).isInstanceOf(SQLException.class);
        }
        // events buffered in an OutboxTransaction, the backend killed before commit(): the writer
        // cannot know whether the COMMIT reached a live backend, so it says the outcome is unknown
        try (Connection c = db.connect()) {
            c.setAutoCommit(false);
            int pid = backendPid(c);
            OutboxTransaction tx = writer.begin(c);
            move(c, 1, 2, 30);
            tx.add(event("1", 4));
            tx.flush();
            tx.add(event("1", 5));
            terminate(db, pid);
            assertThatThrownBy(tx::commit).isInstanceOf(CommitOutcomeUnknownException.class)
                    .hasMessageContaining("may or may not have committed");
            tx.close();
        }
        assertThat(balance(db, 1)).isEqualTo(100);
        assertThat(balance(db, 2)).isEqualTo(100);
        assertThat(db.count("SELECT count(*) FROM outbox_event")).isZero();
    }

    @Test
    void aLostCommitReplyIsReportedAsUnknownAndTheDatabaseDecides(TestDatabase db) throws Exception {
        accounts(db, 2, 100);
        WireTap tap = new WireTap();
        // the COMMIT reached the server and committed; only the reply was lost
        assertThatThrownBy(() -> transferThroughCut(db, tap, WireTap.Fault.SEND_THEN_CUT))
                .isInstanceOf(CommitOutcomeUnknownException.class)
                .extracting(e -> ((SQLException) e).getSQLState()).isEqualTo("08007");
        assertThat(balance(db, 1)).isEqualTo(70);
        assertThat(db.count("SELECT count(*) FROM outbox_event")).isEqualTo(1);
        // the COMMIT never left: the server rolled back when the connection dropped
        assertThatThrownBy(() -> transferThroughCut(db, tap, WireTap.Fault.CUT_BEFORE_SEND))
                .isInstanceOf(CommitOutcomeUnknownException.class);
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(60))
                .until(() -> db.count("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                        + "AND state LIKE 'idle in transaction%'") == 0);
        assertThat(balance(db, 1)).isEqualTo(70);
        assertThat(db.count("SELECT count(*) FROM outbox_event")).isEqualTo(1);
    }

    /** Moves 30 from account 1 to 2 with one event; the connection is cut at the COMMIT. */
    private void transferThroughCut(TestDatabase db, WireTap tap, WireTap.Fault fault) throws SQLException {
        try (Connection c = tap.connect(db)) {
            c.setAutoCommit(false);
            OutboxTransaction tx = writer.begin(c);
            move(c, 1, 2, 30);
            tx.add(event("1", 1));
            tap.cutAt("COMMIT", fault);
            tx.commit();
        }
    }

    @Test
    void aRefusedCommitRollsBackAndSaysSo(TestDatabase db) throws Exception {
        accounts(db, 2, 100);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        OutboxWriter metered = OutboxWriter.builder().meterRegistry(registry).build();
        UUID id = UUID.randomUUID();
        OutboxMessage first = OutboxMessage.builder("account", "1", "Opened").id(id).payloadJson("{}").build();
        try (Connection c = db.connect()) {
            c.setAutoCommit(false);
            metered.write(c, first);
            c.commit();
            // the same event id again while the first row is still there: unique violation
            OutboxTransaction tx = metered.begin(c);
            move(c, 1, 2, 30);
            tx.add(first);
            assertThatThrownBy(tx::commit).isInstanceOf(SQLException.class)
                    .hasMessageContaining("outbox_event_id_key")
                    .isNotInstanceOf(CommitOutcomeUnknownException.class);
            assertThatThrownBy(() -> tx.add(event("1", 1))).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("already rolled back");
            // the connection is usable again
            move(c, 1, 2, 1);
            c.commit();
        }
        assertThat(balance(db, 1)).isEqualTo(99);
        assertThat(db.count("SELECT count(*) FROM outbox_event")).isEqualTo(1);
        assertThat(registry.get("outbox.writer.commits").tag("outcome", "failed").counter().count()).isEqualTo(1);
        assertThat(registry.get("outbox.writer.events").counter().count()).isEqualTo(1);
    }

    @Test
    void refusesToCommitATransactionPostgresAlreadyAborted(TestDatabase db) throws Exception {
        accounts(db, 2, 100);
        try (Connection c = db.connect()) {
            c.setAutoCommit(false);
            OutboxTransaction tx = writer.begin(c);
            move(c, 1, 2, 30);
            try (Statement s = c.createStatement()) {
                s.execute("SELECT 1 / 0");
            } catch (SQLException swallowedByCareless) {
                // the caller ignores the failure; pgjdbc's own commit() would now roll back silently
            }
            assertThatThrownBy(tx::commit).isInstanceOf(SQLException.class)
                    .hasMessageContaining("PostgreSQL already aborted it")
                    .extracting(e -> ((SQLException) e).getSQLState()).isEqualTo("25P02");
        }
        assertThat(balance(db, 1)).isEqualTo(100);
    }

    @Test
    void eventIdsCanComeFromBusinessFacts(TestDatabase db) throws Exception {
        UUID deterministic = UUID.nameUUIDFromBytes("transfer 17 debited".getBytes(java.nio.charset.StandardCharsets.UTF_8));
        writer.inTransaction(db.dataSource(), (c, tx) -> tx.add(OutboxMessage.builder("transfer", "17", "Debited")
                .id(deterministic).payloadJson("{\"amount\": 5}").traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
                .topic("ledger.transfers").header("tenant", "acme").build()));
        try (Connection c = db.connect(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT id, topic, headers::text FROM outbox_event")) {
            rs.next();
            assertThat(rs.getObject(1, UUID.class)).isEqualTo(deterministic);
            assertThat(rs.getString(2)).isEqualTo("ledger.transfers");
            assertThat(rs.getString(3)).isEqualTo("{\"tenant\": \"acme\", \"traceparent\": "
                    + "\"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\"}");
        }
    }

    static int backendPid(Connection c) throws SQLException {
        return (int) countIn(c, "SELECT pg_backend_pid()");
    }

    static long countIn(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    static void terminate(TestDatabase db, int pid) throws SQLException {
        try (Connection admin = db.connect(); Statement s = admin.createStatement()) {
            s.execute("SELECT pg_terminate_backend(" + pid + ", 60000)");
        }
    }
}
