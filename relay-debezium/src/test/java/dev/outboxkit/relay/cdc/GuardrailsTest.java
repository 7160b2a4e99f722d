package dev.outboxkit.relay.cdc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.outboxkit.testkit.History;
import dev.outboxkit.testkit.OutboxRows;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The WAL guardrails: heartbeats release WAL, lost connections resume, a vanished slot is created again where the table
 * holds every unpublished event and stops the relay where the WAL may have been the only copy.
 */
@ExtendWith(OutboxTestkitExtension.class)
class GuardrailsTest {

    private static final Logger log = LoggerFactory.getLogger(GuardrailsTest.class);
    private static final long MB = 1024 * 1024;

    @Test
    void anIdleOutboxOnABusyDatabaseDoesNotPinWal(TestDatabase db, TestKafka kafka) throws Exception {
        db.exec("CREATE TABLE busy (id bigint, filler text)");
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (CdcRelay relay = CdcTestSupport.relay(db, kafka).heartbeatInterval(Duration.ofMillis(300))
                .meterRegistry(registry).build()) {
            relay.start();
            await().atMost(Duration.ofSeconds(90)).until(() -> relay.health().ready());
            // a slot nobody reads, as the control: it keeps every byte written from now on
            db.execute("SELECT pg_create_logical_replication_slot(?, 'pgoutput')", CdcTestSupport.slotFor(db) + "_idle");
            long written = 0;
            for (int round = 0; round < 8; round++) {
                long before = lsnNow(db);
                db.exec("INSERT INTO busy SELECT g, repeat(md5(g::text), 32) FROM generate_series(1, 4000) g");
                written += lsnNow(db) - before;
                Thread.sleep(400); // pacing: writes spread over heartbeats, as a steady load
            }
            db.exec("CHECKPOINT"); // logs the running transactions, letting restart_lsn move
            long total = written;
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500))
                    .until(() -> retained(db, CdcTestSupport.slotFor(db)) < total / 4);
            long relayRetained = retained(db, CdcTestSupport.slotFor(db));
            long controlRetained = retained(db, CdcTestSupport.slotFor(db) + "_idle");
            long lag = db.count("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn)::bigint "
                    + "FROM pg_replication_slots WHERE slot_name = ?", CdcTestSupport.slotFor(db));
            log.info("busy table wrote {} MB of WAL: the relay's slot retains {} KB (confirmed lag {} KB), an unread slot {} MB",
                    written / MB, relayRetained / 1024, lag / 1024, controlRetained / MB);
            assertThat(written).isGreaterThan(16 * MB);
            assertThat(controlRetained).as("an unread slot keeps the WAL").isGreaterThanOrEqualTo(written);
            assertThat(relayRetained).as("heartbeats let the relay's slot release it").isLessThan(written / 4);
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(
                    registry.get("outbox.relay.cdc.slot_lag_bytes").gauge().value()).isLessThan(total / 4.0));
            assertThat(registry.get("outbox.relay.cdc.wal_status").gauge().value()).isZero(); // reserved
        } finally {
            db.dropReplicationSlot(CdcTestSupport.slotFor(db) + "_idle");
            CdcTestSupport.dropSlot(db);
        }
    }

    @Test
    void aTerminatedWalsenderIsResumedWithoutLoss(TestDatabase db, TestKafka kafka) throws Exception {
        String topic = TestKafka.uniqueTopic("cdc-walsender");
        kafka.createTopic(topic, 4);
        History history = new History();
        try (CdcRelay relay = CdcTestSupport.relay(db, kafka).route(dev.outboxkit.core.TopicRoute.of(topic))
                .deleteAfterPublish(false).build()) {
            relay.start();
            await().atMost(Duration.ofSeconds(90)).until(() -> relay.health().ready());
            try (BackgroundWriter writer = new BackgroundWriter(db, history, topic, 30, 3)) {
                String slot = CdcTestSupport.slotFor(db);
                for (int i = 0; i < 2; i++) {
                    // events flow through the walsender before it is ended, and it is there to end: conditions, not
                    // a fixed pause (the walsender may still be starting on a loaded machine)
                    long before = writer.committed();
                    await().atMost(Duration.ofSeconds(60)).until(() -> writer.committed() >= before + 20);
                    await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(100))
                            .until(() -> CdcTestSupport.slotActive(db, slot));
                    long terminated = db.count("SELECT count(*) FROM pg_replication_slots s, "
                            + "LATERAL pg_terminate_backend(s.active_pid) t WHERE s.slot_name = ? AND s.active AND t", slot);
                    log.info("terminated {} walsender(s) of the relay", terminated);
                    assertThat(terminated).isEqualTo(1);
                    await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(200))
                            .until(() -> CdcTestSupport.slotActive(db, slot));
                }
                long beforeClose = writer.committed();
                await().atMost(Duration.ofSeconds(60)).until(() -> writer.committed() >= beforeClose + 20);
                writer.close();
                long committed = writer.committed();
                await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofSeconds(1))
                        .until(() -> CdcTestSupport.distinctIds(kafka, topic) >= committed);
            }
            assertThat(relay.health().live()).isTrue();
        } finally {
            CdcTestSupport.dropSlot(db);
        }
        CdcTestSupport.consume(kafka, topic, history);
        History.Report report = history.check();
        log.info("walsender terminated twice: {}", report.summary());
        assertThat(report.ok()).as(report.summary()).isTrue();
    }

    @Test
    void aSlotDroppedWhileDownIsCreatedAgainWhenTheTableHoldsEveryUnpublishedEvent(TestDatabase db, TestKafka kafka)
            throws Exception {
        String slot = CdcTestSupport.slotFor(db);
        String topic = TestKafka.uniqueTopic("cdc-recreated");
        kafka.createTopic(topic, 1);
        streamOneEvent(db, kafka, CdcTestSupport.relay(db, kafka).route(dev.outboxkit.core.TopicRoute.of(topic)));
        CdcTestSupport.dropSlot(db);
        // written while the relay is down and the slot is gone: only the table has it
        OutboxRows.insertCommitted(db, java.util.List.of(OutboxRows.Row.of(null, "while-gone", 1)));

        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (CdcRelay relay = CdcTestSupport.relay(db, kafka).route(dev.outboxkit.core.TopicRoute.of(topic))
                .meterRegistry(registry).build()) {
            relay.start();
            await().atMost(Duration.ofSeconds(90)).until(() -> relay.health().ready());
            assertThat(CdcTestSupport.await(kafka, topic, 2, Duration.ofSeconds(60))).as("the event written meanwhile")
                    .anySatisfy(r -> assertThat(new String(r.key(), java.nio.charset.StandardCharsets.UTF_8))
                            .isEqualTo("while-gone"));
            assertThat(registry.get("outbox.relay.cdc.slot_recreated").tag("reason", "missing").counter().count())
                    .isEqualTo(1.0);
            assertThat(db.strings("SELECT recreated_reason FROM outbox_cdc_slot WHERE slot_name = ?", slot))
                    .singleElement().asString().contains("replication slot " + slot + " is missing on");
            // and the stream goes on from the new slot
            OutboxRows.insertCommitted(db, java.util.List.of(OutboxRows.Row.of(null, "after", 1)));
            CdcTestSupport.await(kafka, topic, 3, Duration.ofSeconds(60));
        } finally {
            CdcTestSupport.dropSlot(db);
        }
    }

    @Test
    void aSlotLostWhereTheWalMayBeTheOnlyCopyStopsTheRelayWithAClearMessage(TestDatabase db, TestKafka kafka)
            throws Exception {
        String slot = CdcTestSupport.slotFor(db);
        streamOneEvent(db, kafka, CdcTestSupport.relay(db, kafka).deleteAfterPublish(false));
        CdcTestSupport.dropSlot(db);

        CdcRelay walOnly = CdcTestSupport.relay(db, kafka).deleteAfterPublish(false).build();
        assertThatThrownBy(walOnly::start).isInstanceOf(CdcStartupException.class)
                .hasMessageContaining("replication slot " + slot + " is missing on")
                .hasMessageContaining("with deleteAfterPublish(false) the WAL may have been the only copy")
                .hasMessageContaining("refuses to create a new slot")
                .hasMessageContaining("DELETE FROM \"public\".\"outbox_cdc_offset\" WHERE slot_name = '" + slot + "'");
        assertThat(walOnly.health().live()).isFalse();
        assertThat(walOnly.role()).isEqualTo(CdcRelay.Role.FAILED);
        walOnly.close();
        assertThat(db.count("SELECT count(*) FROM pg_replication_slots WHERE slot_name = ?", slot))
                .as("no slot was created behind the operator's back").isZero();

        // someone re-creates the slot by hand on the same server: it starts at the WAL's end, past the stored offset
        db.exec("INSERT INTO outbox_cdc_heartbeat (slot_name) VALUES ('x')");
        db.execute("SELECT pg_create_logical_replication_slot(?, 'pgoutput')", slot);
        try (CdcRelay ahead = CdcTestSupport.relay(db, kafka).build()) {
            assertThatThrownBy(ahead::start).isInstanceOf(CdcStartupException.class)
                    .hasMessageContaining("has confirmed WAL up to")
                    .hasMessageContaining("someone else advanced or re-created the slot");
        } finally {
            CdcTestSupport.dropSlot(db);
        }
    }

    @Test
    void anEventOnlyTheWalHeldIsRememberedAndALostSlotIsThenNotCreatedAgain(TestDatabase db, TestKafka kafka)
            throws Exception {
        String slot = CdcTestSupport.slotFor(db);
        try (CdcRelay relay = CdcTestSupport.relay(db, kafka).build()) {
            relay.start();
            await().atMost(Duration.ofSeconds(90)).until(() -> relay.health().ready());
            // the writer's emit-message mode, against the table-backed mode's contract: the event has no row
            db.exec("SELECT pg_logical_emit_message(true, 'outboxkit', jsonb_build_object('v', 1, 'id', gen_random_uuid(), "
                    + "'aggregate_type', 'order', 'aggregate_id', 'm-1', 'event_type', 'Placed', 'topic', NULL, "
                    + "'payload', '{}', 'headers', '{}', 'created_at', "
                    + "to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'))::text)");
            await().atMost(Duration.ofSeconds(60)).until(() -> db.count("SELECT count(*) FROM outbox_cdc_slot "
                    + "WHERE slot_name = ? AND wal_only_seen LIKE 'a logical decoding message at %'", slot) == 1);
        }
        CdcTestSupport.dropSlot(db);
        CdcRelay marked = CdcTestSupport.relay(db, kafka).build();
        assertThatThrownBy(marked::start).isInstanceOf(CdcStartupException.class)
                .hasMessageContaining("replication slot " + slot + " is missing on")
                .hasMessageContaining("it streamed an event that had no row in the table (")
                .hasMessageContaining("SET wal_only_seen_at = NULL WHERE slot_name = '" + slot + "'");
        marked.close();
        assertThat(db.count("SELECT count(*) FROM pg_replication_slots WHERE slot_name = ?", slot)).isZero();
    }

    @Test
    void aSlotDroppedWhileStreamingIsCreatedAgainAndTheStreamGoesOn(TestDatabase db, TestKafka kafka) throws Exception {
        String slot = CdcTestSupport.slotFor(db);
        String topic = TestKafka.uniqueTopic("cdc-dropped-live");
        kafka.createTopic(topic, 4);
        History history = new History();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (CdcRelay relay = CdcTestSupport.relay(db, kafka).route(dev.outboxkit.core.TopicRoute.of(topic))
                .meterRegistry(registry).build()) {
            relay.start();
            await().atMost(Duration.ofSeconds(90)).until(() -> relay.health().ready());
            try (BackgroundWriter writer = new BackgroundWriter(db, history, topic, 30, 3)) {
                long before = writer.committed();
                await().atMost(Duration.ofSeconds(60)).until(() -> writer.committed() >= before + 20);
                // an operator drops the slot under the running relay: its walsender is ended with it
                db.dropReplicationSlot(slot);
                await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(200)).until(() -> registry
                        .get("outbox.relay.cdc.slot_recreated").tag("reason", "missing").counter().count() == 1.0);
                long after = writer.committed();
                await().atMost(Duration.ofSeconds(60)).until(() -> writer.committed() >= after + 20);
                writer.close();
                long committed = writer.committed();
                await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofSeconds(1))
                        .until(() -> CdcTestSupport.distinctIds(kafka, topic) >= committed);
            }
            await().atMost(Duration.ofSeconds(30)).until(() -> relay.health().ready());
            assertThat(relay.role()).isEqualTo(CdcRelay.Role.ACTIVE);
        } finally {
            CdcTestSupport.dropSlot(db);
        }
        CdcTestSupport.consume(kafka, topic, history);
        History.Report report = history.check();
        log.info("slot dropped while streaming: {}", report.summary());
        assertThat(report.ok()).as(report.summary()).isTrue();
    }

    /** Starts a relay, has it stream and store an offset for one event, and stops it. */
    private static void streamOneEvent(TestDatabase db, TestKafka kafka, CdcRelay.Builder builder) throws Exception {
        String slot = CdcTestSupport.slotFor(db);
        try (CdcRelay relay = builder.build()) {
            relay.start();
            await().atMost(Duration.ofSeconds(90)).until(() -> relay.health().ready());
            OutboxRows.insertCommitted(db, java.util.List.of(OutboxRows.Row.of(null, "a", 1)));
            await().atMost(Duration.ofSeconds(60)).until(() -> db.count(
                    "SELECT count(*) FROM outbox_cdc_offset WHERE slot_name = ?", slot) == 1);
        }
    }

    private static long lsnNow(TestDatabase db) throws Exception {
        return db.count("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint");
    }

    private static long retained(TestDatabase db, String slot) throws Exception {
        return db.count("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)::bigint FROM pg_replication_slots "
                + "WHERE slot_name = ?", slot);
    }
}
