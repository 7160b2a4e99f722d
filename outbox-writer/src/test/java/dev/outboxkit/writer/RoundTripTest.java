package dev.outboxkit.writer;

import static dev.outboxkit.writer.TestSupport.accounts;
import static dev.outboxkit.writer.TestSupport.event;
import static dev.outboxkit.writer.TestSupport.events;
import static dev.outboxkit.writer.TestSupport.move;
import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.UUID;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * N events cost one network round trip, counted in the driver's socket ({@link WireTap}): the
 * number of times the driver waited for the server. A writer's first use also checks its grants,
 * once ({@link #theGrantsCheckCostsOneRoundTripOncePerWriter}); the other cases count after it.
 */
@ExtendWith(OutboxTestkitExtension.class)
class RoundTripTest {

    @ParameterizedTest
    @EnumSource(WriteMode.class)
    void writeSendsNEventsInOneRoundTrip(WriteMode mode, TestDatabase db) throws Exception {
        OutboxWriter writer = OutboxWriter.builder().mode(mode).build();
        WireTap tap = new WireTap();
        try (Connection c = tap.connect(db)) {
            c.setAutoCommit(false);
            writer.requireGrants(c);
            for (int n : new int[] {1, 5, 20, 100}) {
                long before = tap.roundTrips();
                writer.write(c, events("a", n));
                assertThat(tap.roundTrips() - before).as("round trips for %d events in %s", n, mode).isEqualTo(1);
            }
            long before = tap.roundTrips();
            writer.write(c, events("a", 150));
            assertThat(tap.roundTrips() - before).as("150 events: one round trip per 100").isEqualTo(2);
            c.commit();
        }
        if (mode == WriteMode.KEEP) {
            assertThat(db.count("SELECT count(*) FROM outbox_event")).isEqualTo(276);
        }
    }

    @ParameterizedTest
    @EnumSource(WriteMode.class)
    void theGrantsCheckCostsOneRoundTripOncePerWriter(WriteMode mode, TestDatabase db) throws Exception {
        OutboxWriter writer = OutboxWriter.builder().mode(mode).build();
        WireTap tap = new WireTap();
        try (Connection c = tap.connect(db)) {
            c.setAutoCommit(false);
            long start = tap.roundTrips();
            writer.write(c, events("a", 1));
            assertThat(tap.roundTrips() - start).as("first write in %s: the check, then the event", mode)
                    .isEqualTo(mode == WriteMode.LOGICAL_MESSAGE ? 1 : 2);
            long before = tap.roundTrips();
            writer.write(c, events("a", 1));
            assertThat(tap.roundTrips() - before).as("second write: the event only").isEqualTo(1);
            c.commit();
        }
    }

    @ParameterizedTest
    @EnumSource(WriteMode.class)
    void commitSendsTheEventsAndTheCommitInOneRoundTrip(WriteMode mode, TestDatabase db) throws Exception {
        accounts(db, 2, 1_000_000);
        OutboxWriter writer = OutboxWriter.builder().mode(mode).build();
        WireTap tap = new WireTap();
        try (Connection c = tap.connect(db)) {
            c.setAutoCommit(false);
            writer.requireGrants(c);
            // repeated, so the driver's switch to server-prepared statements (5th use) is covered
            for (int round = 0; round < 7; round++) {
                for (int n : new int[] {0, 1, 5, 20}) {
                    long start = tap.roundTrips();
                    OutboxTransaction tx = writer.begin(c);
                    move(c, 1, 2, 1);
                    long afterBusiness = tap.roundTrips();
                    for (int i = 0; i < n; i++) {
                        tx.add(event("1", i));
                    }
                    assertThat(tap.roundTrips()).as("add() only buffers").isEqualTo(afterBusiness);
                    tx.commit();
                    assertThat(afterBusiness - start).as("two UPDATEs").isEqualTo(2);
                    assertThat(tap.roundTrips() - afterBusiness).as("%d events + COMMIT in %s", n, mode).isEqualTo(1);
                }
            }
        }
        assertThat(TestSupport.balance(db, 2)).isEqualTo(1_000_028);
        if (mode == WriteMode.KEEP) {
            assertThat(db.count("SELECT count(*) FROM outbox_event")).isEqualTo(7 * 26);
        }
    }

    @Test
    void aNotifyRidesInTheSameRoundTrip(TestDatabase db) throws Exception {
        OutboxWriter writer = OutboxWriter.builder().notifyChannel("outbox_event").build();
        WireTap tap = new WireTap();
        try (Connection listener = db.connect(); Connection c = tap.connect(db)) {
            try (java.sql.Statement s = listener.createStatement()) {
                s.execute("LISTEN outbox_event");
            }
            c.setAutoCommit(false);
            for (int round = 0; round < 7; round++) {
                OutboxTransaction tx = writer.begin(c);
                tx.add(event("1", round));
                long before = tap.roundTrips();
                tx.commit();
                assertThat(tap.roundTrips() - before).isEqualTo(1);
            }
            org.postgresql.PGNotification[] notes = listener.unwrap(org.postgresql.PGConnection.class).getNotifications(60_000);
            assertThat(notes).isNotEmpty();
            assertThat(notes[0].getName()).isEqualTo("outbox_event");
        }
    }

    @Test
    void theCounterSeesEveryWaitOfTheNaiveWay(TestDatabase db) throws Exception {
        // the baseline the writer avoids: one INSERT per event, then COMMIT, each waiting for its reply
        WireTap tap = new WireTap();
        try (Connection c = tap.connect(db)) {
            c.setAutoCommit(false);
            long before = tap.roundTrips();
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO outbox_event (id, aggregate_type, aggregate_id, "
                    + "event_type, payload) VALUES (?, 'account', 'a', 'Naive', '{}')")) {
                for (int i = 0; i < 5; i++) {
                    ps.setObject(1, UUID.randomUUID());
                    ps.executeUpdate();
                }
            }
            c.commit();
            assertThat(tap.roundTrips() - before).isEqualTo(6);
        }
    }

    @Test
    void throughHikariCpTheCommitStaysOneRoundTripAndReturnsCleanly(TestDatabase db) throws Exception {
        accounts(db, 2, 1_000);
        WireTap tap = new WireTap();
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(tap.jdbcUrl(db));
        config.setUsername(db.user());
        config.setPassword(db.password());
        config.setMaximumPoolSize(1);
        OutboxWriter writer = OutboxWriter.builder().build();
        try (HikariDataSource pool = new HikariDataSource(config)) {
            warm(pool);
            for (int i = 0; i < 3; i++) {
                long[] before = new long[1];
                writer.inTransaction(pool, (c, tx) -> {
                    // counted from here: HikariCP may check an idle connection in getConnection()
                    before[0] = tap.roundTrips();
                    move(c, 1, 2, 1);
                    tx.add(event("1", 1));
                    tx.add(event("2", 2));
                    return null;
                });
                // two UPDATEs + (events and COMMIT); no rollback or reset when the connection goes back
                assertThat(tap.roundTrips() - before[0]).as("round %d", i).isEqualTo(3);
            }
        }
        assertThat(db.count("SELECT count(*) FROM outbox_event")).isEqualTo(6);
    }

    private static void warm(HikariDataSource pool) throws SQLException {
        try (Connection c = pool.getConnection()) {
            c.isValid(1);
        }
    }
}
