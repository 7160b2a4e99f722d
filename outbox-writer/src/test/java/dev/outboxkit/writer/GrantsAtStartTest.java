package dev.outboxkit.writer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.outboxkit.core.MissingGrantsException;
import dev.outboxkit.sql.Migrations;
import dev.outboxkit.testkit.DocumentedGrants;
import dev.outboxkit.testkit.Grant;
import dev.outboxkit.testkit.GrantsAtStart;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Grants checked at first use (issue 26, item 5): the writer in each mode, {@link IdempotencyKeys}, and the schema
 * migration a service may run itself. Each documented grant revoked in turn names exactly its statement; the check
 * is made once per writer.
 */
@ExtendWith(OutboxTestkitExtension.class)
class GrantsAtStartTest {

    @Test
    void eachWriterModeNamesTheGrantItLacksBeforeWritingAnything(TestDatabase db) throws Exception {
        db.exec("REVOKE USAGE ON SCHEMA public FROM PUBLIC"); // PUBLIC holds it by default: then it is never missing
        for (WriteMode mode : List.of(WriteMode.KEEP, WriteMode.INSERT_AND_DELETE)) {
            List<MissingGrantsException> refused = GrantsAtStart.eachMissingGrantIsNamed(db, "w_" + db.name() + "_" + mode.ordinal(),
                    DocumentedGrants.writer(mode == WriteMode.INSERT_AND_DELETE), "outbox writer (schema public, mode " + mode + ")",
                    role -> OutboxWriter.builder().mode(mode).build()
                            .inTransaction(role, (c, tx) -> tx.add(TestSupport.event("g", 1))));
            assertThat(refused).hasSize(mode == WriteMode.KEEP ? 2 : 4);
        }
        assertThat(db.count("SELECT count(*) FROM outbox_event")).as("the KEEP writer with all grants").isEqualTo(1);
        // LOGICAL_MESSAGE touches no table: nothing to check, no schema USAGE needed.
        String role = "w_" + db.name() + "_message";
        Grant.roleWith(db, "public", role, "pw", List.of(), null);
        try {
            OutboxWriter.builder().mode(WriteMode.LOGICAL_MESSAGE).build()
                    .inTransaction(GrantsAtStart.as(db, role), (c, tx) -> tx.add(TestSupport.event("g", 2)));
        } finally {
            Grant.dropRole(db, role);
        }
    }

    @Test
    void theCheckRunsOncePerWriterOnEachEntryPoint(TestDatabase db) throws Exception {
        db.exec("REVOKE USAGE ON SCHEMA public FROM PUBLIC");
        String role = "w_" + db.name() + "_once";
        Grant.roleWith(db, "public", role, "pw", DocumentedGrants.writer(false), Grant.onTable("outbox_event", "INSERT").get(0));
        try {
            DataSource ds = GrantsAtStart.as(db, role);
            OutboxWriter writer = OutboxWriter.builder().build();
            try (Connection c = ds.getConnection()) {
                c.setAutoCommit(false);
                MissingGrantsException e = catchThrowableOfType(MissingGrantsException.class, () -> writer.write(c, TestSupport.event("o", 1)));
                assertThat(e.grants()).containsExactly("GRANT INSERT ON \"public\".\"outbox_event\" TO \"" + role + "\"");
                assertThatThrownBy(() -> writer.begin(c)).as("a failed check is not remembered").isInstanceOf(MissingGrantsException.class);
                c.rollback();
                db.exec("GRANT INSERT ON outbox_event TO " + role);
                writer.write(c, TestSupport.event("o", 2)); // checked again, now passes
                c.commit();
                db.exec("REVOKE INSERT ON outbox_event FROM " + role);
                // Checked once: the writer does not ask again, so the database itself refuses now.
                assertThatThrownBy(() -> writer.write(c, TestSupport.event("o", 3)))
                        .isInstanceOf(SQLException.class).hasMessageContaining("permission denied");
                c.rollback();
            }
        } finally {
            Grant.dropRole(db, role);
        }
    }

    @Test
    void idempotencyKeysNameTheGrantTheyLackBeforeClaimingAKey(TestDatabase db) throws Exception {
        db.exec("REVOKE USAGE ON SCHEMA public FROM PUBLIC");
        List<Grant> grants = new ArrayList<>(DocumentedGrants.idempotencyKeys());
        grants.addAll(DocumentedGrants.writer(false).subList(1, 2)); // INSERT on outbox_event for its KEEP writer
        List<MissingGrantsException> refused = GrantsAtStart.eachMissingGrantIsNamed(db, "k_" + db.name(), grants, "",
                role -> IdempotencyKeys.builder().build().execute(role, "s", "k", "{}", (c, tx) -> {
                    tx.add(TestSupport.event("k", 1));
                    return StoredResponse.of(201, "ok");
                }));
        assertThat(refused).hasSize(grants.size());
        assertThat(refused.get(1).getMessage()).startsWith("idempotency keys (schema public) cannot start");
        assertThat(refused.get(refused.size() - 1).getMessage()).startsWith("outbox writer (schema public, mode KEEP) cannot start");
        assertThat(db.count("SELECT count(*) FROM idempotency_key")).as("only the run with every grant claimed a key").isEqualTo(1);
    }

    @Test
    void aServiceThatMigratesNeedsCreateAndTheOwnersRole(TestDatabase db) throws Exception {
        String first = "m_" + db.name() + "_first";
        String second = "m_" + db.name() + "_second";
        db.exec("CREATE ROLE " + first + " LOGIN PASSWORD 'pw'", "CREATE ROLE " + second + " LOGIN PASSWORD 'pw'");
        try {
            MissingGrantsException e = catchThrowableOfType(MissingGrantsException.class,
                    () -> Migrations.migrate(GrantsAtStart.as(db, first), "shop"));
            assertThat(e.grants()).containsExactly("GRANT CREATE ON DATABASE \"" + db.name() + "\" TO \"" + first + "\"");
            assertThat(e.getMessage()).startsWith("outboxkit migration of schema shop cannot start");
            assertThat(db.count("SELECT count(*) FROM pg_namespace WHERE nspname = 'shop'")).as("nothing created").isZero();

            db.exec("GRANT CREATE ON DATABASE \"" + db.name() + "\" TO " + first);
            assertThat(Migrations.migrate(GrantsAtStart.as(db, first), "shop").applied()).isPositive();

            e = catchThrowableOfType(MissingGrantsException.class, () -> Migrations.migrate(GrantsAtStart.as(db, second), "shop"));
            String to = " TO \"" + second + "\"";
            assertThat(e.grants()).containsExactly("GRANT USAGE ON SCHEMA \"shop\"" + to, "GRANT CREATE ON SCHEMA \"shop\"" + to,
                    "GRANT \"" + first + "\"" + to);
            db.exec("GRANT " + first + " TO " + second);
            assertThat(Migrations.migrate(GrantsAtStart.as(db, second), "shop").applied()).isZero();
        } finally {
            db.exec("DROP SCHEMA IF EXISTS shop CASCADE");
            Grant.dropRole(db, second);
            Grant.dropRole(db, first);
        }
    }
}
