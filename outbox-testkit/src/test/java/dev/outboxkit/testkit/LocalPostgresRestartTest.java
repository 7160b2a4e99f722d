package dev.outboxkit.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariDataSource;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** {@code pg_ctl stop -m immediate} under a writer, then a restart on the same port and data directory. */
class LocalPostgresRestartTest {

    private static LocalPostgres.Builder binaries(String kind) {
        if (kind.equals("machine")) {
            boolean onPath = Stream.of(System.getenv("PATH").split(":"))
                    .anyMatch(dir -> Files.isExecutable(Path.of(dir, "pg_ctl")));
            Assumptions.assumeTrue(onPath,
                    "no PostgreSQL binaries (pg_ctl) on the PATH: the machine-binaries run needs them (apt-get install postgresql)");
            return LocalPostgres.builder().machineBinaries();
        }
        return LocalPostgres.builder().embeddedBinaries();
    }

    @ParameterizedTest(name = "{0} binaries")
    @ValueSource(strings = {"embedded", "machine"})
    void acknowledgedCommitsSurviveAnImmediateStopAndClientsReconnect(String kind) throws Exception {
        try (LocalPostgres pg = binaries(kind).build()) {
            int port = pg.port();
            if (kind.equals("embedded")) {
                assertThat(pg.majorVersion()).isEqualTo(17);
            }
            TestDatabase db = pg.newEmptyDatabase();
            // A writer commits one row per transaction and remembers what it was told.
            RowWriter rows = RowWriter.onNewTable(db);
            try (HikariDataSource pool = db.newPool(2); Connection held = db.connect()) {
                assertThat(selectOne(pool)).isEqualTo(1);
                RowWriter.Writing writer = rows.start();
                await().atMost(Duration.ofSeconds(60)).until(() -> rows.acknowledged() >= 200);

                pg.stopImmediately();
                assertThat(pg.isRunning()).isFalse();
                assertThat(writer.endedByFailure(Duration.ofSeconds(60))).as("the writer saw its connection drop").isTrue();
                assertThatThrownBy(() -> selectOne(held))
                        .isInstanceOfSatisfying(SQLException.class,
                                e -> assertThat(e.getSQLState()).as(e.toString()).matches("08.*|57P.*"));
                assertThatThrownBy(db::connect)
                        .isInstanceOfSatisfying(SQLException.class,
                                e -> assertThat(e.getSQLState()).as(e.toString()).startsWith("08"));

                pg.start();
                assertThat(pg.isRunning()).isTrue();
                assertThat(pg.port()).isEqualTo(port);
                // the pool drops its dead connections and opens new ones on the same address
                await().atMost(Duration.ofSeconds(60)).ignoreExceptions().until(() -> selectOne(pool) == 1);
            }
            Set<Long> present = rows.present();
            assertThat(present).containsAll(rows.acknowledgedIds());
            assertThat(rows.unexplained(present)).as("rows nobody committed").isEmpty();
            assertThat(Files.readString(pg.logFile())).contains("database system was interrupted");
            db.close();
        }
    }

    private static int selectOne(javax.sql.DataSource ds) throws SQLException {
        try (Connection c = ds.getConnection()) {
            return selectOne(c);
        }
    }

    private static int selectOne(Connection c) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT 1")) {
            rs.next();
            return rs.getInt(1);
        }
    }
}
