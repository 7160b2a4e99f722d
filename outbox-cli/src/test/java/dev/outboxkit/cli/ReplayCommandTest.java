package dev.outboxkit.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(OutboxTestkitExtension.class)
class ReplayCommandTest {

    private static final String ARCHIVED = "018f3a5e-7b2c-7d11-8a00-00000000000a";
    private static final String ARCHIVED_OLD = "018f3a5e-7b2c-7d11-8a00-00000000000b";
    private static final String PENDING = "018f3a5e-7b2c-7d11-8a00-00000000000c";
    private static final String PARKED = "018f3a5e-7b2c-7d11-8a00-00000000000d";
    private static final String GONE = "018f3a5e-7b2c-7d11-8a00-00000000000e";

    @Test
    void replaysKeptRowsAndSaysWhereTheOthersAre(TestDatabase db) throws Exception {
        try (Connection c = db.connect(); Statement s = c.createStatement()) {
            s.execute("INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload, created_at, published_at) VALUES "
                    + "('" + ARCHIVED + "', 'account', 'a1', 'Opened', '{}', '2026-11-29T10:00:00Z', now()), "
                    + "('" + ARCHIVED_OLD + "', 'account', 'a2', 'Opened', '{}', '2026-11-01T10:00:00Z', now()), "
                    + "('" + PENDING + "', 'account', 'a3', 'Opened', '{}', now(), NULL)");
            s.execute("INSERT INTO outbox_dead_letter (id, seq, aggregate_type, aggregate_id, event_type, payload, headers, "
                    + "created_at, error_class, error_message, attempts, parked_by) VALUES ('" + PARKED + "', 9, 'account', "
                    + "'a4', 'Opened', '{}', '{}', now(), 'X', 'y', 1, 'relay-1')");
        }
        Map<String, String> env = Map.of("OUTBOX_JDBC_URL", db.jdbcUrl(), "OUTBOX_USER", db.user(), "OUTBOX_PASSWORD", db.password());

        CliRun neither = CliRun.run(env, "replay");
        assertThat(neither.exitCode()).isEqualTo(2);
        assertThat(neither.err()).contains("--id").contains("--from");

        CliRun dry = CliRun.run(env, "replay", "--from", "2026-11-29T00:00:00Z", "--dry-run");
        assertThat(dry.exitCode()).as(dry.all()).isZero();
        assertThat(dry.out()).contains("would replay 1 event");
        assertThat(unpublished(db)).isEqualTo(1);

        CliRun byRange = CliRun.run(env, "replay", "--from", "2026-11-29T00:00:00Z", "--to", "2026-11-30T00:00:00Z");
        assertThat(byRange.out()).contains("replayed 1 event");
        assertThat(unpublished(db)).isEqualTo(2);

        CliRun byId = CliRun.run(env, "replay", "--id", ARCHIVED_OLD, "--id", PENDING, "--id", PARKED, "--id", GONE);
        assertThat(byId.exitCode()).as("some ids could not be replayed").isEqualTo(1);
        assertThat(byId.out()).contains("replayed 1 event")
                .contains(PENDING + ": not yet published")
                .contains(PARKED + ": parked as a dead letter: use 'outbox dead-letters retry --id " + PARKED + "'")
                .contains(GONE + ": not kept");
        assertThat(unpublished(db)).isEqualTo(3);
    }

    @Test
    void purgeRemovesOnlyOldPublishedRowsFromTheArchive(TestDatabase db) throws Exception {
        try (Connection c = db.connect(); Statement s = c.createStatement()) {
            s.execute("INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload, created_at, published_at) VALUES "
                    + "('" + ARCHIVED + "', 'account', 'a1', 'Opened', '{}', now() - interval '3 days', now() - interval '3 days'), "
                    + "('" + ARCHIVED_OLD + "', 'account', 'a2', 'Opened', '{}', now() - interval '3 days', now() - interval '1 hour'), "
                    + "('" + PENDING + "', 'account', 'a3', 'Opened', '{}', now() - interval '3 days', NULL)");
        }
        Map<String, String> env = Map.of("OUTBOX_JDBC_URL", db.jdbcUrl(), "OUTBOX_USER", db.user(), "OUTBOX_PASSWORD", db.password());
        CliRun dry = CliRun.run(env, "purge", "--archive-retention", "P1D", "--dry-run");
        assertThat(dry.exitCode()).as(dry.all()).isZero();
        assertThat(dry.out()).contains("outbox archive (published rows kept in MARK mode): 1 would be purged");
        CliRun purge = CliRun.run(env, "purge", "--archive-retention", "P1D");
        assertThat(purge.out()).contains("outbox archive (published rows kept in MARK mode): 1 purged");
        try (Connection c = db.connect(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT string_agg(aggregate_id, ',' ORDER BY aggregate_id) FROM outbox_event")) {
            rs.next();
            assertThat(rs.getString(1)).as("recently published and unpublished rows stay").isEqualTo("a2,a3");
        }
    }

    private static long unpublished(TestDatabase db) throws Exception {
        try (Connection c = db.connect(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT count(*) FROM outbox_event WHERE published_at IS NULL")) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
