package dev.outboxkit.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxkit.sql.Migrations;
import dev.outboxkit.sql.SchemaConflictException;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The schema on both majors: the suite's server (embedded 17 by default) and the machine's
 * PostgreSQL binaries (15 on this machine kind) when they are on the PATH.
 */
class MigrationsTest {

    static Stream<Arguments> servers() {
        List<Arguments> servers = new ArrayList<>();
        servers.add(Arguments.of("suite", OutboxTestkit.postgres()));
        servers.add(Arguments.of("machine", OutboxTestkit.machinePostgres()));
        return servers.stream();
    }

    private static TestPostgres require(TestPostgres server) {
        Assumptions.assumeTrue(server != null,
                "no PostgreSQL binaries (pg_ctl) on the PATH: the second-major run needs them (apt-get install postgresql)");
        return server;
    }

    @ParameterizedTest(name = "{0}", autoCloseArguments = false)
    @MethodSource("servers")
    void appliesToANamedSchemaAndTwiceIsANoOp(String label, TestPostgres server) throws Exception {
        TestDatabase db = require(server).newEmptyDatabase();
        try {
            Migrations.Result first = Migrations.migrate(db.dataSource(), "outbox_app");
            assertThat(first.applied()).isGreaterThanOrEqualTo(1);
            Migrations.Result second = Migrations.migrate(db.dataSource(), "outbox_app");
            assertThat(second.applied()).isZero();
            assertThat(second.version()).isEqualTo(first.version());
            try (Connection c = db.connect(); Statement s = c.createStatement()) {
                ResultSet rs = s.executeQuery("SELECT count(*) FROM information_schema.tables WHERE table_schema = 'outbox_app' "
                        + "AND table_name = 'outbox_event'");
                rs.next();
                assertThat(rs.getInt(1)).isEqualTo(1);
                // Every table and column of ours explains itself in \d+.
                rs = s.executeQuery("""
                        SELECT c.relname || '.' || a.attname
                          FROM pg_class c
                          JOIN pg_namespace n ON n.oid = c.relnamespace
                          JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
                         WHERE n.nspname = 'outbox_app' AND c.relkind = 'r'
                           AND c.relname <> 'outboxkit_schema_history'
                           AND col_description(c.oid, a.attnum) IS NULL
                        UNION ALL
                        SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                         WHERE n.nspname = 'outbox_app' AND c.relkind = 'r' AND c.relname <> 'outboxkit_schema_history'
                           AND obj_description(c.oid, 'pg_class') IS NULL
                        """);
                List<String> uncommented = new ArrayList<>();
                while (rs.next()) {
                    uncommented.add(rs.getString(1));
                }
                assertThat(uncommented).as("tables and columns without COMMENT ON").isEmpty();
            }
        } finally {
            db.server().drop(db);
        }
    }

    @ParameterizedTest(name = "{0}", autoCloseArguments = false)
    @MethodSource("servers")
    void coexistsWithTheApplicationsOwnTables(String label, TestPostgres server) throws Exception {
        TestDatabase db = require(server).newEmptyDatabase();
        try {
            try (Connection c = db.connect(); Statement s = c.createStatement()) {
                s.execute("CREATE TABLE account (id text PRIMARY KEY, balance bigint NOT NULL)");
            }
            assertThat(Migrations.migrate(db.dataSource(), "public").applied()).isGreaterThanOrEqualTo(1);
        } finally {
            db.server().drop(db);
        }
    }

    @ParameterizedTest(name = "{0}", autoCloseArguments = false)
    @MethodSource("servers")
    void refusesASchemaWithAForeignOutboxTable(String label, TestPostgres server) throws Exception {
        TestDatabase db = require(server).newEmptyDatabase();
        try {
            try (Connection c = db.connect(); Statement s = c.createStatement()) {
                s.execute("CREATE TABLE outbox_event (id bigserial PRIMARY KEY, body text)");
            }
            assertThatThrownBy(() -> Migrations.migrate(db.dataSource(), "public"))
                    .isInstanceOf(SchemaConflictException.class)
                    .hasMessageContaining("schema \"public\" already has outbox_event")
                    .hasMessageContaining("another schema");
            try (Connection c = db.connect(); Statement s = c.createStatement()) {
                ResultSet rs = s.executeQuery("SELECT count(*) FROM information_schema.columns "
                        + "WHERE table_schema = 'public' AND table_name = 'outbox_event'");
                rs.next();
                assertThat(rs.getInt(1)).as("the foreign table is left as it was").isEqualTo(2);
            }
        } finally {
            db.server().drop(db);
        }
    }

    @ParameterizedTest(name = "{0}", autoCloseArguments = false)
    @MethodSource("servers")
    void refusesHostileSchemaNamesBeforeTouchingTheDatabase(String label, TestPostgres server) {
        TestDatabase db = require(server).newEmptyDatabase();
        try {
            assertThatThrownBy(() -> Migrations.migrate(db.dataSource(), "public; drop table x"))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("schema 'public; drop table x' is not a legal identifier");
        } finally {
            db.server().drop(db);
        }
    }
}
