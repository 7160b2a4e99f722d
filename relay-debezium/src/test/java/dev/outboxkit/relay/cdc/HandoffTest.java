package dev.outboxkit.relay.cdc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;

import dev.outboxkit.testkit.History;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import dev.outboxkit.testkit.internal.Handoffs;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.LoggerFactory;

/**
 * A graceful stop (what SIGTERM does) of the active WAL relay hands the slot to the standby at once: an
 * active and a standby under a steady writer, the active one is closed, and the worst delay (Kafka record timestamp
 * minus createdAt) of the events created meanwhile is bounded. A new standby then starts and the next handoff follows.
 * The default lease (15 s) keeps expiry out of it. Before, the standby found out at its next look (every 200 ms); now
 * the release announces itself at its commit, which the test checks first. The stopping instance gives the lease back
 * at its stop point, before Debezium's engine closed, and the successor publishes from the table until its own engine
 * streams (issue 30, items 2 and 3): each stop logs its hand-over and each successor where its start went, and neither
 * side logs an ERROR.
 */
@ExtendWith(OutboxTestkitExtension.class)
class HandoffTest {

    /**
     * Well below the lease (15 s): the standby took over on the release, not at expiry. Not the 250 ms target, which
     * a quiet machine meets: on the shared, loaded machine (load 20-50) every commit and every Kafka acknowledgement
     * costs tens of milliseconds, and the gap (the stop point, the release, the successor's checks and its first pass
     * over the table) was 0.3-1.6 s (docs/reliability.md). Debezium's start is no longer part of it.
     */
    private static final long MAX_GAP_MILLIS = 5_000;

    @Test
    void aStoppingActiveHandsTheSlotToTheStandbyWithoutAGap(TestDatabase db, TestKafka kafka) throws Exception {
        String topic = TestKafka.uniqueTopic("cdc-handoff");
        kafka.createTopic(topic, 4);
        History history = new History();
        List<Handoffs.Window> stops = new ArrayList<>();
        List<CdcRelay> running = new ArrayList<>();
        Logger supervisor = (Logger) LoggerFactory.getLogger("dev.outboxkit.relay.cdc.internal.Supervisor");
        Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        CdcTestSupport.awaitNoEngineLeftBehind(Duration.ofSeconds(90)); // its ERRORs are not this test's
        ListAppender<ILoggingEvent> logged = new ListAppender<>();
        logged.start();
        root.addAppender(logged);
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
            root.detachAppender(logged);
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
        List<ILoggingEvent> events = List.copyOf(logged.list);
        // every stop in the loop, and the closes at the end, handed over at its stop point (before its engine closed)
        assertThat(messages(events, supervisor, "handed over ")).as("hand-overs at the stop point")
                .hasSizeGreaterThanOrEqualTo(Handoffs.COUNT + 1).allSatisfy(m -> assertThat(m).contains("closing Debezium's engine"));
        // the first start and each takeover say where their start went, ending with Debezium streaming
        assertThat(messages(events, supervisor, " taken over (lease token ")).as("start-up phases")
                .hasSizeGreaterThanOrEqualTo(Handoffs.COUNT + 1)
                .allSatisfy(m -> assertThat(m).contains("checks done at", "slot free at", "streaming at"));
        // A takeover of a lease handed over publishes its first pass before the slot's checks (Session's class doc): the
        // order and completeness checked above cover that path, which every handoff here takes.
        assertThat(messages(events, supervisor, " taken over (lease token ").stream().filter(HandoffTest::drainedBeforeChecks))
                .as("takeovers whose first pass preceded the slot's checks").hasSizeGreaterThanOrEqualTo(Handoffs.COUNT);
        // No ERROR at all, Debezium's included: its async engine, closed while its polling thread was about to hand over
        // a batch, used to submit it to its terminated processing pool and log "Engine has failed with"
        // (RejectedExecutionException), about once in 60 hand-overs; the handler now holds that thread past the stop
        // point until the close (docs/reliability.md, "Debezium's close while changes flow").
        assertThat(events.stream().filter(e -> e.getLevel().isGreaterOrEqual(Level.ERROR))
                .filter(e -> e.getLoggerName().startsWith("dev.outboxkit") || e.getLoggerName().startsWith("io.debezium"))
                .map(e -> e.getLoggerName() + ": " + e.getFormattedMessage()))
                .as("ERRORs of the relays and Debezium across the handoffs").isEmpty();
    }

    private static final Pattern PHASES = Pattern.compile("checks done at (\\d+) ms, drain of \\d+ rows done at (\\d+) ms");

    private static boolean drainedBeforeChecks(String phases) {
        Matcher m = PHASES.matcher(phases);
        return m.find() && Long.parseLong(m.group(2)) <= Long.parseLong(m.group(1));
    }

    private static List<String> messages(List<ILoggingEvent> events, Logger from, String containing) {
        return events.stream().filter(e -> e.getLoggerName().equals(from.getName())).map(ILoggingEvent::getFormattedMessage)
                .filter(m -> m.contains(containing)).toList();
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
