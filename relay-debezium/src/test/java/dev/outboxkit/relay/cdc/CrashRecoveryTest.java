package dev.outboxkit.relay.cdc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.outboxkit.testkit.History;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import java.time.Duration;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * kill -9 of the relay process while it streams, twice, with a writer committing all along; then a
 * restart that runs to the end. Checked with the shared {@link History}: nothing lost, nothing
 * unexpected, per-aggregate order of first applications kept; duplicate deliveries counted and bounded.
 * Both modes: the default (the table is the truth; restarts drain it and skip the WAL they covered) and
 * WAL-only ({@code deleteAfterPublish(false)}, where Debezium's resume from the stored offset is all there is).
 */
@ExtendWith(OutboxTestkitExtension.class)
class CrashRecoveryTest {

    private static final Logger log = LoggerFactory.getLogger(CrashRecoveryTest.class);
    private static final int KILLS = 2;
    /**
     * Upper bound of re-deliveries per kill. Default mode: rows acknowledged but not yet deleted when the
     * process died (the deleter trails the acks by a batch). WAL-only: what was published after the last
     * stored offset (flush every 200 ms) plus the transaction in progress. A few hundred at this test's
     * rate; the bound leaves room for a loaded machine.
     */
    private static final int DUPLICATES_PER_KILL = 1_500;

    /**
     * The children's lease. A restarted child takes its killed predecessor's lease at once (same instance, and the
     * liveness lock says the holder's process is gone), so its length costs this test nothing; ChildRelay's 5 s was
     * lost to missed renewals at load ~50 (issue 26), and the re-taken lease plus Debezium's restart then outlasted
     * the 120 s wait for READY — a race of the test against the scheduler, not the recovery under test.
     */
    static final String LEASE = "lease=30000";

    /** The second case also runs with asynchronous acknowledgements (maxInFlight above a batch). */
    @ParameterizedTest(name = "deleteAfterPublish={0}, maxInFlight={1}")
    @CsvSource({"true, 0", "false, 16384"})
    void killNineMidStreamLosesNothingAndKeepsOrder(boolean deleteAfterPublish, int maxInFlight, TestDatabase db,
                                                    TestKafka kafka) throws Exception {
        String topic = TestKafka.uniqueTopic("cdc-crash");
        kafka.createTopic(topic, 4);
        History history = new History();
        try (BackgroundWriter writer = new BackgroundWriter(db, history, topic, 40, 3)) {
            for (int kill = 1; kill <= KILLS; kill++) {
                try (ChildRelay relay = ChildRelay.start("crash-" + kill, db, kafka, topic, deleteAfterPublish, "instance=crashing-relay",
                        "maxInFlight=" + maxInFlight, LEASE)) {
                    relay.awaitReady(Duration.ofSeconds(120));
                    assertThat(relay.awaitPublished(400, Duration.ofSeconds(120)))
                            .as("relay %d publishes while the writer writes:%n%s", kill, relay.output()).isTrue();
                    relay.kill9();
                    log.info("killed relay {} after it published {}; writer committed {}", kill, relay.published(),
                            writer.committed());
                }
            }
            try (ChildRelay last = ChildRelay.start("crash-final", db, kafka, topic, deleteAfterPublish,
                    "instance=crashing-relay", "maxInFlight=" + maxInFlight, LEASE)) {
                last.awaitReady(Duration.ofSeconds(120));
                assertThat(last.awaitPublished(200, Duration.ofSeconds(120))).isTrue();
                writer.close();
                long committed = writer.committed();
                await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofSeconds(1))
                        .until(() -> CdcTestSupport.distinctIds(kafka, topic) >= committed);
                assertThat(last.terminate()).as("graceful stop").isIn(0, 143);
            }
        } finally {
            CdcTestSupport.dropSlot(db);
        }
        CdcTestSupport.consume(kafka, topic, history);
        History.Report report = history.check();
        log.info("kill -9 x{} (deleteAfterPublish={}, maxInFlight={}): {}", KILLS, deleteAfterPublish, maxInFlight,
                report.summary());
        assertThat(report.ok()).as(report.summary()).isTrue();
        assertThat(report.lost()).isZero();
        assertThat(report.orderViolations()).isZero();
        assertThat(report.duplicateDeliveries()).as("re-deliveries after %d kills", KILLS).isLessThanOrEqualTo(
                (long) KILLS * DUPLICATES_PER_KILL);
    }
}
