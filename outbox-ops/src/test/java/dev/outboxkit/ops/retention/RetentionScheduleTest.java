package dev.outboxkit.ops.retention;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.Sql;
import dev.outboxkit.testkit.TestDatabase;
import com.zaxxer.hikari.HikariDataSource;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(OutboxTestkitExtension.class)
class RetentionScheduleTest {

    private static final String ADVISORY = "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'"
            + " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())";

    /**
     * When the manual purge's pool last tried the retention lock (microseconds since the epoch; 0 for never): its last
     * statement is the try, or the ROLLBACK that ends a try that failed.
     */
    private static final String LAST_LOCK_TRY = "SELECT coalesce(max((extract(epoch FROM query_start) * 1000000)::bigint), 0)"
            + " FROM pg_stat_activity WHERE application_name = 'manual-purge'"
            + " AND (query LIKE 'SELECT pg_try_advisory_xact_lock(hashtext(''outboxkit.retention'')%' OR query = 'ROLLBACK')";

    private static void expiredDeadLetter(DataSource ds) throws Exception {
        Sql.exec(ds, "INSERT INTO outbox_dead_letter (id, seq, aggregate_type, aggregate_id, event_type, payload, headers,"
                + " created_at, error_class, error_message, attempts, parked_at, parked_by)"
                + " VALUES (gen_random_uuid(), 1, 'order', 'o', 'T', '{}', '{}', now(), 'E', 'm', 1, now() - interval '40 days', 'r')");
    }

    private static RetentionSchedule schedule(DataSource ds, SimpleMeterRegistry registry) {
        return RetentionSchedule.builder().interval(Duration.ofSeconds(1)).retention(Retention.builder().outboxDatabase(ds, "public")
                .deadLetterRetention(Duration.ofDays(30)).meterRegistry(registry).build()).build();
    }

    @Test
    void onlyOneInstancePerSchemaRunsARound(TestDatabase db) throws Exception {
        expiredDeadLetter(db.dataSource());
        SimpleMeterRegistry registryA = new SimpleMeterRegistry();
        SimpleMeterRegistry registryB = new SimpleMeterRegistry();
        try (HikariDataSource a = db.newPool(3); HikariDataSource b = db.newPool(3); Connection blocker = db.connect();
             Statement s = blocker.createStatement()) {
            RetentionSchedule first = schedule(a, registryA);
            RetentionSchedule second = schedule(b, registryB);
            // every series exists at 0 before any round, so rules and panels see 0 rather than "no data"
            for (String what : Retention.PURGED_KINDS) {
                assertThat(registryA.get("outbox.retention.purged").tag("what", what).counter().count()).as(what).isZero();
            }
            assertThat(registryA.get("outbox.retention.runs").counters()).hasSize(3);
            // Hold the first round inside its run: it waits for the dead-letter table while it holds the retention lock.
            blocker.setAutoCommit(false);
            s.execute("LOCK TABLE outbox_dead_letter IN ACCESS EXCLUSIVE MODE");
            CompletableFuture<RetentionSchedule.Outcome> running = CompletableFuture.supplyAsync(first::runOnce);
            await().atMost(Duration.ofSeconds(60)).until(() -> Sql.count(db.dataSource(),
                    ADVISORY + " AND granted") == 1
                    && Sql.count(db.dataSource(), "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                    + " AND datname = current_database()") == 1);
            assertThat(second.runOnce()).isEqualTo(RetentionSchedule.Outcome.SKIPPED);
            assertThat(second.runOnce()).isEqualTo(RetentionSchedule.Outcome.SKIPPED);
            assertThat(registryB.get("outbox.retention.runs").tag("outcome", "skipped").counter().count()).isEqualTo(2);
            assertThat(running).isNotDone();
            blocker.commit();

            assertThat(running.get()).isEqualTo(RetentionSchedule.Outcome.SUCCESS);
            assertThat(Sql.count(db.dataSource(), "SELECT count(*) FROM outbox_dead_letter")).isZero();
            assertThat(registryA.get("outbox.retention.purged").tag("what", "dead_letters").counter().count()).isEqualTo(1);
            assertThat(registryA.get("outbox.retention.since_last_success").gauge().value()).isLessThan(60);
            assertThat(registryA.get("outbox.retention.duration").tag("outcome", "success").timer().count()).isEqualTo(1);
            // the lock is released after the round: the other instance runs the next one
            assertThat(second.runOnce()).isEqualTo(RetentionSchedule.Outcome.SUCCESS);
            // two rounds ran, two entries; a skipped round leaves none. Each says when the next round is due.
            java.util.List<dev.outboxkit.ops.admin.JournalEntry> rounds = dev.outboxkit.ops.admin.OutboxAdmin.builder()
                    .outboxDatabase(db.dataSource(), "public").build().journal(10);
            assertThat(rounds).hasSize(2).allSatisfy(e -> {
                assertThat(e.kind()).isEqualTo(dev.outboxkit.ops.admin.JournalEntry.Kind.RETENTION);
                assertThat(e.detail()).containsEntry("interval", "PT1S");
                assertThat(e.nextRoundDue()).contains(e.finishedAt().plusSeconds(1));
            });
            assertThat((java.util.Map<String, Object>) rounds.get(1).detail().get("purged")).containsEntry("dead_letters", 1);
            assertThat(Sql.count(db.dataSource(), ADVISORY)).isZero();
        }
    }

    @Test
    void aFailingRoundIsCountedAndTheScheduleGoesOn(TestDatabase db) throws Exception {
        DataSource ds = db.dataSource();
        expiredDeadLetter(ds);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        Sql.exec(ds, "ALTER TABLE outbox_dead_letter RENAME TO outbox_dead_letter_away");
        try (HikariDataSource pool = db.newPool(3); RetentionSchedule schedule = schedule(pool, registry)) {
            schedule.start();
            await().atMost(Duration.ofSeconds(60)).until(() -> registry.get("outbox.retention.runs").tag("outcome", "failure")
                    .counter().count() >= 2);
            assertThat(registry.get("outbox.retention.runs").tag("outcome", "success").counter().count()).isZero();
            assertThat(Sql.count(ds, "SELECT count(*) FROM outbox_ops_journal WHERE kind = 'retention' AND outcome = 'failure'"
                    + " AND detail->>'sqlState' = '42P01' AND detail->>'interval' = 'PT1S'")).as("each failed round's entry")
                    .isGreaterThanOrEqualTo(2);
            Sql.exec(ds, "ALTER TABLE outbox_dead_letter_away RENAME TO outbox_dead_letter");
            await().atMost(Duration.ofSeconds(60)).until(() -> Sql.count(ds, "SELECT count(*) FROM outbox_dead_letter") == 0);
            await().atMost(Duration.ofSeconds(60)).until(() -> registry.get("outbox.retention.runs").tag("outcome", "success")
                    .counter().count() >= 1);
        }
    }

    @Test
    void builderRefusesAMissingJobOrATooShortInterval(TestDatabase db) {
        Retention retention = Retention.builder().outboxDatabase(db.dataSource(), "public").build();
        assertThatThrownBy(() -> RetentionSchedule.builder().interval(Duration.ofHours(1)).build()).hasMessageContaining("retention");
        assertThatThrownBy(() -> RetentionSchedule.builder().retention(retention).interval(Duration.ofMillis(10)).build())
                .hasMessageContaining("interval must be at least 1 second");
    }

    @Test
    void aManualPurgeWaitsForTheScheduledRoundAndFailsLoudlyWhenItDoesNotEnd(TestDatabase db) throws Exception {
        expiredDeadLetter(db.dataSource());
        com.zaxxer.hikari.HikariConfig config = new com.zaxxer.hikari.HikariConfig();
        config.setJdbcUrl(db.jdbcUrl());
        config.setUsername(db.user());
        config.setPassword(db.password());
        config.setMaximumPoolSize(3);
        config.addDataSourceProperty("ApplicationName", "manual-purge");
        try (HikariDataSource pool = new HikariDataSource(config); Connection sidecar = db.connect()) {
            Retention manual = Retention.builder().outboxDatabase(pool, "public").deadLetterRetention(Duration.ofDays(30)).build();
            RetentionLock held = RetentionLock.tryAcquire(sidecar, "public"); // a sidecar's round in progress
            assertThat(held).isNotNull();
            try (Connection other = pool.getConnection()) {
                assertThat(RetentionLock.tryAcquire(other, "public")).as("one holder at a time").isNull();
            }

            assertThatThrownBy(() -> manual.purgeExclusively(Duration.ofMillis(400)))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("another instance is running retention on schema public")
                    .hasMessageContaining("--dry-run");
            assertThat(Sql.count(db.dataSource(), "SELECT count(*) FROM outbox_dead_letter")).as("nothing purged").isEqualTo(1);

            long triedBefore = Sql.count(db.dataSource(), LAST_LOCK_TRY);
            CompletableFuture<Retention.Result> waiting = CompletableFuture.supplyAsync(() -> {
                try {
                    return manual.purgeExclusively(Duration.ofSeconds(30));
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            // the purge must be waiting when the round ends: it has tried the held lock since it started
            await("the manual purge trying the lock held by the round").atMost(Duration.ofSeconds(25))
                    .until(() -> Sql.count(db.dataSource(), LAST_LOCK_TRY) > triedBefore);
            assertThat(waiting).isNotDone();
            held.close();
            assertThat(waiting.get().deadLetters()).isEqualTo(1);
            assertThat(Sql.count(db.dataSource(), "SELECT count(*) FROM outbox_dead_letter")).isZero();
            assertThat(Sql.count(db.dataSource(), ADVISORY)).as("the purge released the lock").isZero();
        }
    }
}
