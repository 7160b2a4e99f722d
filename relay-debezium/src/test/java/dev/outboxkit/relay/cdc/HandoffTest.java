package dev.outboxkit.relay.cdc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;

import dev.outboxkit.core.EventIds;
import dev.outboxkit.testkit.History;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import dev.outboxkit.testkit.internal.Handoffs;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.LoggerFactory;

/**
 * A graceful stop (what SIGTERM does) of the active CDC relay hands the slot to the standby at once: an
 * active and a standby under a steady writer, the active one is closed, and the worst delay (Kafka record timestamp
 * minus createdAt) of the events created meanwhile is bounded. A new standby then starts and the next handoff follows.
 * Holder and standby each report themselves (outbox_relay_report) and delete their report on the stop.
 * The default lease (15 s) keeps expiry out of it. Before, the standby found out at its next look (every 200 ms); now
 * the release announces itself at its commit, which the test checks first. The stopping instance gives the lease back
 * at its stop point, before Debezium's engine closed, and the successor publishes from the table until its own engine
 * streams (issue 30, items 2 and 3): each stop logs its hand-over and each successor where its start went, and neither
 * side logs an ERROR. A second test hands over to a standby that finds the slot dropped and its records deleted (the
 * runbook's recovery for a lost slot): it creates the slot, and the passes over the table cover what no slot holds.
 */
@ExtendWith(OutboxTestkitExtension.class)
class HandoffTest {

    /**
     * Well below the lease (15 s): the standby took over on the release, not at expiry. Not the 250 ms target, which
     * a quiet machine meets: on the shared, loaded machine (load 20-50) every commit and every Kafka acknowledgement
     * costs tens of milliseconds, and the gap (the stop point, the release, the successor's checks and its first pass
     * over the table) was 0.3-1.6 s (docs/evidence/reliability-handoff-20261202.md). Debezium's start is no longer part of it.
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
                if (i == 0) {
                    // both report themselves for the console: the holder ready and publishing, the standby ready to take over
                    await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(db.strings("SELECT instance_id"
                            + " || ' ' || relay || ' ' || ready || ' ' || (published > 0) || ' ' || (last_published_at IS NOT NULL)"
                            + " FROM outbox_relay_report ORDER BY instance_id"))
                            .containsExactly("handoff-0 cdc true true true", "handoff-1 cdc true false false"));
                }
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
        assertThat(db.strings("SELECT instance_id FROM outbox_relay_report")).as("each report deleted on its clean stop").isEmpty();
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
        // point until the close (docs/evidence/reliability-findings-20261201.md, "Debezium's close while changes flow").
        assertThat(events.stream().filter(e -> e.getLevel().isGreaterOrEqual(Level.ERROR))
                .filter(e -> e.getLoggerName().startsWith("dev.outboxkit") || e.getLoggerName().startsWith("io.debezium"))
                .map(e -> e.getLoggerName() + ": " + e.getFormattedMessage()))
                .as("ERRORs of the relays and Debezium across the handoffs").isEmpty();
    }

    /**
     * A takeover of a handed-over lease whose slot is gone. A hands over while its standby B is frozen (SIGSTOP, as in
     * a long pause); meanwhile the operator's recovery for a lost slot (runbook: drop it, delete its rows in
     * outbox_cdc_offset and outbox_cdc_slot) runs and the writers go on. B resumes, takes the lease A gave back,
     * publishes its first pass, and its checks find neither a record nor a slot and create one. A transaction that B's
     * first pass could not see and that commits while that creation waits for it (a new slot streams only what commits
     * after its creation) is in neither the first pass nor the stream: only the passes after the checks publish it
     * (Session's class doc). Every wait is on a condition the database shows, not on time.
     */
    @Test
    void aTakeoverAfterTheSlotWasDroppedCreatesItAndPublishesWhatWasCommittedWithoutOne(TestDatabase db, TestKafka kafka)
            throws Exception {
        String topic = TestKafka.uniqueTopic("cdc-handoff-noslot");
        kafka.createTopic(topic, 4);
        String slot = CdcTestSupport.slotFor(db);
        History history = new History();
        List<CdcRelay> running = new ArrayList<>();
        List<UUID> held;
        String output;
        String unsettled = null;
        try (BackgroundWriter writer = new BackgroundWriter(db, history, topic, 20, 5); Connection holding = db.connect()) {
            CdcRelay a = start(db, kafka, "noslot-a");
            running.add(a);
            await().atMost(Duration.ofSeconds(60)).until(() -> a.health().ready());
            try (ChildRelay b = ChildRelay.start("noslot-b", db, kafka, topic, true)) { // its JVM starts while A publishes
                await("A publishing").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
                        .until(() -> CdcTestSupport.distinctIds(kafka, topic) >= 100);
                if (!b.process().awaitOutput("STANDBY", Duration.ofSeconds(120))) {
                    throw new AssertionError("B did not stand by:\n" + b.output());
                }
                b.process().pause();
                running.remove(a);
                a.close(); // hands the lease over at its stop point
                await("A's walsender gone from slot " + slot).atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20))
                        .until(() -> !CdcTestSupport.slotActive(db, slot));
                // the recovery, as the runbook has it
                db.execute("SELECT pg_drop_replication_slot(?)", slot);
                db.execute("DELETE FROM outbox_cdc_offset WHERE slot_name = ?", slot);
                db.execute("DELETE FROM outbox_cdc_slot WHERE slot_name = ?", slot);
                long dropped = writer.committed();
                await("the writer committing while no slot exists").atMost(Duration.ofSeconds(30))
                        .until(() -> writer.committed() >= dropped + 50);
                holding.setAutoCommit(false);
                held = insertHeld(holding, topic, 1, 3);
                b.process().resume();
                b.await("B's checks creating the slot, waiting for the held transaction", Duration.ofSeconds(60), db,
                        () -> creatingSlot(db, "outboxkit-cdc:" + slot + ":noslot-b"));
                holding.commit();
                committedHeld(history, held, 1);
                holding.setAutoCommit(true);
                List<UUID> later = insertHeld(holding, topic, 4, 3); // after them: in the new slot's stream or a pass
                committedHeld(history, later, 4);
                b.awaitReady(Duration.ofSeconds(120));
                long streaming = writer.committed();
                await("the writer committing with B streaming").atMost(Duration.ofSeconds(60))
                        .until(() -> writer.committed() >= streaming + 100);
                writer.close();
                long committed = writer.committed() + held.size() + later.size();
                try { // on a timeout the history below names the events missing
                    await("every committed event published").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500))
                            .until(() -> CdcTestSupport.distinctIds(kafka, topic) >= committed);
                    await("the outbox emptied by B's deletes").atMost(Duration.ofSeconds(30))
                            .pollInterval(Duration.ofMillis(200)).until(() -> rowsLeft(db).isEmpty());
                } catch (ConditionTimeoutException e) {
                    unsettled = e.getMessage() + "; left in the outbox: " + rowsLeft(db);
                }
                await("B's start-up phases logged").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100))
                        .until(() -> b.output().contains(slot + " taken over (lease token "));
                assertThat(db.strings("SELECT created_by FROM outbox_cdc_slot WHERE slot_name = ?", slot))
                        .as("the slot's record: written by B's checks").containsExactly("noslot-b");
                assertThat(CdcTestSupport.slotActive(db, slot)).as("B streams the slot it created").isTrue();
                assertThat(b.terminate()).as("B's graceful stop").isIn(0, 143);
                output = b.output();
            }
        } finally {
            running.forEach(CdcRelay::close);
            CdcTestSupport.dropSlot(db);
        }
        CdcTestSupport.consume(kafka, topic, history);
        History.Report report = history.check();
        System.out.printf("HANDOFF cdc takeover with the slot dropped: %s; held %s%n", report.summary(), held);
        Set<String> published = kafka.readAll(List.of(topic)).stream().map(r -> CdcTestSupport.header(r, "id"))
                .collect(Collectors.toSet());
        assertThat(published).as("published: the held transaction's events (%s)", report.summary())
                .containsAll(held.stream().map(UUID::toString).toList());
        assertThat(report.ok()).as(report.summary()).isTrue();
        assertThat(unsettled).as("every event published, the outbox emptied").isNull();
        assertThat(output).as("B took the lease A gave back").contains("acquired lease cdc/" + slot + " with fencing token ")
                .contains("(previous holder null): taking over slot " + slot);
        assertThat(lines(output, "created replication slot " + slot + " ")).as("B's checks created the slot").hasSize(1);
        List<String> takeover = lines(output, slot + " taken over (lease token ");
        System.out.printf("HANDOFF cdc takeover with the slot dropped, B: %s%n", takeover);
        assertThat(takeover).as("B's start-up phases").hasSize(1);
        assertThat(takeover).as("B's first pass preceded its checks (a takeover of a lease handed over)")
                .allMatch(HandoffTest::drainedBeforeChecks);
        // what the writers committed while B was frozen waited in the table for B's first pass
        assertThat(takeover).as("rows B's first pass published: those committed after the recovery at least")
                .allSatisfy(m -> assertThat(rows(FIRST_PASS, m)).isGreaterThanOrEqualTo(50));
        assertThat(takeover).as("rows the passes after B's first one published: the held ones at least")
                .allSatisfy(m -> assertThat(rows(PASSED, m)).isGreaterThanOrEqualTo(held.size()));
        assertThat(lines(output, " ERROR ")).as("ERRORs of B").isEmpty();
    }

    private static final Pattern PHASES = Pattern.compile("checks done at (\\d+) ms, drain of \\d+ rows done at (\\d+) ms");

    private static boolean drainedBeforeChecks(String phases) {
        Matcher m = PHASES.matcher(phases);
        return m.find() && Long.parseLong(m.group(2)) <= Long.parseLong(m.group(1));
    }

    private static final Pattern FIRST_PASS = Pattern.compile("drain of (\\d+) rows done");
    private static final Pattern PASSED = Pattern.compile("passes over the table published (\\d+) more rows");

    /** The count {@code pattern} finds in a line of start-up phases, -1 when none. */
    private static long rows(Pattern pattern, String phases) {
        Matcher m = pattern.matcher(phases);
        return m.find() ? Long.parseLong(m.group(1)) : -1;
    }

    /** Whether a session of {@code application} waits in pg_create_logical_replication_slot (for running transactions). */
    private static boolean creatingSlot(TestDatabase db, String application) throws SQLException {
        return db.count("SELECT count(*) FROM pg_stat_activity WHERE application_name = ? "
                + "AND query LIKE '%pg_create_logical_replication_slot%' AND wait_event_type = 'Lock'", application) > 0;
    }

    /** Inserts {@code count} events of the aggregate "held" (no background writer's), numbered from {@code from}. */
    private static List<UUID> insertHeld(Connection c, String topic, long from, int count) throws SQLException {
        List<UUID> ids = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, "
                + "topic, payload) VALUES (?, 'order', 'held', 'OrderChanged', ?, ?::jsonb)")) {
            for (long n = from; n < from + count; n++) {
                UUID id = EventIds.next();
                ps.setObject(1, id);
                ps.setString(2, topic);
                ps.setString(3, "{\"aggregate\": \"held\", \"n\": " + n + "}");
                ps.executeUpdate();
                ids.add(id);
            }
        }
        return ids;
    }

    /** The events of "held" numbered from {@code from}, committed: into the history in their order. */
    private static void committedHeld(History history, List<UUID> ids, long from) {
        for (int i = 0; i < ids.size(); i++) {
            history.committed(ids.get(i), "held", from + i);
        }
    }

    /** The lines of a child's output containing {@code text}. */
    private static List<String> lines(String output, String text) {
        return output.lines().filter(l -> l.contains(text)).toList();
    }

    /** The first rows still in the outbox: seq, id, aggregate. */
    private static List<String> rowsLeft(TestDatabase db) throws SQLException {
        return db.strings("SELECT concat_ws(' ', seq, id, aggregate_id) FROM outbox_event ORDER BY seq LIMIT 20");
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
