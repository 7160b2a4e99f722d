package dev.outboxkit.consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxkit.consumer.internal.InboxSql;
import dev.outboxkit.core.EventIds;
import dev.outboxkit.core.InvalidEventException;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(OutboxTestkitExtension.class)
class InboxTest {

    @Test
    void appliesOnceAndSkipsTheRepeat(TestDatabase db) throws Exception {
        UUID id = EventIds.next();
        AtomicInteger runs = new AtomicInteger();
        try (Connection c = db.connect()) {
            assertThat(Inbox.applyOnce(c, "public", "billing", id, tx -> runs.incrementAndGet())).isTrue();
            assertThat(Inbox.applyOnce(c, "public", "billing", id, tx -> runs.incrementAndGet())).isFalse();
            // another group applies the same event on its own
            assertThat(Inbox.applyOnce(c, "public", "shipping", id, tx -> runs.incrementAndGet())).isTrue();
            assertThat(c.getAutoCommit()).as("auto-commit restored").isTrue();
        }
        assertThat(runs.get()).isEqualTo(2);
    }

    @Test
    void aFailingEffectRecordsNothingAndCanBeRetried(TestDatabase db) throws Exception {
        UUID id = EventIds.next();
        try (Connection c = db.connect()) {
            c.createStatement().execute("CREATE TABLE counter (n int)");
            assertThatThrownBy(() -> Inbox.applyOnce(c, "public", "billing", id, tx -> {
                tx.createStatement().execute("INSERT INTO counter VALUES (1)");
                throw new IllegalStateException("downstream said no");
            })).hasMessage("downstream said no");
            assertThat(db.count("SELECT count(*) FROM processed_event")).isZero();
            assertThat(db.count("SELECT count(*) FROM counter")).isZero();
            assertThat(Inbox.applyOnce(c, "public", "billing", id,
                    tx -> tx.createStatement().execute("INSERT INTO counter VALUES (2)"))).isTrue();
        }
        assertThat(db.count("SELECT sum(n) FROM counter")).isEqualTo(2);
    }

    @Test
    void joinsTheCallersTransactionUnderASavepoint(TestDatabase db) throws Exception {
        UUID failing = EventIds.next();
        UUID ok = EventIds.next();
        try (Connection c = db.connect()) {
            c.createStatement().execute("CREATE TABLE counter (n int)");
            c.setAutoCommit(false);
            assertThatThrownBy(() -> Inbox.applyOnce(c, "public", "billing", failing, tx -> {
                tx.createStatement().execute("INSERT INTO counter VALUES (100)");
                throw new IllegalStateException("boom");
            })).hasMessage("boom");
            // the caller's transaction is still usable: the failure rolled back to the savepoint only
            assertThat(Inbox.applyOnce(c, "public", "billing", ok,
                    tx -> tx.createStatement().execute("INSERT INTO counter VALUES (1)"))).isTrue();
            assertThat(db.count("SELECT count(*) FROM processed_event")).as("not committed yet").isZero();
            c.commit();
        }
        assertThat(db.count("SELECT sum(n) FROM counter")).isEqualTo(1);
        assertThat(db.count("SELECT count(*) FROM processed_event WHERE event_id = '" + ok + "'")).isOne();
    }

    @Test
    void theRecordFormReadsTheIdHeaderAndKeepsTheCoordinates(TestDatabase db) throws Exception {
        UUID id = EventIds.next();
        ConsumerRecord<byte[], byte[]> record = new ConsumerRecord<>("orders", 3, 42L, null, null);
        record.headers().add("id", id.toString().getBytes(StandardCharsets.UTF_8));
        try (Connection c = db.connect()) {
            assertThat(Inbox.applyOnce(c, "public", "g", record, tx -> { })).isTrue();
            assertThat(Inbox.applyOnce(c, "public", "g", record, tx -> { })).isFalse();
            ConsumerRecord<byte[], byte[]> noId = new ConsumerRecord<>("orders", 3, 43L, null, null);
            assertThatThrownBy(() -> Inbox.applyOnce(c, "public", "g", noId, tx -> { }))
                    .isInstanceOf(InvalidEventException.class).hasMessageContaining("no 'id' header");
        }
        assertThat(db.count("SELECT kafka_offset FROM processed_event WHERE topic = 'orders' "
                + "AND kafka_partition = 3")).isEqualTo(42);
    }

    @Test
    void hostileSchemaNamesAreRefusedBeforeAnySql(TestDatabase db) throws Exception {
        try (Connection c = db.connect()) {
            assertThatThrownBy(() -> Inbox.applyOnce(c, "x\"; drop table processed_event; --", "g", EventIds.next(), tx -> { }))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("is not a legal identifier");
        }
        assertThat(db.count("SELECT count(*) FROM processed_event")).isZero();
    }

    @Test
    void oneStatementReturnsEachNewIdOnceEvenWhenABatchRepeatsIt(TestDatabase db) throws Exception {
        InboxSql sql = new InboxSql("public");
        for (boolean speculative : new boolean[] {false, true}) {
            String group = "g-" + speculative;
            UUID a = EventIds.next();
            UUID b = EventIds.next();
            UUID c = EventIds.next();
            try (Connection conn = db.connect()) {
                conn.setAutoCommit(false);
                Set<UUID> first = sql.insert(conn, group, rows(a, b, a), Instant.now(), speculative);
                assertThat(first).containsExactlyInAnyOrder(a, b);
                Set<UUID> second = sql.insert(conn, group, rows(b, c), Instant.now(), speculative);
                assertThat(second).containsExactly(c);
                assertThat(sql.existing(conn, group, List.of(a, c, EventIds.next()))).containsExactlyInAnyOrder(a, c);
                conn.commit();
            }
            assertThat(db.count("SELECT kafka_offset FROM processed_event WHERE event_id = '" + a + "'"))
                    .as("the first delivery's coordinates").isZero();
        }
    }

    @Test
    void aConcurrentTransactionWithTheSameIdWaitsAndThenSkipsIt(TestDatabase db) throws Exception {
        // a zombie member and the partition's new owner insert the same ids: the second waits for
        // the first to commit; the batch insert then asks for a retry, the speculative one skips
        InboxSql sql = new InboxSql("public");
        for (boolean speculative : new boolean[] {false, true}) {
            UUID id = EventIds.next();
            try (Connection first = db.connect(); Connection second = db.connect()) {
                first.setAutoCommit(false);
                second.setAutoCommit(false);
                assertThat(sql.insert(first, "g", rows(id), Instant.now(), speculative)).containsExactly(id);
                var secondResult = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                    try {
                        return sql.insert(second, "g", rows(id), Instant.now(), speculative);
                    } catch (Exception e) {
                        throw new java.util.concurrent.CompletionException(e);
                    }
                });
                org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(60)).until(() -> waiting(db) == 1);
                assertThat(secondResult).isNotDone();
                first.commit();
                if (speculative) {
                    assertThat(secondResult.get(60, java.util.concurrent.TimeUnit.SECONDS)).isEmpty();
                } else {
                    assertThatThrownBy(() -> secondResult.get(60, java.util.concurrent.TimeUnit.SECONDS))
                            .hasCauseInstanceOf(InboxSql.InboxConflict.class);
                    second.rollback();
                    assertThat(sql.insert(second, "g", rows(id), Instant.now(), false)).as("the retry skips it").isEmpty();
                }
                second.commit();
            }
        }
    }

    private static long waiting(TestDatabase db) throws Exception {
        try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'");
             var rs = ps.executeQuery()) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static List<InboxSql.Row> rows(UUID... ids) {
        List<InboxSql.Row> rows = new ArrayList<>();
        long offset = 0;
        for (UUID id : ids) {
            rows.add(new InboxSql.Row(id, "t", 0, offset++));
        }
        return rows;
    }
}
