package dev.outboxkit.relay.cdc.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.outboxkit.core.Secret;
import dev.outboxkit.core.internal.DatabaseLogin;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.RecordChangeEvent;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.connect.source.SourceRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A close that comes while Debezium's tasks are still starting: Debezium refuses it ("Cannot stop engine while tasks
 * are starting"). The runner must close the engine once the tasks started, instead of giving up and leaving an engine
 * that then streams the slot for a session that already ended (issue 30). The task's start is held in its offset read
 * (the real offset store, its slot check replaced by a wait on a latch) to put the close exactly there.
 */
@ExtendWith(OutboxTestkitExtension.class)
class CloseWhileStartingTest {

    @Test
    void aCloseRefusedWhileTasksStartClosesTheEngineOnceTheyStarted(TestDatabase db) throws Exception {
        String slot = "s_" + db.name();
        CdcSettings settings = TestSettings.of(new DatabaseLogin(db.jdbcUrl(), db.user(), Secret.of(db.password())), slot,
                "starting", Map.of());
        SlotGuard guard = new SlotGuard(settings);
        try (Connection c = db.connect()) {
            guard.ensurePublication(c);
            guard.createSlot(c);
        }
        LeaseKeeper lease = new LeaseKeeper(db.dataSource(), settings);
        long fence = lease.tryAcquire().orElseThrow().fence();
        CountDownLatch reading = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        String storeId = PostgresOffsetStore.register(new PostgresOffsetStore.Context(
                new StateTables(db.dataSource(), settings, lease), () -> fence, () -> {
                    reading.countDown();
                    awaitQuietly(release);
                }, failure -> { }));
        DebeziumEngine.ChangeConsumer<RecordChangeEvent<SourceRecord>> handler = (batch, committer) -> {
            for (RecordChangeEvent<SourceRecord> event : batch) {
                committer.markProcessed(event);
            }
            committer.markBatchFinished();
        };
        EngineRunner runner = new EngineRunner(EngineConfig.properties(settings, JdbcTarget.parse(settings.jdbcUrl()), storeId),
                handler, new FlushPolicy(settings.offsetFlushInterval()), slot, () -> false);
        Thread closer = new Thread(runner::close, "test-closer");
        try {
            runner.start();
            assertThat(reading.await(120, TimeUnit.SECONDS)).as("the Postgres task reads its offsets as it starts").isTrue();
            closer.start();
            // the close was refused (tasks starting) and now waits: for the tasks in the fix, for the thread before it
            await().atMost(Duration.ofSeconds(30)).until(() -> closer.getState() == Thread.State.TIMED_WAITING);
            assertThat(runner.done()).as("the engine is still starting its task").isFalse();

            release.countDown();
            await().atMost(Duration.ofSeconds(90)).until(() -> !closer.isAlive());
            assertThat(runner.done()).as("the close ended the engine once its task started").isTrue();
            await("no walsender left on the slot").atMost(Duration.ofSeconds(30)).until(() -> !slotActive(db, slot));
        } finally {
            release.countDown();
            runner.close();
            closer.join(TimeUnit.SECONDS.toMillis(90));
            PostgresOffsetStore.unregister(storeId);
            db.dropReplicationSlot(slot);
        }
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await(5, TimeUnit.MINUTES);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static boolean slotActive(TestDatabase db, String slot) throws Exception {
        try (Connection c = db.connect();
             PreparedStatement ps = c.prepareStatement("SELECT active FROM pg_replication_slots WHERE slot_name = ?")) {
            ps.setString(1, slot);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() && rs.getBoolean(1);
            }
        }
    }
}
