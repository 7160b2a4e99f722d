package dev.outboxkit.relay.cdc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.ReplicatedPostgres;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Failover slots (PostgreSQL 17+): the relay creates its slot as one, makes an existing slot one (unless
 * {@code failoverSlot(false)}), and reports whether a promoted standby would keep it. Before 17 it reports that no
 * logical slot survives a promotion. (The promotion itself: reliability's {@code FailoverTest}.)
 */
@ExtendWith(OutboxTestkitExtension.class)
class FailoverSlotTest {

    @Test
    void anExistingSlotIsMadeAFailoverSlotAndTheRelaySaysWhatAPromotionWouldKeep(TestDatabase db, TestKafka kafka)
            throws Exception {
        String slot = CdcTestSupport.slotFor(db);
        boolean failoverSlots = db.server().majorVersion() >= 17;
        // publication and slot made by hand before the relay's first start, as an administrator might (in this order:
        // pgoutput cannot decode a slot's WAL from before its publication existed); the relay adopts the slot
        db.exec("CREATE PUBLICATION outboxkit_pub FOR TABLE outbox_event, outbox_cdc_heartbeat WITH (publish = 'insert')");
        db.execute("SELECT pg_create_logical_replication_slot(?, 'pgoutput')", slot);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (CdcRelay relay = CdcTestSupport.relay(db, kafka).meterRegistry(registry).build()) {
            relay.start();
            await().atMost(Duration.ofSeconds(90)).until(() -> relay.health().ready());
            if (failoverSlots) {
                assertThat(db.strings("SELECT failover::text FROM pg_replication_slots WHERE slot_name = ?", slot))
                        .as("made a failover slot before Debezium streamed it").containsExactly("true");
                // this server has no standby: synchronized_standby_slots is empty, so a promotion would not keep it
                await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                    assertThat(registry.get("outbox.relay.cdc.slot_failover_ready").gauge().value()).isZero();
                    assertThat(relay.health().detail()).contains("failover: a failover slot, but synchronized_standby_slots "
                            + "is empty on the primary");
                });
            } else {
                await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                        assertThat(registry.get("outbox.relay.cdc.slot_failover_ready").gauge().value()).isEqualTo(-1.0));
                assertThat(relay.health().detail()).doesNotContain("failover:");
            }
        } finally {
            CdcTestSupport.dropSlot(db);
        }
    }

    /**
     * With a primary and a standby (PostgreSQL 17), named both in the URL: the relay asks the standby too, and says a
     * promotion would keep the slot only once the standby holds a synced copy.
     */
    @Test
    void withAStandbyInTheUrlTheRelaySaysWhenItsCopyOfTheSlotIsSynced(TestKafka kafka) throws Exception {
        try (ReplicatedPostgres pg = ReplicatedPostgres.builder().embeddedBinaries().build()) {
            TestDatabase db = pg.newDatabase();
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            try (CdcRelay relay = CdcTestSupport.relay(db, kafka).meterRegistry(registry).build()) {
                relay.start();
                await().atMost(Duration.ofSeconds(90)).until(() -> relay.health().ready());
                String standby = "127.0.0.1:" + pg.standby().port();
                await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
                    // a running-transactions record lets the slot's restart position move past the standby's start
                    try (java.sql.Connection c = pg.primary().connectAdmin(db.name()); java.sql.Statement st = c.createStatement()) {
                        st.execute("SELECT pg_log_standby_snapshot()");
                    }
                    assertThat(relay.health().detail()).contains("failover: a failover slot, kept on the standbys of ")
                            .contains("; synced on " + standby);
                    assertThat(registry.get("outbox.relay.cdc.slot_failover_ready").gauge().value()).isEqualTo(1.0);
                });
                assertThat(pg.unsyncedFailoverSlots()).isEmpty();
            } finally {
                CdcTestSupport.dropSlot(db);
            }
        }
    }

    @Test
    void failoverSlotFalseLeavesTheSlotAsItIs(TestDatabase db, TestKafka kafka) throws Exception {
        String slot = CdcTestSupport.slotFor(db);
        boolean failoverSlots = db.server().majorVersion() >= 17;
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (CdcRelay relay = CdcTestSupport.relay(db, kafka).failoverSlot(false).meterRegistry(registry).build()) {
            relay.start();
            await().atMost(Duration.ofSeconds(90)).until(() -> relay.health().ready());
            if (failoverSlots) {
                assertThat(db.strings("SELECT failover::text FROM pg_replication_slots WHERE slot_name = ?", slot))
                        .containsExactly("false");
                await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                        assertThat(relay.health().detail()).contains("failover: not a failover slot"));
                assertThat(registry.get("outbox.relay.cdc.slot_failover_ready").gauge().value()).isZero();
            } else {
                assertThat(db.count("SELECT count(*) FROM pg_replication_slots WHERE slot_name = ?", slot)).isEqualTo(1);
            }
        } finally {
            CdcTestSupport.dropSlot(db);
        }
    }
}
