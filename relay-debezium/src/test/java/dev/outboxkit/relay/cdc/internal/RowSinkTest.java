package dev.outboxkit.relay.cdc.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.outboxkit.core.InvalidEventException;
import dev.outboxkit.core.Secret;
import dev.outboxkit.runtime.DatabaseLogin;
import dev.outboxkit.runtime.PublishFailures;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The deletion of published rows against the real server. Logical decoding hands a transaction over once its commit
 * record is written, a moment before other sessions see its rows; an acknowledgement that comes back within that
 * moment must not leave the row in the table for good (the relay would publish it again at every takeover, and call
 * itself stalled meanwhile). A transaction still open looks the same to the deleter: rows it cannot see yet.
 */
@ExtendWith(OutboxTestkitExtension.class)
class RowSinkTest {

    @Test
    void aRowNotYetVisibleAtItsDeleteIsDeletedOnceItsTransactionEnded(TestDatabase db) throws Exception {
        try (Connection writer = db.connect(); RowSink sink = sinkUnderLease(db)) {
            writer.setAutoCommit(false);
            long[] written = insertInOpenTransaction(writer);
            long seq = written[0];
            long txId = written[1];

            sink.deleteLater(new long[] {seq}, new long[] {txId});
            await("the first delete missed the row and waits for its transaction").atMost(Duration.ofSeconds(30))
                    .until(() -> sink.unseenAtFirstDelete() == 1);
            writer.commit();

            assertThat(sink.flush(Duration.ofSeconds(30))).as("the deletion finished").isTrue();
            assertThat(db.count("SELECT count(*) FROM outbox_event WHERE seq = ?", seq)).as("the row is gone once its transaction ended").isZero();
        }
    }

    /**
     * Poison the stream handed over while its transaction is not visible yet: parking waits for that transaction, so
     * the row leaves the table with its dead letter, and the next start does not park it a second time.
     */
    @Test
    void poisonNotYetVisibleIsParkedAndDeletedOnceItsTransactionEnded(TestDatabase db) throws Exception {
        try (Connection writer = db.connect(); RowSink sink = sinkUnderLease(db)) {
            writer.setAutoCommit(false);
            long[] written = insertInOpenTransaction(writer);
            OutboxRow row = new OutboxRow(written[0], "0191f0a4-1c2b-7d3e-8f40-123456789abc", "order", "1", "E", null,
                    "{}", "{}", "not a timestamp");
            Publisher.DeadLetter letter = new Publisher.DeadLetter(row,
                    PublishFailures.classify(new InvalidEventException("created_at is not a timestamp")), 1);

            CompletableFuture<Void> parking = CompletableFuture.runAsync(() -> {
                try {
                    sink.park(List.of(letter), new long[] {written[1]});
                } catch (Exception e) {
                    throw new CompletionException(e);
                }
            });
            await("parking waits for the row's transaction").during(Duration.ofMillis(300))
                    .atMost(Duration.ofSeconds(30)).until(() -> !parking.isDone());
            writer.commit();
            parking.get(30, TimeUnit.SECONDS);

            assertThat(db.count("SELECT count(*) FROM outbox_event WHERE seq = ?", written[0])).as("the parked row left the table").isZero();
            assertThat(db.count("SELECT count(*) FROM outbox_dead_letter WHERE seq = ?", written[0])).isEqualTo(1);
        }
    }

    /** Rows a pass over the table read are visible: one not found was deleted before, and nothing waits for it. */
    @Test
    void aRowFromAPassThatIsGoneIsNotWaitedFor(TestDatabase db) throws Exception {
        try (RowSink sink = sinkUnderLease(db)) {
            sink.deleteLater(new long[] {424_242L});
            assertThat(sink.flush(Duration.ofSeconds(30))).isTrue();
            assertThat(sink.unseenAtFirstDelete()).as("no second try without the writers' transactions").isZero();
        }
    }

    /** A sink of the test defaults (deleteAfterPublish) under a lease this instance just took. */
    private static RowSink sinkUnderLease(TestDatabase db) throws Exception {
        CdcSettings settings = TestSettings.of(new DatabaseLogin(db.jdbcUrl(), db.user(), Secret.of(db.password())),
                "sink_slot", "instance-a", Map.of());
        LeaseKeeper lease = new LeaseKeeper(db.dataSource(), CdcWiring.slotTerms(settings), settings.instanceId(),
                settings.timing().lease());
        long fence = lease.tryAcquire().orElseThrow().fence();
        // waits for the test's open transaction far longer than the test keeps it open, however busy the machine
        return new RowSink(db.dataSource(), CdcWiring.slotTerms(settings), settings.instanceId(), lease, () -> fence, e -> { },
                new CdcMetrics(new SimpleMeterRegistry(), "sink_slot"), Duration.ofMinutes(2));
    }

    /** One row inserted in {@code writer}'s open transaction: its seq and the transaction's 32-bit id. */
    private static long[] insertInOpenTransaction(Connection writer) throws Exception {
        try (Statement s = writer.createStatement(); ResultSet rs = s.executeQuery(
                "INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload) "
                        + "VALUES (gen_random_uuid(), 'order', '1', 'E', '{}') "
                        + "RETURNING seq, pg_current_xact_id()::text::numeric % 4294967296")) {
            rs.next();
            return new long[] {rs.getLong(1), rs.getLong(2)}; // the id in 32 bits, as logical decoding reports it
        }
    }
}
