package dev.outboxkit.relay.cdc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.outboxkit.core.Secret;
import dev.outboxkit.relay.ConnectionPoolerException;
import dev.outboxkit.testkit.DocumentedGrants;
import dev.outboxkit.testkit.Grant;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.PgBouncer;
import dev.outboxkit.testkit.PgBouncer.PoolMode;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The CDC relay behind a real PgBouncer is refused at start in every pool mode, before it took a lease or made a slot:
 * its replication connection cannot pass through the pooler (PgBouncer 1.18 answers "unsupported startup parameter:
 * replication"), so the message says to connect it to PostgreSQL directly.
 */
@ExtendWith(OutboxTestkitExtension.class)
class ThroughPgBouncerTest {

    private static final String PASSWORD = "wal-secret";

    @ParameterizedTest(name = "pool_mode={0}")
    @EnumSource(PoolMode.class)
    void everyPoolModeIsRefusedAtStartNamingTheFix(PoolMode mode, TestDatabase db, TestKafka kafka) throws Exception {
        String role = "cdc_bouncer_" + mode.name().toLowerCase() + "_" + db.name();
        Grant.roleWith(db, "public", role, PASSWORD, DocumentedGrants.cdcRelay(true), null);
        try (PgBouncer bouncer = PgBouncer.builder(db.server()).poolMode(mode).build();
             CdcRelay relay = CdcTestSupport.relay(db, kafka).jdbcUrl(bouncer.jdbcUrl(db) + "?prepareThreshold=0")
                     .user(role).password(Secret.of(PASSWORD)).build()) {
            ConnectionPoolerException e = catchThrowableOfType(ConnectionPoolerException.class, relay::start);
            assertThat(e).as(mode + ": start() is refused").isNotNull();
            String modeWords = mode == PoolMode.SESSION ? "session pooling mode" : "transaction (or statement) pooling mode";
            assertThat(e.getMessage())
                    .startsWith("the CDC relay on slot " + CdcTestSupport.slotFor(db) + " cannot start: its connections to "
                            + "127.0.0.1:" + bouncer.port() + "/" + db.name() + " (jdbc:postgresql://127.0.0.1:"
                            + bouncer.port() + "/" + db.name() + "?prepareThreshold=0) go through a connection pooler in "
                            + modeWords)
                    .contains("the login was answered by a pooler", "replication connection",
                            "unsupported startup parameter: replication", "connect it to PostgreSQL directly");
            assertThat(relay.health().ready()).isFalse();
            assertThat(relay.health().detail()).contains(e.getMessage());
        } finally {
            Grant.dropRole(db, role);
        }
        assertThat(db.count("SELECT count(*) FROM outbox_relay_lease")).as("no lease taken").isZero();
        assertThat(db.count("SELECT count(*) FROM pg_replication_slots WHERE slot_name = ?", CdcTestSupport.slotFor(db)))
                .as("no slot made").isZero();
    }
}
