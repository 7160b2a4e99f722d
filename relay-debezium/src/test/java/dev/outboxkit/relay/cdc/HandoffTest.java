package dev.outboxkit.relay.cdc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.outboxkit.testkit.History;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import dev.outboxkit.testkit.internal.Handoffs;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A graceful stop (what SIGTERM does) of the active WAL relay hands the slot to the standby at once: an
 * active and a standby under a steady writer, the active one is closed, and the worst delay (Kafka record timestamp
 * minus createdAt) of the events created meanwhile is bounded. A new standby then starts and the next handoff follows.
 * The default lease (15 s) keeps expiry out of it. Before, the standby found out at its next look (every 200 ms); now
 * the release announces itself at its commit, which the test checks first.
 */
@ExtendWith(OutboxTestkitExtension.class)
class HandoffTest {

    /**
     * Well below the lease (15 s): the standby took over on the release, not at expiry. Not the 250 ms target: the
     * standby's drain and Debezium's start (1-4.5 s on the loaded CI machine) are still in the gap (docs/reliability.md).
     */
    private static final long MAX_GAP_MILLIS = 10_000;

    @Test
    void aStoppingActiveHandsTheSlotToTheStandbyWithoutAGap(TestDatabase db, TestKafka kafka) throws Exception {
        String topic = TestKafka.uniqueTopic("cdc-handoff");
        kafka.createTopic(topic, 4);
        History history = new History();
        List<Handoffs.Window> stops = new ArrayList<>();
        List<CdcRelay> running = new ArrayList<>();
        try (BackgroundWriter writer = new BackgroundWriter(db, history, topic, 20, 5); Connection listener = db.connect()) {
            Handoffs.listen(listener);
            running.add(start(db, kafka, "handoff-0"));
            await().atMost(Duration.ofSeconds(60)).until(() -> running.get(0).health().ready());
            running.add(start(db, kafka, "handoff-1"));
            for (int i = 0; i < Handoffs.COUNT; i++) {
                CdcRelay standby = running.get(1);
                await().atMost(Duration.ofSeconds(60)).until(() -> standby.role() == CdcRelay.Role.STANDBY);
                Handoffs.Window stop = Handoffs.stop(running.remove(0)::close, listener);
                stops.add(stop);
                await().atMost(Duration.ofSeconds(60)).until(() -> standby.health().ready());
                // the stop's window closes before the next standby starts
                await().atMost(Duration.ofSeconds(10)).until(() -> System.currentTimeMillis() > stop.toMillis() + 1_000);
                running.add(start(db, kafka, "handoff-" + (i + 2)));
            }
            writer.close();
            long committed = writer.committed();
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500))
                    .until(() -> CdcTestSupport.distinctIds(kafka, topic) >= committed);
        } finally {
            running.forEach(CdcRelay::close);
            CdcTestSupport.dropSlot(db);
        }
        List<ConsumerRecord<byte[], byte[]>> records = kafka.readAll(List.of(topic));
        CdcTestSupport.consume(kafka, topic, history);
        History.Report report = history.check();
        assertThat(report.ok()).as(report.summary()).isTrue();
        List<Long> gaps = Handoffs.worstDelays(records, stops, 0);
        System.out.printf("HANDOFF cdc graceful stop of the active relay: worst delay %s; %d events%n",
                Handoffs.summary(gaps), records.size());
        assertThat(gaps).as("worst delay across each graceful stop").allSatisfy(g -> assertThat(g).isLessThan(MAX_GAP_MILLIS));
    }

    private static CdcRelay start(TestDatabase db, TestKafka kafka, String id) {
        CdcRelay relay = CdcTestSupport.relay(db, kafka)
                .leaseDuration(Duration.ofSeconds(15))
                .offsetFlushInterval(Duration.ofSeconds(1))
                .instanceId(id)
                .build();
        relay.start();
        return relay;
    }
}
