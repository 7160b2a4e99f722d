package dev.outboxkit.testkit.fault;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.fault.TcpFaultProxy.Direction;
import java.net.SocketTimeoutException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The PostgreSQL JDBC driver through a {@link TcpFaultProxy} to the test server. */
@ExtendWith(OutboxTestkitExtension.class)
class PostgresThroughProxyTest {

    private static TcpFaultProxy proxy(TestDatabase db) {
        return TcpFaultProxy.start("pg", db.server().host(), db.server().port());
    }

    private static Connection connect(TestDatabase db, TcpFaultProxy proxy, int socketTimeoutSeconds) throws SQLException {
        Properties p = new Properties();
        p.setProperty("user", db.user());
        p.setProperty("password", db.password());
        p.setProperty("socketTimeout", Integer.toString(socketTimeoutSeconds));
        p.setProperty("connectTimeout", "10");
        p.setProperty("tcpKeepAlive", "false");
        return DriverManager.getConnection(db.jdbcUrlVia(proxy.host(), proxy.port()), p);
    }

    private static long selectOneMillis(Connection c) throws SQLException {
        long best = Long.MAX_VALUE;
        try (Statement s = c.createStatement()) {
            for (int i = 0; i < 3; i++) {
                long start = System.nanoTime();
                try (ResultSet rs = s.executeQuery("SELECT 1")) {
                    rs.next();
                    assertThat(rs.getInt(1)).isEqualTo(1);
                }
                best = Math.min(best, (System.nanoTime() - start) / 1_000_000);
            }
        }
        return best;
    }

    private static void assertANewConnectionWorks(TestDatabase db, TcpFaultProxy proxy) throws SQLException {
        try (Connection c = connect(db, proxy, 30)) {
            assertThat(selectOneMillis(c)).isNotNegative();
        }
    }

    @Test
    void jdbcWorksThroughTheProxyAndLatencyIsAdded(TestDatabase db) throws Exception {
        try (TcpFaultProxy proxy = proxy(db); Connection c = connect(db, proxy, 60)) {
            try (Statement s = c.createStatement()) {
                s.execute("CREATE TABLE t (id int PRIMARY KEY)");
                s.execute("INSERT INTO t VALUES (1), (2)");
                try (ResultSet rs = s.executeQuery("SELECT count(*) FROM t")) {
                    rs.next();
                    assertThat(rs.getInt(1)).isEqualTo(2);
                }
            }
            assertThat(proxy.acceptedConnections()).isEqualTo(1);
            assertThat(proxy.bytesForwarded(Direction.TO_SERVER)).isPositive();
            assertThat(proxy.bytesForwarded(Direction.TO_CLIENT)).isPositive();

            long healthy = selectOneMillis(c);
            proxy.latency(Duration.ofMillis(100));
            long slow = selectOneMillis(c);
            // one query is one round trip: 100 ms each way
            assertThat(slow).isGreaterThanOrEqualTo(200);
            proxy.heal();
            assertThat(selectOneMillis(c)).isLessThan(healthy + 200);
        }
    }

    @Test
    void blackholeMakesAQueryTimeOutAndANewConnectionWorksAfterHeal(TestDatabase db) throws Exception {
        try (TcpFaultProxy proxy = proxy(db)) {
            try (Connection c = connect(db, proxy, 2)) {
                assertThat(selectOneMillis(c)).isNotNegative();
                proxy.blackhole();
                long start = System.nanoTime();
                assertThatThrownBy(() -> selectOneMillis(c))
                        .isInstanceOf(SQLException.class)
                        .hasRootCauseInstanceOf(SocketTimeoutException.class);
                assertThat((System.nanoTime() - start) / 1_000_000).isGreaterThanOrEqualTo(1_900);
                assertThat(c.isClosed()).as("the driver gives up a connection after a socket timeout").isTrue();
            }
            proxy.heal();
            assertANewConnectionWorks(db, proxy);
        }
    }

    @Test
    void aQueryHeldByABlackholeCompletesWhenHealedBeforeTheTimeout(TestDatabase db) throws Exception {
        try (TcpFaultProxy proxy = proxy(db); Connection c = connect(db, proxy, 60); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE t (id int PRIMARY KEY)");
            proxy.blackhole();
            CompletableFuture<Integer> insert = CompletableFuture.supplyAsync(() -> {
                try {
                    return s.executeUpdate("INSERT INTO t VALUES (1)");
                } catch (SQLException e) {
                    throw new IllegalStateException(e);
                }
            });
            Thread.sleep(700); // the fault under test: time passes while nothing gets through
            assertThat(insert).isNotDone();
            proxy.heal();
            assertThat(insert.get(30, TimeUnit.SECONDS)).isEqualTo(1);
        }
    }

    @Test
    void resetMakesTheDriverSeeAConnectionErrorAndRefusalLastsUntilHeal(TestDatabase db) throws Exception {
        try (TcpFaultProxy proxy = proxy(db)) {
            try (Connection c = connect(db, proxy, 30)) {
                assertThat(selectOneMillis(c)).isNotNegative();
                proxy.resetAndRefuse();
                assertThatThrownBy(() -> selectOneMillis(c))
                        .isInstanceOfSatisfying(SQLException.class,
                                e -> assertThat(e.getSQLState()).as(e.toString()).isEqualTo("08006"));
            }
            assertThatThrownBy(() -> connect(db, proxy, 30))
                    .isInstanceOfSatisfying(SQLException.class,
                            e -> assertThat(e.getSQLState()).as(e.toString()).startsWith("08"));
            proxy.heal();
            assertANewConnectionWorks(db, proxy);
        }
    }

    @Test
    void bandwidthLimitSlowsALargeResult(TestDatabase db) throws Exception {
        try (TcpFaultProxy proxy = proxy(db); Connection c = connect(db, proxy, 60); Statement s = c.createStatement()) {
            proxy.bandwidth(Direction.TO_CLIENT, 100_000);
            long start = System.nanoTime();
            try (ResultSet rs = s.executeQuery("SELECT repeat('x', 300000)")) {
                rs.next();
                assertThat(rs.getString(1)).hasSize(300_000);
            }
            // 300 kB at 100 kB/s
            assertThat((System.nanoTime() - start) / 1_000_000).isGreaterThanOrEqualTo(2_500);
        }
    }
}
