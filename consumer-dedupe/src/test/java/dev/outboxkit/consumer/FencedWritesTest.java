package dev.outboxkit.consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.Sql;
import dev.outboxkit.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A resource acted on under a lease: the instance that held lease 7 is paused, lease 8 goes to
 * another instance, which writes; when the paused one wakes up, its write is rejected.
 */
@ExtendWith(OutboxTestkitExtension.class)
class FencedWritesTest {

    @Test
    void aStaleHolderCannotOverwriteItsSuccessor(TestDatabase db) throws Exception {
        try (Connection c = db.connect()) {
            Sql.exec(c, "CREATE TABLE resource (id text PRIMARY KEY, owner text, state text, fence bigint)");
            Sql.exec(c, "INSERT INTO resource (id) VALUES ('printer-1')");
            FencedWrites writes = FencedWrites.on("public", "resource");

            assertThat(writes.update(c, "printer-1", 7, values("owner", "a", "state", "printing"))).isTrue();
            assertThat(writes.update(c, "printer-1", 8, values("owner", "b", "state", "idle"))).isTrue();
            assertThat(writes.update(c, "printer-1", 7, values("owner", "a", "state", "done")))
                    .as("fence 7 < 8: a newer authority owns it").isFalse();
            assertThat(writes.update(c, "printer-1", 8, values("owner", "b", "state", "again")))
                    .as("the same token twice: refused by default (a replayed write is a no-op)").isFalse();
            assertThat(writes.acceptingEqualFence().update(c, "printer-1", 8, values("state", "again")))
                    .as("one lease, several writes").isTrue();
            assertThat(FencedWrites.update(c, "public", "resource", "printer-404", 99, values("state", "x")))
                    .as("no such row").isFalse();

            try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT owner, state, fence FROM resource")) {
                rs.next();
                assertThat(rs.getString(1)).isEqualTo("b");
                assertThat(rs.getString(2)).isEqualTo("again");
                assertThat(rs.getLong(3)).isEqualTo(8);
            }
        }
    }

    @Test
    void customColumnsAndTheStatementItBuilds(TestDatabase db) throws Exception {
        FencedWrites writes = FencedWrites.on("public", "lease_holder").idColumn("lease_key").fenceColumn("token");
        assertThat(writes.sql(List.of("holder", "renewed_at"))).isEqualTo("UPDATE \"public\".\"lease_holder\" SET "
                + "\"holder\" = ?, \"renewed_at\" = ?, \"token\" = ? WHERE \"lease_key\" = ? AND (\"token\" IS NULL OR \"token\" < ?)");
        try (Connection c = db.connect()) {
            Sql.exec(c, "CREATE TABLE lease_holder (lease_key text PRIMARY KEY, holder text, token bigint)");
            Sql.exec(c, "INSERT INTO lease_holder VALUES ('poll/1', 'x', NULL)");
            assertThat(writes.update(c, "poll/1", 1, values("holder", "y"))).isTrue();
            assertThat(writes.update(c, "poll/1", 1, Map.of())).isFalse();
            assertThat(writes.update(c, "poll/1", 2, Map.of())).as("fence only").isTrue();
        }
    }

    @Test
    void identifiersAreValidatedAndTheKeyColumnsCannotBeSet() {
        assertThatThrownBy(() -> FencedWrites.on("public", "resource; drop table x"))
                .hasMessageContaining("table 'resource; drop table x' is not a legal identifier");
        assertThatThrownBy(() -> FencedWrites.on("public", "resource").sql(List.of("state\" = 'x', \"owner")))
                .hasMessageContaining("is not a legal identifier");
        assertThatThrownBy(() -> FencedWrites.on("public", "resource").sql(List.of("fence")))
                .hasMessageContaining("'fence' is the fence column");
        assertThatThrownBy(() -> FencedWrites.on("public", "resource").sql(List.of("id")))
                .hasMessageContaining("'id' is the id column");
        assertThatThrownBy(() -> FencedWrites.on("public", "resource").fenceColumn("id"))
                .hasMessageContaining("must differ");
    }

    private static Map<String, Object> values(Object... pairs) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            m.put((String) pairs[i], pairs[i + 1]);
        }
        return m;
    }

}
