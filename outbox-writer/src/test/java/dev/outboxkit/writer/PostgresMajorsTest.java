package dev.outboxkit.writer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxkit.core.LogicalMessages;
import dev.outboxkit.core.OutboxEvent;
import dev.outboxkit.testkit.OutboxTestkit;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestPostgres;
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
 * The writer and the idempotency keys on both PostgreSQL majors: the suite's server (embedded 17)
 * and the machine's own binaries (15 here), which need the V1 + V2 schema and pgjdbc's pipelining
 * to behave the same.
 */
class PostgresMajorsTest {

    static Stream<Arguments> servers() {
        return Stream.of(Arguments.of("suite", OutboxTestkit.postgres()),
                Arguments.of("machine", OutboxTestkit.machinePostgres()));
    }

    @ParameterizedTest(name = "{0}", autoCloseArguments = false)
    @MethodSource("servers")
    void writesEveryModeAndKeepsKeys(String label, TestPostgres server) throws Exception {
        Assumptions.assumeTrue(server != null,
                "no PostgreSQL binaries (pg_ctl) on the PATH: the second-major run needs them (apt-get install postgresql)");
        TestDatabase db = server.newDatabase();
        try {
            WireTap tap = new WireTap();
            try (Connection c = tap.connect(db); Statement s = c.createStatement()) {
                s.execute("SELECT pg_create_logical_replication_slot('" + db.name() + "', 'test_decoding')");
                c.setAutoCommit(false);
                for (WriteMode mode : WriteMode.values()) {
                    try (OutboxTransaction tx = OutboxWriter.builder().mode(mode).build().begin(c)) {
                        TestSupport.events(mode.name(), 3).forEach(tx::add);
                        long before = tap.roundTrips();
                        tx.commit();
                        assertThat(tap.roundTrips() - before).as(label + " " + mode).isEqualTo(1);
                    }
                }
                c.setAutoCommit(true);
                s.execute("SET synchronous_commit = on");
                s.execute("CREATE TEMP TABLE wal_flush (x int)");
                List<OutboxEvent> messages = new ArrayList<>();
                try (ResultSet rs = s.executeQuery("SELECT data FROM pg_logical_slot_get_changes('" + db.name() + "', NULL, NULL)")) {
                    while (rs.next()) {
                        String data = rs.getString(1);
                        if (data.startsWith("message:")) {
                            messages.add(LogicalMessages.decode(data.substring(data.indexOf("content:") + 8)));
                        }
                    }
                }
                s.execute("SELECT pg_drop_replication_slot('" + db.name() + "')");
                assertThat(messages).extracting(OutboxEvent::aggregateId).containsOnly(WriteMode.LOGICAL_MESSAGE.name()).hasSize(3);
                try (ResultSet rs = s.executeQuery("SELECT count(*) FROM outbox_event")) {
                    rs.next();
                    assertThat(rs.getLong(1)).as("only KEEP leaves rows").isEqualTo(3);
                }
            }
            IdempotencyKeys keys = IdempotencyKeys.builder().build();
            String body = "{\"a\": 1}";
            assertThat(keys.execute(db.dataSource(), "s", "k", body, (c, tx) -> StoredResponse.of(201, "made")).replayed()).isFalse();
            IdempotentResult replay = keys.execute(db.dataSource(), "s", "k", "{ \"a\" : 1.0 }", (c, tx) -> StoredResponse.of(500, "no"));
            assertThat(replay.replayed()).isTrue();
            assertThat(replay.response().bodyAsString()).isEqualTo("made");
            assertThatThrownBy(() -> keys.execute(db.dataSource(), "s", "k", "{\"a\": 2}", (c, tx) -> StoredResponse.of(500, "no")))
                    .isInstanceOf(KeyReusedWithDifferentRequestException.class);
        } finally {
            server.drop(db);
        }
    }
}
