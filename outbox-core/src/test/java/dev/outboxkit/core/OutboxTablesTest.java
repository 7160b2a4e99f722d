package dev.outboxkit.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class OutboxTablesTest {

    @Test
    void namesAreQualifiedAndQuoted() {
        OutboxTables tables = OutboxTables.in("app");
        assertThat(tables.schema()).isEqualTo("app");
        assertThat(tables.outboxEvent()).isEqualTo("\"app\".\"outbox_event\"");
        assertThat(tables.deadLetter()).isEqualTo("\"app\".\"outbox_dead_letter\"");
        assertThat(tables.relayLease()).isEqualTo("\"app\".\"outbox_relay_lease\"");
        assertThat(tables.fenceSequence()).isEqualTo("\"app\".\"outbox_fence_seq\"");
        assertThat(tables.processedEvent()).isEqualTo("\"app\".\"processed_event\"");
        assertThat(OutboxTables.inDefaultSchema().schema()).isEqualTo(OutboxTables.DEFAULT_SCHEMA).isEqualTo("public");
    }

    @Test
    void aSchemaThatIsNotAnIdentifierIsRefusedNamingIt() {
        assertThatThrownBy(() -> OutboxTables.in("public; drop table x"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("schema").hasMessageContaining("not a legal identifier");
        assertThatThrownBy(() -> OutboxTables.in("select"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("reserved");
        assertThatThrownBy(() -> OutboxTables.in("app").qualified("x\"; drop"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("table");
    }
}
