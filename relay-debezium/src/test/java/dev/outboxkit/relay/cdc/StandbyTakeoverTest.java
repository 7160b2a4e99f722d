package dev.outboxkit.relay.cdc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.outboxkit.testkit.History;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.Duration;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Two instances on one slot: A streams, B stands by. A is frozen (SIGSTOP: a long GC pause, with its
 * sockets still open) past its lease; B takes over (ends A's walsender, draws a larger fencing token) and
 * streams. A wakes up: its offset writes are refused and it steps down to standby. Then B is killed and A
 * takes over again. Nothing lost, order kept, and the stored offset is the last holder's. The frozen A keeps its
 * connections (its liveness lock) and so its lease until expiry; the killed B (whose own lease is long) is replaced
 * at once, measured from the kill to A's first acknowledged record.
 */
@ExtendWith(OutboxTestkitExtension.class)
class StandbyTakeoverTest {

    private static final Logger log = LoggerFactory.getLogger(StandbyTakeoverTest.class);
    /** B's own lease (each holder sets its lease's expiry): long, so that only its liveness lock explains a fast takeover. */
    private static final long KILLED_LEASE_MILLIS = 60_000;

    @Test
    void aStandbyTakesOverAndTheStaleInstanceIsFenced(TestDatabase db, TestKafka kafka) throws Exception {
        boolean deleteAfterPublish = true;
        String topic = TestKafka.uniqueTopic("cdc-standby");
        kafka.createTopic(topic, 4);
        History history = new History();
        try (BackgroundWriter writer = new BackgroundWriter(db, history, topic, 30, 4);
             ChildRelay a = ChildRelay.start("instance-a", db, kafka, topic, deleteAfterPublish);
             ChildRelay b = startStandby(db, kafka, topic, deleteAfterPublish, a)) {
            assertThat(a.awaitPublished(200, Duration.ofSeconds(120))).isTrue();

            a.process().pause();
            log.info("froze instance A after it published {}", a.published());
            Timestamp frozenUntil = CdcTestSupport.lease(db).expiresAt();
            assertThat(b.process().awaitOutput("READY", Duration.ofSeconds(120))).as("B takes over:%n%s", b.output()).isTrue();
            assertThat(CdcTestSupport.lease(db).acquiredAt()).as("A's lease is taken only once it expired").isAfterOrEqualTo(frozenUntil);
            assertThat(b.awaitPublished(200, Duration.ofSeconds(120))).isTrue();
            long fenceB = CdcTestSupport.lease(db).fence();

            a.process().resume();
            await().atMost(Duration.ofSeconds(90)).until(() -> a.output().contains("lost lease")
                    || a.output().contains("offset write refused"));
            await().atMost(Duration.ofSeconds(90)).until(() -> a.output().lastIndexOf("STANDBY") > a.output().lastIndexOf("READY"));
            log.info("instance A stepped down after waking up");
            assertThat(b.output()).contains("of a previous lease holder: ended it");

            long publishedBeforeKill = a.published();
            long killedAt = System.currentTimeMillis();
            b.kill9();
            await().atMost(Duration.ofMillis(KILLED_LEASE_MILLIS)).pollInterval(Duration.ofMillis(5))
                    .until(() -> CdcTestSupport.leaseHolder(db).equals("instance-a"));
            long leaseMillis = System.currentTimeMillis() - killedAt;
            await().atMost(Duration.ofMillis(KILLED_LEASE_MILLIS)).until(() -> a.firstPublishedAfter(publishedBeforeKill) > 0);
            long ackMillis = a.firstPublishedAfter(publishedBeforeKill) - killedAt;
            System.out.printf("FAILOVER cdc kill -9 of the active relay -> the standby took the lease: %d ms; its first "
                    + "acknowledged record: %d ms (the killed one's lease %d ms)%n", leaseMillis, ackMillis, KILLED_LEASE_MILLIS);
            // Bounds for a loaded CI machine (the target, 3 s to the first ack, is for a quiet one). Without the liveness
            // lock neither could be met: B renewed its lease at most a third of it before the kill.
            assertThat(leaseMillis).as("lease taken at once, not at expiry").isLessThan(10_000);
            assertThat(ackMillis).as("published long before the lease could expire").isLessThan(KILLED_LEASE_MILLIS / 2);
            assertThat(a.process().awaitOutput("READY", Duration.ofSeconds(120))).isTrue();
            assertThat(a.output()).contains("whose process is gone");
            await().atMost(Duration.ofSeconds(120)).until(() -> a.output().lastIndexOf("READY") > a.output().lastIndexOf("STANDBY"));
            long beforeClose = writer.committed();
            await("the writer committing events with A streaming again").atMost(Duration.ofSeconds(60))
                    .until(() -> writer.committed() >= beforeClose + 100);
            writer.close();
            long committed = writer.committed();
            await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofSeconds(1))
                    .until(() -> CdcTestSupport.distinctIds(kafka, topic) >= committed);
            long fenceFinal = CdcTestSupport.lease(db).fence();
            assertThat(fenceFinal).as("A took the lease back with a new, larger token").isGreaterThan(fenceB);
            await().atMost(Duration.ofSeconds(30)).until(() -> offsetWrittenWith(db, fenceFinal));
            a.terminate();
        } finally {
            CdcTestSupport.dropSlot(db);
        }
        CdcTestSupport.consume(kafka, topic, history);
        History.Report report = history.check();
        log.info("standby takeover and back: {}", report.summary());
        assertThat(report.ok()).as(report.summary()).isTrue();
    }

    private static ChildRelay startStandby(TestDatabase db, TestKafka kafka, String topic, boolean deleteAfterPublish,
                                           ChildRelay a) {
        a.awaitReady(Duration.ofSeconds(120));
        ChildRelay b = ChildRelay.start("instance-b", db, kafka, topic, deleteAfterPublish, "lease=" + KILLED_LEASE_MILLIS);
        if (!b.process().awaitOutput("STANDBY", Duration.ofSeconds(120))) {
            throw new AssertionError("B did not stand by:\n" + b.output());
        }
        return b;
    }

    private static boolean offsetWrittenWith(TestDatabase db, long fence) throws Exception {
        try (Connection c = db.connect(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(
                "SELECT fence, updated_by FROM outbox_cdc_offset WHERE slot_name = '" + CdcTestSupport.slotFor(db) + "'")) {
            return rs.next() && rs.getLong(1) == fence && rs.getString(2).equals("instance-a");
        }
    }
}
