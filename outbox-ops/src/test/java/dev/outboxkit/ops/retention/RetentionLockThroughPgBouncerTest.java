package dev.outboxkit.ops.retention;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.PgBouncer;
import dev.outboxkit.testkit.PgBouncer.PoolMode;
import dev.outboxkit.testkit.Sql;
import dev.outboxkit.testkit.TestDatabase;
import java.sql.Connection;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The retention lock through PgBouncer in transaction pooling mode: one holder at a time, released by close(), and
 * nothing left behind on the server sessions the pooler shares (a session-level lock taken there would stay on a
 * server session another client then gets, and that client would hold it too).
 */
@ExtendWith(OutboxTestkitExtension.class)
class RetentionLockThroughPgBouncerTest {

    @Test
    void oneHolderAtATimeAndNothingLeftOnTheSharedSessions(TestDatabase db) throws Exception {
        String role = "retention_bouncer_" + db.name();
        db.server().createPasswordRole(role, "pw", "");
        try (PgBouncer bouncer = PgBouncer.builder(db.server()).poolMode(PoolMode.TRANSACTION).poolSize(2).build();
             HikariDataSource pool = pool(bouncer.jdbcUrl(db) + "?prepareThreshold=0", role);
             Connection first = pool.getConnection();
             Connection second = pool.getConnection()) {
            for (int round = 0; round < 3; round++) {
                RetentionLock held = RetentionLock.tryAcquire(first, "public");
                assertThat(held).as("round %d: the first takes it", round).isNotNull();
                // the second client's statements run on the other server session, or wait for one: never on the holder's
                assertThat(RetentionLock.tryAcquire(second, "public")).as("round %d: one holder at a time", round).isNull();
                assertThat(Sql.count(second, "SELECT 1")).isOne();
                assertThat(RetentionLock.tryAcquire(second, "public")).as("round %d: still one holder", round).isNull();
                held.close();
                assertThat(first.getAutoCommit()).as("autocommit restored").isTrue();
                try (RetentionLock next = RetentionLock.tryAcquire(second, "public")) {
                    assertThat(next).as("round %d: released by close()", round).isNotNull();
                }
            }
            assertThat(db.count("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'")).as("no lock left").isZero();
        } finally {
            db.exec("DROP ROLE \"" + role + "\"");
        }
    }

    private static HikariDataSource pool(String url, String role) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setUsername(role);
        config.setPassword("pw");
        config.setMaximumPoolSize(2);
        config.setMinimumIdle(0);
        config.setConnectionTimeout(30_000);
        return new HikariDataSource(config);
    }
}
