package dev.outboxkit.writer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxkit.core.MissingGrantsException;
import dev.outboxkit.testkit.GrantsAtStart;
import dev.outboxkit.testkit.ManualClock;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The grants documented in outbox-writer/README.md are enough, and the extra ones are needed. */
@ExtendWith(OutboxTestkitExtension.class)
class LeastPrivilegeTest {

    private static DataSource as(TestDatabase db, String role) {
        return GrantsAtStart.as(db, role);
    }

    @Test
    void theDocumentedGrantsAreEnough(TestDatabase db) throws Exception {
        String keep = db.name() + "_keep";
        String delete = db.name() + "_delete";
        String message = db.name() + "_message";
        String keys = db.name() + "_keys";
        db.exec(
                "CREATE ROLE " + keep + " LOGIN PASSWORD 'pw'",
                "CREATE ROLE " + delete + " LOGIN PASSWORD 'pw'",
                "CREATE ROLE " + message + " LOGIN PASSWORD 'pw'",
                "CREATE ROLE " + keys + " LOGIN PASSWORD 'pw'",
                "GRANT USAGE ON SCHEMA public TO " + keep + ", " + delete + ", " + message + ", " + keys,
                // WriteMode.KEEP
                "GRANT INSERT ON outbox_event TO " + keep,
                // WriteMode.INSERT_AND_DELETE
                "GRANT INSERT, SELECT, DELETE ON outbox_event TO " + delete,
                // WriteMode.LOGICAL_MESSAGE: nothing on tables
                // IdempotencyKeys (+ the KEEP writer for its events)
                "GRANT SELECT, INSERT, UPDATE, DELETE ON idempotency_key TO " + keys,
                "GRANT SELECT, INSERT, UPDATE ON idempotency_key_tombstone TO " + keys,
                "GRANT INSERT ON outbox_event TO " + keys);
        try {
            OutboxWriter keepWriter = OutboxWriter.builder().mode(WriteMode.KEEP).build();
            OutboxWriter deleteWriter = OutboxWriter.builder().mode(WriteMode.INSERT_AND_DELETE).build();
            OutboxWriter messageWriter = OutboxWriter.builder().mode(WriteMode.LOGICAL_MESSAGE).build();
            keepWriter.inTransaction(as(db, keep), (c, tx) -> tx.add(TestSupport.event("a", 1)));
            // refused by the writer's check at first use, before the database would refuse the DELETE
            assertThatThrownBy(() -> deleteWriter.inTransaction(as(db, keep), (c, tx) -> tx.add(TestSupport.event("a", 2))))
                    .isInstanceOf(MissingGrantsException.class).hasMessageContaining("GRANT SELECT, DELETE ON \"public\".\"outbox_event\"");
            deleteWriter.inTransaction(as(db, delete), (c, tx) -> tx.add(TestSupport.event("a", 3)));
            messageWriter.inTransaction(as(db, message), (c, tx) -> tx.add(TestSupport.event("a", 4)));
            // keepWriter checked its grants once, as the first role: the database itself refuses this one
            assertThatThrownBy(() -> keepWriter.inTransaction(as(db, message), (c, tx) -> tx.add(TestSupport.event("a", 5))))
                    .isInstanceOf(SQLException.class).hasMessageContaining("permission denied");

            ManualClock clock = ManualClock.startingAt(Instant.now());
            IdempotencyKeys idempotency = IdempotencyKeys.builder().clock(clock).build();
            idempotency.execute(as(db, keys), "s", "k1", "{}", (c, tx) -> {
                tx.add(TestSupport.event("k1", 1));
                return StoredResponse.of(201, "ok");
            });
            assertThat(idempotency.execute(as(db, keys), "s", "k1", "{}", (c, tx) -> StoredResponse.of(500, "no")).replayed()).isTrue();
            assertThatThrownBy(() -> idempotency.execute(as(db, keys), "s", "k2", "{}", (c, tx) -> {
                throw new IllegalStateException("transient");
            })).isInstanceOf(IllegalStateException.class);
            clock.advance(Duration.ofHours(25));
            assertThat(idempotency.purgeExpired(as(db, keys))).isEqualTo(2);
            assertThatThrownBy(() -> idempotency.execute(as(db, keys), "s", "k1", "{}", (c, tx) -> StoredResponse.of(500, "no")))
                    .isInstanceOf(IdempotencyKeyExpiredException.class);
            assertThat(db.count("SELECT count(*) FROM outbox_event")).isEqualTo(2);
        } finally {
            for (String role : new String[] {keep, delete, message, keys}) {
                db.exec("DROP OWNED BY " + role, "DROP ROLE " + role);
            }
        }
    }
}
