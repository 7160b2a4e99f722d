package dev.outboxkit.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetSocketAddress;
import java.net.Socket;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.HashSet;
import java.util.Properties;
import java.util.Set;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The PgBouncer fixture: password roles log in through it in every pool mode (SCRAM, looked up with auth_query, so
 * roles made after its start too), a wrong password is refused, each mode pools as PgBouncer documents, it runs in
 * front of the machine's PostgreSQL as well, and {@code close()} stops it.
 */
class PgBouncerTest {

    @ParameterizedTest(name = "pool_mode={0}")
    @EnumSource(PgBouncer.PoolMode.class)
    void aPasswordRoleLogsInAndAWrongPasswordIsRefused(PgBouncer.PoolMode mode) throws Exception {
        TestPostgres pg = OutboxTestkit.postgres();
        TestDatabase db = pg.newDatabase();
        try (PgBouncer bouncer = PgBouncer.builder(pg).poolMode(mode).build()) {
            String role = "bouncer_" + mode.name().toLowerCase() + "_" + db.name();
            pg.createPasswordRole(role, "role-secret", ""); // after the start: found by auth_query
            String url = bouncer.jdbcUrl(db) + "?prepareThreshold=0";
            try (Connection c = connect(url, role, "role-secret")) {
                assertThat(Sql.strings(c, "SELECT current_user || ' ' || current_database()"))
                        .containsExactly(role + " " + db.name());
                assertThat(Sql.count(c, "SELECT count(*) FROM pg_class WHERE relname = 'outbox_event'")).isOne();
            }
            assertThatThrownBy(() -> connect(url, role, "wrong-secret")).isInstanceOf(SQLException.class)
                    .hasMessageContaining("authentication failed");
            assertThat(bouncer.describe()).contains("pool_mode=" + mode.name().toLowerCase(), "127.0.0.1:" + bouncer.port());
        } finally {
            pg.drop(db);
        }
    }

    @Test
    void sessionModeKeepsAServerSessionPerClientTransactionModeSharesThem() throws Exception {
        TestPostgres pg = OutboxTestkit.postgres();
        TestDatabase db = pg.newDatabase();
        String role = "bouncer_modes_" + db.name();
        pg.createPasswordRole(role, "role-secret", "");
        try {
            try (PgBouncer session = PgBouncer.builder(pg).poolMode(PgBouncer.PoolMode.SESSION).poolSize(2).build();
                 Connection a = connect(session.jdbcUrl(db), role, "role-secret");
                 Connection b = connect(session.jdbcUrl(db), role, "role-secret")) {
                Set<String> pidsOfA = new HashSet<>();
                Set<String> pidsOfB = new HashSet<>();
                for (int i = 0; i < 5; i++) {
                    pidsOfA.addAll(Sql.strings(a, "SELECT pg_backend_pid()::text"));
                    pidsOfB.addAll(Sql.strings(b, "SELECT pg_backend_pid()::text"));
                }
                assertThat(pidsOfA).hasSize(1).doesNotContainAnyElementsOf(pidsOfB);
                assertThat(pidsOfB).hasSize(1);
            }
            // one server connection for the pool: two clients take turns on it between transactions
            try (PgBouncer transaction = PgBouncer.builder(pg).poolMode(PgBouncer.PoolMode.TRANSACTION).poolSize(1).build();
                 Connection a = connect(transaction.jdbcUrl(db) + "?prepareThreshold=0", role, "role-secret");
                 Connection b = connect(transaction.jdbcUrl(db) + "?prepareThreshold=0", role, "role-secret")) {
                assertThat(Sql.strings(a, "SELECT pg_backend_pid()::text"))
                        .isEqualTo(Sql.strings(b, "SELECT pg_backend_pid()::text"));
            }
            try (PgBouncer statement = PgBouncer.builder(pg).poolMode(PgBouncer.PoolMode.STATEMENT).build();
                 Connection c = connect(statement.jdbcUrl(db) + "?prepareThreshold=0", role, "role-secret")) {
                c.setAutoCommit(false);
                assertThatThrownBy(() -> Sql.exec(c, "SELECT 1")).isInstanceOf(SQLException.class)
                        .hasMessageContaining("transaction blocks not allowed in statement pooling mode");
            }
        } finally {
            pg.drop(db);
        }
    }

    @Test
    void theAdminLogsInWithItsPassword() throws Exception {
        TestPostgres pg = OutboxTestkit.postgres();
        Assumptions.assumeFalse(pg.adminPassword().isEmpty(), "the suite's server admin " + pg.adminUser()
                + " has no password (a server that trusts it, such as the local one): it cannot log in through PgBouncer");
        try (PgBouncer bouncer = PgBouncer.builder(pg).build();
             Connection c = connect(bouncer.jdbcUrl("postgres") + "?prepareThreshold=0", pg.adminUser(), pg.adminPassword())) {
            assertThat(Sql.strings(c, "SELECT current_user")).containsExactly(pg.adminUser());
        }
    }

    @Test
    void closeStopsItAndDeletesItsFiles() throws Exception {
        TestPostgres pg = OutboxTestkit.postgres();
        String role = "bouncer_close_" + ProcessHandle.current().pid();
        pg.createPasswordRole(role, "role-secret", "");
        PgBouncer bouncer = PgBouncer.builder(pg).build();
        int port = bouncer.port();
        Connection open = connect(bouncer.jdbcUrl("postgres") + "?prepareThreshold=0", role, "role-secret");
        try {
            assertThat(Sql.strings(open, "SELECT current_user")).containsExactly(role);
        } finally {
            bouncer.close();
        }
        assertThatThrownBy(() -> Sql.strings(open, "SELECT 1")).as("its client connections are closed")
                .isInstanceOf(SQLException.class);
        open.close();
        assertThat(bouncer.logFile()).doesNotExist();
        assertThatThrownBy(() -> {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", port), 2000);
            }
        }).as("nothing listens on %d after close()", port).isInstanceOf(java.io.IOException.class);
        try (Connection c = pg.connectAdmin("postgres")) {
            Sql.exec(c, "DROP ROLE \"" + role + "\"");
        }
    }

    @Test
    void aSecureServerIsRefusedAtBuild() {
        TestCertificates certs = TestCertificates.create();
        try (LocalPostgres secure = LocalPostgres.builder().secure(certs).build()) {
            assertThatThrownBy(() -> PgBouncer.builder(secure).build()).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("plain TCP").hasMessageContaining("takes TLS only");
        }
    }

    @Test
    void worksInFrontOfTheMachinesPostgres() throws Exception {
        TestPostgres machine = OutboxTestkit.machinePostgres();
        Assumptions.assumeTrue(machine != null,
                "no PostgreSQL binaries (pg_ctl) on the PATH: the machine-binaries run needs them (apt-get install postgresql)");
        TestDatabase db = machine.newDatabase();
        String role = "bouncer_machine_" + db.name();
        machine.createPasswordRole(role, "role-secret", "");
        try (PgBouncer bouncer = PgBouncer.builder(machine).poolMode(PgBouncer.PoolMode.TRANSACTION).build();
             Connection c = connect(bouncer.jdbcUrl(db) + "?prepareThreshold=0", role, "role-secret")) {
            assertThat(Sql.strings(c, "SELECT current_setting('server_version_num')::int / 10000 || ''"))
                    .containsExactly(Integer.toString(machine.majorVersion()));
        } finally {
            machine.drop(db);
        }
    }

    @Test
    void withoutPgBouncerATestIsSkippedWithTheFixOrFailsWhereToolsAreRequired(@org.junit.jupiter.api.io.TempDir
                                                                            java.nio.file.Path empty) {
        java.util.List<String> nowhere = java.util.List.of(empty.toString());
        assertThatThrownBy(() -> PgBouncer.requireInstalled(nowhere, false))
                .isInstanceOf(org.opentest4j.TestAbortedException.class)
                .hasMessageContaining("pgbouncer is not installed").hasMessageContaining("apt-get install -y pgbouncer");
        assertThatThrownBy(() -> PgBouncer.requireInstalled(nowhere, true)).isInstanceOf(AssertionError.class)
                .hasMessageContaining("OUTBOXKIT_REQUIRE_TOOLS=true, so this test may not be skipped");
    }

    private static Connection connect(String url, String user, String password) throws SQLException {
        Properties p = new Properties();
        p.setProperty("user", user);
        p.setProperty("password", password);
        return DriverManager.getConnection(url, p);
    }
}
