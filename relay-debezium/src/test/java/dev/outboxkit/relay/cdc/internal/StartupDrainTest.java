package dev.outboxkit.relay.cdc.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxkit.core.Secret;
import dev.outboxkit.runtime.DatabaseLogin;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A pass over the table reads in a REPEATABLE READ snapshot on the session's connection; the session goes on with that
 * connection (the slot's checks, marking the slot drained, the fast-forward), so a pass must hand it back at the level
 * it found, whether it finished or stopped. Against the real server: its own view of the session's level counts.
 */
@ExtendWith(OutboxTestkitExtension.class)
class StartupDrainTest {

    @Test
    void aPassHandsItsConnectionBackAtTheIsolationLevelItFound(TestDatabase db) throws Exception {
        CdcSettings settings = TestSettings.of(new DatabaseLogin(db.jdbcUrl(), db.user(), Secret.of(db.password())),
                "drain_slot", "instance-a", Map.of());
        // no publisher or sink: an empty table has nothing to publish, and a stopped pass stops before its first send
        StartupDrain drain = new StartupDrain(settings.outboxTable(), null, null, 100);
        try (Connection c = db.connect()) {
            c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);

            StartupDrain.Result empty = drain.run(c, () -> true);
            assertThat(empty.published()).isZero();
            assertThat(serverLevel(c)).as("after a pass that finished").isEqualTo("read committed");
            assertThat(c.getAutoCommit()).isTrue();

            try (Statement s = c.createStatement()) {
                s.execute("INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload) "
                        + "VALUES (gen_random_uuid(), 'order', '1', 'E', '{}')");
            }
            assertThatThrownBy(() -> drain.run(c, () -> false)).as("the lease was lost before the first send")
                    .isInstanceOf(InterruptedException.class);
            assertThat(serverLevel(c)).as("after a pass that stopped").isEqualTo("read committed");
            assertThat(c.getAutoCommit()).isTrue();

            c.setTransactionIsolation(Connection.TRANSACTION_SERIALIZABLE);
            assertThatThrownBy(() -> drain.run(c, () -> false)).isInstanceOf(InterruptedException.class);
            assertThat(serverLevel(c)).as("a caller at another level gets that one back").isEqualTo("serializable");
        }
    }

    /**
     * The slot may skip the WAL before the fast-forward point only if every transaction committed before it is visible
     * to the pass that follows. A transaction still open, and the newest (its id above every ended one: a snapshot does
     * not list it as running), is waited for, as one whose commit record is written but that is not visible yet is.
     */
    @Test
    void theFastForwardPointWaitsForTheNewestTransactionStillOpen(TestDatabase db) throws Exception {
        try (Connection writer = db.connect(); Connection c = db.connect()) {
            writer.setAutoCommit(false);
            try (Statement s = writer.createStatement()) {
                s.execute("INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload) "
                        + "VALUES (gen_random_uuid(), 'order', '1', 'E', '{}')");
            }
            assertThat(StartupDrain.fastForwardPoint(c, Duration.ofMillis(300), () -> true))
                    .as("no point while the writer's transaction is open").isEmpty();
            writer.commit();
            assertThat(StartupDrain.fastForwardPoint(c, Duration.ofSeconds(30), () -> true))
                    .as("a point once it ended").isPresent();
        }
    }

    /** The isolation level the server gives the session's next transaction (not the driver's cached value). */
    private static String serverLevel(Connection c) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SHOW transaction_isolation")) {
            rs.next();
            return rs.getString(1);
        }
    }
}
