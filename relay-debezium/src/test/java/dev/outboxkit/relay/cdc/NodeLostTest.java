package dev.outboxkit.relay.cdc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.outboxkit.testkit.History;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import dev.outboxkit.testkit.fault.TcpFaultProxy;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Timestamp;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The active instance's node is lost (issue 30, item 2): every connection of instance A (a JVM of its own) to
 * PostgreSQL — its pool, its liveness lock and Debezium's replication connection — runs through a
 * {@link TcpFaultProxy}, which is
 * blackholed: nothing is forwarded and nothing is closed, as when a host loses power or the network is cut, so the
 * server keeps A's sessions, its liveness lock and its walsender (the slot stays active). Standby B must wait for
 * A's lease to expire (its liveness lock proves nothing here), then end A's sessions and walsender and stream.
 * Checked: the lease is taken only after it expired, A's walsender is gone, B publishes, nothing is lost or
 * reordered, and no write of A completes after the takeover, even once the network heals (an audit trigger records
 * every write with its session's application_name and time).
 */
@ExtendWith(OutboxTestkitExtension.class)
class NodeLostTest {

    private static final Logger log = LoggerFactory.getLogger(NodeLostTest.class);
    private static final Duration LEASE = Duration.ofSeconds(4);

    @Test
    void aHolderCutOffWithoutFinIsReplacedAtLeaseExpiryAndItsWalsenderEnded(TestDatabase db, TestKafka kafka) throws Exception {
        String topic = TestKafka.uniqueTopic("cdc-node-lost");
        kafka.createTopic(topic, 4);
        auditWrites(db);
        History history = new History();
        SimpleMeterRegistry registryB = new SimpleMeterRegistry();
        String slot = CdcTestSupport.slotFor(db);
        TcpFaultProxy link = TcpFaultProxy.start("pg-of-a", db.server().host(), db.server().port());
        try (link; BackgroundWriter writer = new BackgroundWriter(db, history, topic, 20, 5);
             ChildRelay a = ChildRelay.start("a", db, kafka, topic, true,
                     "jdbcUrl=" + db.jdbcUrlVia(link.host(), link.port()), "lease=" + LEASE.toMillis());
             CdcRelay b = CdcTestSupport.relay(db, kafka).instanceId("b").leaseDuration(LEASE)
                     .meterRegistry(registryB).build();
             AutoCloseable healedBeforeClosing = link::heal) {
            a.awaitReady(Duration.ofSeconds(120));
            b.start();
            await().atMost(Duration.ofSeconds(60)).until(() -> b.role() == CdcRelay.Role.STANDBY);
            assertThat(a.awaitPublished(200, Duration.ofSeconds(120))).isTrue();
            await().atMost(Duration.ofSeconds(60)).until(() -> CdcTestSupport.slotActive(db, slot));
            int walsenderOfA = CdcTestSupport.slotActivePid(db, slot);

            link.blackhole();
            long cutAt = System.currentTimeMillis();
            Timestamp expiresAt = CdcTestSupport.lease(db).expiresAt();
            log.info("blackholed every connection of instance A (walsender {}); its lease expires at {}", walsenderOfA, expiresAt);

            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(5)).until(() -> "b".equals(CdcTestSupport.leaseHolder(db)));
            long leaseMillis = System.currentTimeMillis() - cutAt;
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(5))
                    .until(() -> registryB.get("outbox.relay.published").counter().count() > 0);
            long firstAckMillis = System.currentTimeMillis() - cutAt;
            Timestamp takenAt = CdcTestSupport.lease(db).acquiredAt();
            assertThat(takenAt).as("A's lease is taken only once it expired").isAfterOrEqualTo(expiresAt);
            await().atMost(Duration.ofSeconds(60)).until(() -> !backendAlive(db, walsenderOfA));
            long walsenderGoneMillis = System.currentTimeMillis() - cutAt;
            await().atMost(Duration.ofSeconds(60)).until(() -> b.health().ready());
            // ready comes with the table's first pass (the bridge); Debezium's walsender attaches once its engine started,
            // 51 s after the cut in one run at load 31: this wait alone may take most of a minute on a busy machine
            await().atMost(Duration.ofSeconds(120)).until(() -> {
                int pid = CdcTestSupport.slotActivePid(db, slot);
                return pid > 0 && pid != walsenderOfA;
            });
            long streamingMillis = System.currentTimeMillis() - cutAt;
            int walsenderOfB = CdcTestSupport.slotActivePid(db, slot);
            assertThat(walsenderOfB).as("B streams the slot on a walsender of its own").isPositive().isNotEqualTo(walsenderOfA);
            System.out.printf("FAILOVER cdc network blackhole of the active relay (lease %d ms) -> the standby took the lease: "
                            + "%d ms; the old walsender gone: %d ms; first acknowledged record: %d ms; streaming: %d ms%n",
                    LEASE.toMillis(), leaseMillis, walsenderGoneMillis, firstAckMillis, streamingMillis);
            assertThat(leaseMillis).as("taken at expiry, not long after").isLessThan(LEASE.toMillis() * 5);
            // well below wal_sender_timeout (60 s): the walsender was ended, not timed out
            assertThat(walsenderGoneMillis).as("A's walsender ended by B").isLessThan(40_000);

            // the partition heals: A finds its sessions ended, its lease gone, and steps down without writing
            link.heal();
            await().atMost(Duration.ofSeconds(90)).until(() -> a.output().lastIndexOf("STANDBY") > a.output().lastIndexOf("READY"));
            assertThat(CdcTestSupport.leaseHolder(db)).isEqualTo("b");

            writer.close();
            long committed = writer.committed();
            await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofSeconds(1))
                    .until(() -> CdcTestSupport.distinctIds(kafka, topic) >= committed);
            assertThat(db.count("SELECT count(*) FROM outbox_write_audit WHERE application_name LIKE 'outboxkit-cdc:%:a' "
                    + "AND at >= (SELECT acquired_at FROM outbox_relay_lease WHERE lease_key = 'cdc/" + slot + "')"))
                    .as("writes of A after the takeover").isZero();
            assertThat(db.count("SELECT count(*) FROM outbox_write_audit WHERE application_name LIKE 'outboxkit-cdc:%:b'"))
                    .as("the audit sees the relays' writes").isPositive();
            a.terminate();
        } finally {
            CdcTestSupport.dropSlot(db);
        }
        CdcTestSupport.consume(kafka, topic, history);
        History.Report report = history.check();
        log.info("node lost: {}", report.summary());
        assertThat(report.ok()).as(report.summary()).isTrue();
    }

    /** Records every write to the relay's tables with the writing session's application_name and the time. */
    private static void auditWrites(TestDatabase db) throws Exception {
        db.exec("CREATE TABLE outbox_write_audit (application_name text, tbl text, at timestamptz)",
                "CREATE FUNCTION outbox_write_audited() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                        + "INSERT INTO outbox_write_audit VALUES (current_setting('application_name'), TG_TABLE_NAME, "
                        + "clock_timestamp()); RETURN NULL; END $$",
                "GRANT INSERT ON outbox_write_audit TO PUBLIC");
        // the relays delete from outbox_event (the writer only inserts) and write offsets and dead letters
        db.exec("CREATE TRIGGER audited AFTER DELETE ON outbox_event FOR EACH ROW EXECUTE FUNCTION outbox_write_audited()");
        for (String table : new String[] {"outbox_cdc_offset", "outbox_dead_letter"}) {
            db.exec("CREATE TRIGGER audited AFTER INSERT OR UPDATE OR DELETE ON " + table
                    + " FOR EACH ROW EXECUTE FUNCTION outbox_write_audited()");
        }
    }

    private static boolean backendAlive(TestDatabase db, int pid) throws Exception {
        return db.count("SELECT count(*) FROM pg_stat_activity WHERE pid = ?", pid) > 0;
    }
}
