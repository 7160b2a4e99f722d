package dev.outboxkit.relay.poller;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.outboxkit.runtime.PoolerCheck;
import dev.outboxkit.runtime.PoolerCheck.Finding;
import dev.outboxkit.runtime.PoolerCheck.Pooling;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.PgBouncer;
import dev.outboxkit.testkit.PgBouncer.PoolMode;
import dev.outboxkit.testkit.Sql;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.fault.TcpFaultProxy;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@link PoolerCheck} (outbox-core, shared by both relays) against the real thing: PostgreSQL directly and through a
 * TCP proxy is no pooler; PgBouncer in session mode is session pooling, in transaction and statement mode transaction
 * pooling, whichever way it reuses idle server sessions and whatever its pool size; and neither answer changes while
 * other clients of the same pool run statements all the time.
 */
@ExtendWith(OutboxTestkitExtension.class)
class PoolerCheckTest {

    private static final String ROLE_PASSWORD = "check-secret";

    @Test
    void directAndThroughATcpProxyIsNoPooler(TestDatabase db) throws Exception {
        assertThat(PoolerCheck.probe(db.dataSource()).pooling()).isEqualTo(Pooling.NONE);
        try (TcpFaultProxy proxy = TcpFaultProxy.start("pg", db.server().host(), db.server().port());
             HikariDataSource pool = pool(db.jdbcUrlVia(proxy.host(), proxy.port()), db.user(), db.password())) {
            Finding found = PoolerCheck.probe(pool);
            assertThat(found.pooling()).as(found.evidence()).isEqualTo(Pooling.NONE);
            assertThat(proxy.acceptedConnections()).as("the probe went through the proxy").isPositive();
        }
    }

    @Test
    void eachPgBouncerPoolModeIsToldApart(TestDatabase db) throws Exception {
        String role = role(db);
        check(db, PgBouncer.builder(db.server()).poolMode(PoolMode.SESSION), role, Pooling.SESSION);
        check(db, PgBouncer.builder(db.server()).poolMode(PoolMode.TRANSACTION), role, Pooling.TRANSACTION);
        check(db, PgBouncer.builder(db.server()).poolMode(PoolMode.STATEMENT), role, Pooling.TRANSACTION);
        // idle server sessions reused oldest first instead of last released first
        check(db, PgBouncer.builder(db.server()).poolMode(PoolMode.TRANSACTION).setting("server_round_robin", "1"),
                role, Pooling.TRANSACTION);
        check(db, PgBouncer.builder(db.server()).poolMode(PoolMode.TRANSACTION).poolSize(1), role, Pooling.TRANSACTION);
        check(db, PgBouncer.builder(db.server()).poolMode(PoolMode.SESSION).setting("server_round_robin", "1"),
                role, Pooling.SESSION);
    }

    /**
     * Other clients of the same PgBouncer pool run statements all the time (they take server sessions between the
     * probe's statements): twenty probes in each mode still all give the mode's answer.
     */
    @Test
    void otherClientsOfThePoolDoNotChangeTheAnswer(TestDatabase db) throws Exception {
        String role = role(db);
        for (PoolMode mode : List.of(PoolMode.SESSION, PoolMode.TRANSACTION)) {
            try (PgBouncer bouncer = PgBouncer.builder(db.server()).poolMode(mode).poolSize(6).build();
                 HikariDataSource probes = pool(bouncer.jdbcUrl(db) + "?prepareThreshold=0", role, ROLE_PASSWORD)) {
                AtomicBoolean stop = new AtomicBoolean();
                AtomicLong statements = new AtomicLong();
                List<Thread> others = new ArrayList<>();
                for (int i = 0; i < 3; i++) {
                    Thread t = new Thread(() -> {
                        try (Connection c = java.sql.DriverManager.getConnection(bouncer.jdbcUrl(db) + "?prepareThreshold=0",
                                role, ROLE_PASSWORD)) {
                            while (!stop.get()) {
                                Sql.count(c, "SELECT pg_backend_pid()");
                                statements.incrementAndGet();
                            }
                        } catch (Exception e) {
                            throw new IllegalStateException(e);
                        }
                    }, "other-client-" + i);
                    t.start();
                    others.add(t);
                }
                try {
                    Pooling expected = mode == PoolMode.SESSION ? Pooling.SESSION : Pooling.TRANSACTION;
                    for (int probe = 0; probe < 20; probe++) {
                        Finding found = PoolerCheck.probe(probes);
                        assertThat(found.pooling()).as(mode + ", probe " + probe + ": " + found.evidence()).isEqualTo(expected);
                    }
                } finally {
                    stop.set(true);
                    for (Thread t : others) {
                        t.join(10_000);
                    }
                }
                assertThat(statements.get()).as("the other clients ran statements meanwhile").isPositive();
            }
        }
    }

    private static void check(TestDatabase db, PgBouncer.Builder builder, String role, Pooling expected) throws Exception {
        try (PgBouncer bouncer = builder.build();
             HikariDataSource pool = pool(bouncer.jdbcUrl(db) + "?prepareThreshold=0", role, ROLE_PASSWORD)) {
            Finding found = PoolerCheck.probe(pool);
            assertThat(found.pooling()).as(bouncer.describe() + ": " + found.evidence()).isEqualTo(expected);
            assertThat(found.evidence()).contains("the login was answered by a pooler");
        }
    }

    private static String role(TestDatabase db) {
        String role = "check_" + db.name();
        db.server().createPasswordRole(role, ROLE_PASSWORD, "");
        return role;
    }

    static HikariDataSource pool(String url, String user, String password) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setUsername(user);
        config.setPassword(password);
        config.setMaximumPoolSize(4);
        config.setMinimumIdle(0);
        config.setConnectionTimeout(10_000);
        return new HikariDataSource(config);
    }
}
