package dev.outboxkit.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxkit.sql.Migrations;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Schema version 10 (binary payloads) on a table that already holds a million rows, while a writer of
 * version 9 keeps inserting: no row is rewritten (the table keeps its file), the writer is never refused
 * and waits at most as long as the brief catalogue lock, and the new CHECK ends validated.
 */
class BinaryPayloadMigrationTest {

    private static final int ROWS = Integer.getInteger("outboxkit.migrationRows", 1_000_000);

    @Test
    void addsTheBinaryColumnsWithoutRewritingTheRowsWhileAVersion9WriterRuns() throws Exception {
        TestDatabase db = OutboxTestkit.postgres().newEmptyDatabase();
        try {
            Migrations.migrate(db.dataSource(), "public", "9");
            long fill = System.nanoTime();
            db.exec("INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload)"
                    + " SELECT gen_random_uuid(), 'account', 'acc-' || (g % 1000), 'MoneyDeposited',"
                    + " jsonb_build_object('amount', g, 'note', repeat('x', 100)) FROM generate_series(1, " + ROWS + ") g",
                    "VACUUM ANALYZE outbox_event");
            long fillMs = (System.nanoTime() - fill) / 1_000_000;
            long fileBefore = db.count("SELECT pg_relation_filenode('outbox_event')");
            long bytes = db.count("SELECT pg_total_relation_size('outbox_event')");

            AtomicBoolean stop = new AtomicBoolean();
            AtomicLong inserts = new AtomicLong();
            AtomicLong slowestMicros = new AtomicLong();
            Throwable[] failure = new Throwable[1];
            // A version-9 writer: the JSON insert it sends, unchanged in version 10.
            Thread writer = new Thread(() -> {
                try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement(
                        "INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, topic, payload, headers)"
                                + " VALUES (gen_random_uuid(), 'account', 'acc-w', 'MoneyDeposited', NULL, ?::jsonb, ?::jsonb)")) {
                    while (!stop.get()) {
                        long t = System.nanoTime();
                        ps.setString(1, "{\"amount\": 1}");
                        ps.setString(2, "{}");
                        ps.executeUpdate();
                        slowestMicros.accumulateAndGet((System.nanoTime() - t) / 1_000, Math::max);
                        inserts.incrementAndGet();
                    }
                } catch (Throwable t) {
                    failure[0] = t;
                }
            }, "v9-writer");
            writer.start();
            long writtenBefore = waitForInserts(inserts, 100);

            long start = System.nanoTime();
            Migrations.Result result = Migrations.migrate(db.dataSource(), "public", "10");
            long migrationMs = (System.nanoTime() - start) / 1_000_000;
            long writtenDuring = inserts.get() - writtenBefore;
            waitForInserts(inserts, inserts.get() + 100);
            stop.set(true);
            writer.join();

            assertThat(failure[0]).as("the version-9 writer must never be refused").isNull();
            assertThat(result.version()).isEqualTo("10");
            assertThat(db.count("SELECT pg_relation_filenode('outbox_event')")).as("no table rewrite").isEqualTo(fileBefore);
            assertThat(db.count("SELECT count(*) FROM outbox_event WHERE payload IS NOT NULL AND payload_bytes IS NULL"
                    + " AND content_type IS NULL")).isEqualTo(ROWS + inserts.get());
            assertThat(db.count("SELECT count(*) FROM pg_constraint WHERE convalidated AND conname IN"
                    + " ('outbox_event_one_payload', 'outbox_dead_letter_one_payload')")).isEqualTo(2);
            // For comparison: the same CHECK added in one step scans the table under ACCESS EXCLUSIVE (writers wait it out).
            long oneStep = System.nanoTime();
            db.exec("ALTER TABLE outbox_event ADD CONSTRAINT one_step CHECK ((payload IS NULL) <> (payload_bytes IS NULL))",
                    "ALTER TABLE outbox_event DROP CONSTRAINT one_step");
            long oneStepMs = (System.nanoTime() - oneStep) / 1_000_000;
            String load = Files.readString(Path.of("/proc/loadavg")).trim();
            System.out.printf("V10 on %,d rows (%,d MB, filled in %,d ms): migration %,d ms; version-9 writer inserted %,d rows"
                            + " meanwhile, slowest insert %,d ms; a validated CHECK added in one step would hold the"
                            + " exclusive lock %,d ms; cores %d, loadavg %s%n", ROWS, bytes >> 20, fillMs, migrationMs,
                    writtenDuring, slowestMicros.get() / 1_000, oneStepMs, Runtime.getRuntime().availableProcessors(), load);

            // Every statement may run again (what recovering from a failure half-way through the script does).
            String script = new String(Migrations.class.getResourceAsStream("/db/outboxkit/V10__binary_payloads.sql")
                    .readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            try (Connection c = db.connect(); Statement s = c.createStatement()) {
                s.execute(script);
            }
            assertThat(db.count("SELECT count(*) FROM pg_constraint WHERE convalidated AND conname IN"
                    + " ('outbox_event_one_payload', 'outbox_dead_letter_one_payload')")).isEqualTo(2);

            // The constraint holds for new rows: neither payload, or both, is refused; a binary row needs its content type.
            try (Connection c = db.connect(); Statement s = c.createStatement()) {
                String insert = "INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload, payload_bytes,"
                        + " content_type) VALUES (gen_random_uuid(), 'a', '1', 'e', ";
                s.execute(insert + "NULL, '\\x0a01'::bytea, 'application/x-protobuf')");
                assertThatThrownBy(() -> s.execute(insert + "NULL, NULL, NULL)")).isInstanceOf(SQLException.class)
                        .hasMessageContaining("outbox_event_one_payload");
                assertThatThrownBy(() -> s.execute(insert + "'{}', '\\x00'::bytea, 'application/octet-stream')"))
                        .isInstanceOf(SQLException.class).hasMessageContaining("outbox_event_one_payload");
                assertThatThrownBy(() -> s.execute(insert + "NULL, '\\x00'::bytea, NULL)")).isInstanceOf(SQLException.class)
                        .hasMessageContaining("outbox_event_one_payload");
            }
        } finally {
            db.server().drop(db);
        }
    }

    private static long waitForInserts(AtomicLong inserts, long atLeast) {
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(60)).until(() -> inserts.get() >= atLeast);
        return inserts.get();
    }
}
