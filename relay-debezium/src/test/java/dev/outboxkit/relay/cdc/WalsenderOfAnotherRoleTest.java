package dev.outboxkit.relay.cdc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.outboxkit.core.Secret;
import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.testkit.DocumentedGrants;
import dev.outboxkit.testkit.Grant;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import java.sql.Connection;
import java.sql.DriverManager;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.postgresql.PGConnection;
import org.postgresql.PGProperty;
import org.postgresql.replication.PGReplicationStream;
import org.slf4j.LoggerFactory;

/**
 * The slot is streamed by a walsender the relay's role may not end (here a superuser's, which not even
 * {@code pg_signal_backend} may signal): the relay that holds the lease does not fail its start; it warns once with the
 * GRANT that would let it, waits while the slot is busy (as it would for {@code wal_sender_timeout}), and streams as
 * soon as the walsender is gone.
 */
@ExtendWith(OutboxTestkitExtension.class)
class WalsenderOfAnotherRoleTest {

    @Test
    void aWalsenderTheRoleMayNotEndIsWaitedForWithOneWarning(TestDatabase db, TestKafka kafka) throws Exception {
        String role = "cdc_" + db.name() + "_lp";
        Grant.roleWith(db, "public", role, "pw", DocumentedGrants.cdcRelay(true), null);
        db.exec("CREATE PUBLICATION outboxkit_pub FOR TABLE public.outbox_event, public.outbox_cdc_heartbeat "
                + "WITH (publish = 'insert')");
        String slot = CdcTestSupport.slotFor(db);
        String topic = TestKafka.uniqueTopic("cdc-other-role");
        Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        ListAppender<ILoggingEvent> captured = new ListAppender<>();
        captured.start();
        root.addAppender(captured);
        try (Connection other = replicationConnection(db)) {
            PGConnection pg = other.unwrap(PGConnection.class);
            pg.getReplicationAPI().createReplicationSlot().logical().withSlotName(slot).withOutputPlugin("pgoutput").make();
            PGReplicationStream stream = pg.getReplicationAPI().replicationStream().logical().withSlotName(slot)
                    .withSlotOption("proto_version", 1).withSlotOption("publication_names", "outboxkit_pub").start();
            int otherPid = CdcTestSupport.slotActivePid(db, slot);
            assertThat(otherPid).as("the slot is streamed by the superuser's walsender").isPositive();
            try (CdcRelay relay = CdcTestSupport.relay(db, kafka).user(role).password(Secret.of("pw"))
                    .route(TopicRoute.of(topic)).leaseDuration(Duration.ofSeconds(4)).build()) {
                relay.start();
                await().atMost(Duration.ofSeconds(60)).until(() -> messages(captured).stream()
                        .anyMatch(m -> m.contains("is still active (walsender " + otherPid + "): waiting")));
                assertThat(relay.health().detail()).contains("waiting for walsender " + otherPid);
                assertThat(relay.health().ready()).as("not streaming while the slot is busy").isFalse();
                assertThat(relay.failure()).isNull();

                stream.close(); // what wal_sender_timeout would do for a client that is gone
                other.close();
                await().atMost(Duration.ofSeconds(60)).until(() -> relay.health().ready());
                db.exec("INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, topic, payload) VALUES "
                        + "(gen_random_uuid(), 'order', 'o-1', 'Placed', '" + topic + "', '{}')");
                await().atMost(Duration.ofSeconds(60)).until(() -> kafka.readAll(List.of(topic)).size() == 1);
            }
        } finally {
            root.detachAppender(captured);
            CdcTestSupport.dropSlot(db);
            Grant.dropRole(db, role);
        }
        List<String> grantWarnings = messages(captured).stream().filter(m -> m.contains("may not end")
                && m.contains("GRANT pg_signal_backend TO " + role)).toList();
        assertThat(grantWarnings).as("the GRANT, said once").hasSize(1);
    }

    private static List<String> messages(ListAppender<ILoggingEvent> captured) {
        synchronized (captured.list) {
            return captured.list.stream().map(ILoggingEvent::getFormattedMessage).toList();
        }
    }

    /** A replication connection as the database's owner (a superuser on the test server). */
    private static Connection replicationConnection(TestDatabase db) throws Exception {
        Properties p = new Properties();
        PGProperty.USER.set(p, db.user());
        PGProperty.PASSWORD.set(p, db.password());
        PGProperty.ASSUME_MIN_SERVER_VERSION.set(p, "10");
        PGProperty.REPLICATION.set(p, "database");
        PGProperty.PREFER_QUERY_MODE.set(p, "simple");
        return DriverManager.getConnection(db.jdbcUrl(), p);
    }
}
