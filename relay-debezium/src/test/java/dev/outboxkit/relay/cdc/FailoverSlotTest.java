package dev.outboxkit.relay.cdc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.outboxkit.testkit.OutboxTestkitExtension;
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
