package dev.outboxkit.ops;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxkit.ops.admin.OutboxAdmin;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** outbox-ops' old names, kept until 0.2.0, set and return exactly what their new names do. */
@ExtendWith(OutboxTestkitExtension.class)
@SuppressWarnings("removal")
class DeprecatedNamesTest {

    /** A builder of the kind outbox-ops' own builders are, to read what the shared settings resolved to. */
    private static final class Probe extends OpsBuilder<Probe> {
        Resolved viaNewName() {
            return resolveSettings();
        }

        Resolved viaOldName() {
            return resolveProducer();
        }
    }

    @Test
    void producerSetsTheOutboxDatabase(TestDatabase db) {
        DataSource ds = db.dataSource();
        Probe probe = new Probe().producer(ds, "orders");
        assertThat(probe.viaNewName().dataSource()).isSameAs(ds);
        assertThat(probe.viaNewName().schema()).isEqualTo("orders");
        assertThat(probe.viaOldName().dataSource()).isSameAs(ds);
        assertThat(probe.viaOldName().schema()).isEqualTo("orders");
        assertThatThrownBy(() -> new Probe().producer(null, "orders").viaNewName())
                .isInstanceOf(IllegalArgumentException.class).hasMessage("outboxDatabase dataSource is required");
    }

    @Test
    void theAdminBuildersProducerAndWalRelaySlotsAnswerAsTheirNewNames(TestDatabase db) throws Exception {
        db.exec("INSERT INTO outbox_cdc_slot (slot_name, base_lsn, created_by, server_address, recreated_at, "
                + "recreated_reason) VALUES ('orders_slot', '0/1', 'relay-1', 'db2:5432', now(), 'missing')");
        OutboxAdmin old = OutboxAdmin.builder().producer(db.dataSource(), "public").build();
        OutboxAdmin current = OutboxAdmin.builder().outboxDatabase(db.dataSource(), "public").build();
        assertThat(old.status().schema()).isEqualTo(current.status().schema()).isEqualTo("public");
        assertThat(old.walRelaySlots()).singleElement().satisfies(s -> {
            var now = current.cdcRelaySlots().get(0);
            assertThat(s.name()).isEqualTo(now.name()).isEqualTo("orders_slot");
            assertThat(s.present()).isEqualTo(now.present()).isFalse();
            assertThat(s.lastServer()).isEqualTo(now.lastServer());
            assertThat(s.recreatedAt()).isEqualTo(now.recreatedAt()).isNotNull();
            assertThat(s.recreatedReason()).isEqualTo(now.recreatedReason()).isEqualTo("missing");
        });
    }
}
