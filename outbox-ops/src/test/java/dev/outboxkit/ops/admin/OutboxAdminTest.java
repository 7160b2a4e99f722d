package dev.outboxkit.ops.admin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.Sql;
import dev.outboxkit.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Timestamp;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** {@link OutboxAdmin} against real PostgreSQL: every operation, and the errors a caller meets. */
@ExtendWith(OutboxTestkitExtension.class)
class OutboxAdminTest {

    private static final Instant T0 = Instant.parse("2026-11-29T10:00:00Z");

    private static UUID id(int n) {
        return UUID.fromString(String.format("018f3a5e-7b2c-7d11-8a00-%012d", n));
    }

    @Test
    void statusCountsTheBacklogByTopicTheDeadLettersAndTheLeases(TestDatabase db) throws Exception {
        DataSource ds = db.dataSource();
        OutboxAdmin admin = OutboxAdmin.builder().outboxDatabase(ds, "public").build();
        Status empty = admin.status();
        assertThat(empty.backlog()).isZero();
        assertThat(empty.oldestUnpublishedAge()).isNull();
        assertThat(empty.backlogByTopic()).isEmpty();
        assertThat(empty.deadLetters()).isZero();
        assertThat(empty.leases()).isEmpty();

        db.exec("INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload, topic, created_at, published_at) VALUES "
                + "('" + id(1) + "', 'account', 'a1', 'Opened', '{}', NULL, now() - interval '90 seconds', NULL), "
                + "('" + id(2) + "', 'account', 'a2', 'Opened', '{}', NULL, now() - interval '10 seconds', NULL), "
                + "('" + id(3) + "', 'order', 'o1', 'Placed', '{}', 'orders.v2', now() - interval '30 seconds', NULL), "
                + "('" + id(4) + "', 'order', 'o2', 'Placed', '{}', 'orders.v2', now() - interval '1 hour', now())");
        parkDeadLetter(db, id(10), 5, "account", "Opened", "org.apache.kafka.common.errors.RecordTooLargeException", T0);
        db.exec("INSERT INTO outbox_relay_lease (lease_key, holder, fence, expires_at) VALUES "
                + "('poll/0', 'relay-a', 7, now() + interval '10 seconds'), "
                + "('poll/1', 'relay-a', 8, now() + interval '10 seconds'), "
                + "('poll/2', 'relay-b', 9, now() + interval '10 seconds'), "
                + "('poll/3', 'relay-gone', 3, now() - interval '5 seconds')");

        Status s = admin.status();
        assertThat(s.schema()).isEqualTo("public");
        assertThat(s.backlog()).as("published rows are not backlog").isEqualTo(3);
        assertThat(s.oldestUnpublishedAge()).isBetween(Duration.ofSeconds(89), Duration.ofSeconds(120));
        assertThat(s.backlogByTopic()).extracting(Status.Backlog::topic, Status.Backlog::aggregateType, Status.Backlog::events)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(null, "account", 2L),
                        org.assertj.core.groups.Tuple.tuple("orders.v2", "order", 1L));
        assertThat(s.backlogByTopic().get(1).oldestAge()).isBetween(Duration.ofSeconds(29), Duration.ofSeconds(60));
        assertThat(s.deadLetters()).isEqualTo(1);
        assertThat(s.leases()).extracting(Status.Lease::key).containsExactly("poll/0", "poll/1", "poll/2", "poll/3");
        assertThat(s.leases().get(2).fence()).isEqualTo(9);
        assertThat(s.leases().get(3).valid()).isFalse();
        assertThat(s.leases().get(3).expiresIn()).isNegative();
        assertThat(s.leases().get(0).expiresIn()).isBetween(Duration.ofSeconds(5), Duration.ofSeconds(10));
        assertThat(s.validLeasesByHolder()).containsExactly(java.util.Map.entry("relay-a", 2), java.util.Map.entry("relay-b", 1));
        assertThat(s.expiredLeases()).isEqualTo(1);
        assertThat((long) s.replicationSlots().size())
                .isEqualTo(db.count("SELECT count(*) FROM pg_replication_slots WHERE database = current_database() AND slot_type = 'logical'"));
    }

    @Test
    void aSlotShowsTheWalItRetainsAndItsLag(TestDatabase db) throws Exception {
        String slot = "status_slot_" + db.name();
        db.exec("SELECT pg_create_logical_replication_slot('" + slot + "', 'pgoutput')");
        try {
            // WAL written after the slot was created is held for it until a client confirms it
            db.exec("CREATE TABLE wal_filler AS SELECT g, repeat('x', 200) AS pad FROM generate_series(1, 20000) g");
            OutboxAdmin admin = OutboxAdmin.builder().outboxDatabase(db.dataSource(), "public").build();
            // Retained WAL counts to the server's write position. The test server commits without waiting for the
            // flush (synchronous_commit off), so the table's last WAL may still sit in the WAL buffers until the WAL
            // writer writes it (wal_writer_delay, 200 ms): wait for that, not for a fixed time.
            Status.ReplicationSlot s = await().atMost(Duration.ofSeconds(30)).until(() -> admin.status()
                            .replicationSlots().stream().filter(r -> r.name().equals(slot)).findFirst().orElseThrow(),
                    r -> r.retainedBytes() != null && r.retainedBytes() > 4_000_000L);
            assertThat(s.active()).isFalse();
            assertThat(s.retainedBytes()).as("the table's WAL at least").isGreaterThan(4_000_000L);
            assertThat(s.lagBytes()).isNotNull().isPositive();
        } finally {
            db.dropReplicationSlot(slot);
        }
    }

    @Test
    void deadLettersAreListedWithFiltersAndKeysetPagesWithoutThePayload(TestDatabase db) throws Exception {
        for (int i = 0; i < 5; i++) {
            parkDeadLetter(db, id(20 + i), 100 + i, i < 3 ? "account" : "order", i % 2 == 0 ? "Opened" : "Closed",
                    i == 4 ? "org.apache.kafka.common.errors.InvalidTopicException" : "org.apache.kafka.common.errors.RecordTooLargeException",
                    T0.plusSeconds(i));
        }
        OutboxAdmin admin = OutboxAdmin.builder().outboxDatabase(db.dataSource(), "public").build();

        List<UUID> seen = new ArrayList<>();
        DeadLetterPage page = admin.deadLetters(DeadLetterFilter.all(), 2, null);
        int pages = 1;
        seen.addAll(page.items().stream().map(DeadLetter::id).toList());
        while (page.hasMore()) {
            page = admin.deadLetters(DeadLetterFilter.all(), 2, page.next());
            seen.addAll(page.items().stream().map(DeadLetter::id).toList());
            pages++;
        }
        assertThat(pages).isEqualTo(3);
        assertThat(seen).containsExactly(id(20), id(21), id(22), id(23), id(24));

        DeadLetter first = admin.deadLetter(id(20)).orElseThrow();
        assertThat(first.seq()).isEqualTo(100);
        assertThat(first.aggregateType()).isEqualTo("account");
        assertThat(first.parkedAt()).isEqualTo(T0);
        assertThat(first.parkedBy()).isEqualTo("relay-1");
        assertThat(first.attempts()).isEqualTo(3);
        assertThat(first.payloadBytes()).as("octet length of the jsonb text").isEqualTo("{\"secret\": \"do-not-print\"}".length());
        assertThat(first.toString()).doesNotContain("do-not-print");
        assertThat(admin.deadLetter(id(99))).isEmpty();

        assertThat(ids(admin.deadLetters(DeadLetterFilter.all().withAggregateType("order"), 100, null)))
                .containsExactly(id(23), id(24));
        assertThat(ids(admin.deadLetters(DeadLetterFilter.all().withEventType("Closed"), 100, null)))
                .containsExactly(id(21), id(23));
        assertThat(ids(admin.deadLetters(DeadLetterFilter.all().withErrorClass("InvalidTopicException"), 100, null)))
                .as("simple class name").containsExactly(id(24));
        assertThat(ids(admin.deadLetters(DeadLetterFilter.all().withErrorClass("org.apache.kafka.common.errors.InvalidTopicException"), 100, null)))
                .as("full class name").containsExactly(id(24));
        assertThat(ids(admin.deadLetters(DeadLetterFilter.all().withErrorClass("TopicException"), 100, null)))
                .as("not a suffix match inside a name").isEmpty();
        assertThat(ids(admin.deadLetters(DeadLetterFilter.all().withParkedBetween(T0.plusSeconds(1), T0.plusSeconds(3)), 100, null)))
                .containsExactly(id(21), id(22));
        assertThat(ids(admin.deadLetters(DeadLetterFilter.ids(id(24), id(20), id(99)).withAggregateType("account"), 100, null)))
                .containsExactly(id(20));

        assertThatThrownBy(() -> admin.deadLetters(DeadLetterFilter.all(), 0, null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("limit");
        assertThatThrownBy(() -> admin.deadLetters(DeadLetterFilter.all(), OutboxAdmin.MAX_PAGE_SIZE + 1, null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("limit");
    }

    @Test
    void retryMovesRowsBackAtTheirSeqReportsUnknownIdsAndRefusesATakenSeq(TestDatabase db) throws Exception {
        // Identity values 1..3 handed out, so the seq 2 below is an earlier seq no new row can get.
        for (int i = 0; i < 3; i++) {
            db.exec("INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload) VALUES ('"
                    + UUID.randomUUID() + "', 'x', 'x', 'X', '{}')");
        }
        db.exec("DELETE FROM outbox_event");
        parkDeadLetter(db, id(30), 2, "account", "Opened", "E", T0);
        parkDeadLetter(db, id(31), 0, "account", "Opened", "E", T0.plusSeconds(1));  // a parked logical message
        parkDeadLetter(db, id(32), 3, "order", "Placed", "E", T0.plusSeconds(2));
        OutboxAdmin admin = OutboxAdmin.builder().outboxDatabase(db.dataSource(), "public").build();

        DeadLetterChange one = admin.retryDeadLetters(DeadLetterFilter.ids(id(30), id(99)), "alice@test");
        assertThat(one.action()).isEqualTo(DeadLetterChange.Action.RETRY);
        assertThat(one.rows()).containsExactly(new DeadLetterChange.Row(id(30), "account", "a-" + id(30), 2));
        assertThat(one.missing()).as("unknown id").containsExactly(id(99));
        assertThat(db.count("SELECT seq FROM outbox_event WHERE id = '" + id(30) + "'")).isEqualTo(2);
        assertThat(db.count("SELECT count(*) FROM outbox_dead_letter WHERE id = '" + id(30) + "'")).isZero();

        DeadLetterChange matching = admin.retryDeadLetters(DeadLetterFilter.all().withAggregateType("account"), "alice@test");
        assertThat(matching.rows()).extracting(DeadLetterChange.Row::id).containsExactly(id(31));
        assertThat(matching.rows().get(0).seq()).as("a parked message gets a new seq").isGreaterThan(3);
        assertThat(matching.missing()).isEmpty();

        // seq 3 taken in outbox_event (only possible by hand): refused, nothing moved.
        db.exec("INSERT INTO outbox_event (seq, id, aggregate_type, aggregate_id, event_type, payload) OVERRIDING SYSTEM VALUE "
                + "VALUES (3, '" + id(33) + "', 'order', 'c', 'Placed', '{}')");
        assertThatThrownBy(() -> admin.retryDeadLetters(DeadLetterFilter.all(), "alice@test"))
                .isInstanceOf(DeadLetterConflictException.class)
                .hasMessageContaining("nothing was moved")
                .satisfies(e -> assertThat(((DeadLetterConflictException) e).databaseMessage()).contains("(seq)=(3)"));
        assertThat(db.count("SELECT count(*) FROM outbox_dead_letter WHERE id = '" + id(32) + "'")).isEqualTo(1);

        assertThatThrownBy(() -> admin.retryDeadLetters(DeadLetterFilter.all(), " "))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("operator");
        assertThatThrownBy(() -> DeadLetterFilter.ids(List.of()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("DeadLetterFilter.all()");
    }

    @Test
    void discardDeletesOnlyTheMatchingRows(TestDatabase db) throws Exception {
        parkDeadLetter(db, id(40), 4, "account", "Opened", "E", T0);
        parkDeadLetter(db, id(41), 5, "order", "Placed", "E", T0);
        OutboxAdmin admin = OutboxAdmin.builder().outboxDatabase(db.dataSource(), "public").build();

        DeadLetterChange gone = admin.discardDeadLetters(DeadLetterFilter.ids(id(41), id(98)), "topic deleted", "bob@test");
        assertThat(gone.action()).isEqualTo(DeadLetterChange.Action.DISCARD);
        assertThat(gone.rows()).containsExactly(new DeadLetterChange.Row(id(41), "order", "a-" + id(41), 5));
        assertThat(gone.missing()).containsExactly(id(98));
        assertThat(db.count("SELECT count(*) FROM outbox_dead_letter")).isEqualTo(1);
        assertThat(db.count("SELECT count(*) FROM outbox_event")).as("a discard moves nothing").isZero();

        assertThat(admin.discardDeadLetters(DeadLetterFilter.all().withEventType("Nope"), null, "bob@test").rows()).isEmpty();
        assertThat(admin.discardDeadLetters(DeadLetterFilter.all(), null, "bob@test").rows()).extracting(DeadLetterChange.Row::id)
                .containsExactly(id(40));
        assertThat(db.count("SELECT count(*) FROM outbox_dead_letter")).isZero();
    }

    @Test
    void replayClearsPublishedAtOfKeptRowsAndSaysWhereTheOthersAre(TestDatabase db) throws Exception {
        db.exec("INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload, created_at, published_at, attempts) VALUES "
                + "('" + id(50) + "', 'account', 'a1', 'Opened', '{}', '2026-11-29T10:00:00Z', now(), 2), "
                + "('" + id(51) + "', 'account', 'a2', 'Opened', '{}', '2026-11-01T10:00:00Z', now(), 0), "
                + "('" + id(52) + "', 'account', 'a3', 'Opened', '{}', '2026-11-29T11:00:00Z', NULL, 0)");
        parkDeadLetter(db, id(53), 9, "account", "Opened", "E", T0);
        // the clock ends an open range: 2026-11-29T12:00Z
        OutboxAdmin admin = OutboxAdmin.builder().outboxDatabase(db.dataSource(), "public")
                .clock(Clock.fixed(Instant.parse("2026-11-29T12:00:00Z"), ZoneOffset.UTC)).build();

        ReplayResult dry = admin.replay(ReplaySelection.createdBetween(Instant.parse("2026-11-29T00:00:00Z"), null), true, "carol@test");
        assertThat(dry.dryRun()).isTrue();
        assertThat(dry.replayed()).containsExactly(new ReplayResult.Event(id(50), "account", "a1"));
        assertThat(db.count("SELECT count(*) FROM outbox_event WHERE published_at IS NULL")).as("a dry run changes nothing").isEqualTo(1);

        ReplayResult range = admin.replay(ReplaySelection.createdBetween(Instant.parse("2026-11-29T00:00:00Z"), null), false, "carol@test");
        assertThat(range.replayed()).extracting(ReplayResult.Event::id).containsExactly(id(50));
        assertThat(db.count("SELECT count(*) FROM outbox_event WHERE id = '" + id(50) + "' AND published_at IS NULL AND attempts = 0"))
                .isEqualTo(1);
        assertThat(admin.replay(ReplaySelection.createdBetween(T0, T0), false, "carol@test").replayed())
                .as("an empty range selects nothing").isEmpty();

        ReplayResult byId = admin.replay(ReplaySelection.ids(List.of(id(51), id(52), id(53), id(54))), false, "carol@test");
        assertThat(byId.replayed()).extracting(ReplayResult.Event::id).containsExactly(id(51));
        assertThat(byId.notReplayed()).containsExactly(
                java.util.Map.entry(id(52), ReplayResult.NotReplayed.UNPUBLISHED),
                java.util.Map.entry(id(53), ReplayResult.NotReplayed.PARKED),
                java.util.Map.entry(id(54), ReplayResult.NotReplayed.NOT_KEPT));
        assertThat(db.count("SELECT count(*) FROM outbox_event WHERE published_at IS NULL")).isEqualTo(3);

        assertThatThrownBy(() -> ReplaySelection.createdBetween(null, T0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("from");
    }

    @Test
    void aWrongSchemaIsRefusedNamingTheSchemaAndTheFix(TestDatabase db) throws Exception {
        assertThatThrownBy(() -> OutboxAdmin.builder().outboxDatabase(db.dataSource(), "public; drop table x").build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("schema").hasMessageContaining("not a legal identifier");
        assertThatThrownBy(() -> OutboxAdmin.builder().build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("dataSource is required");

        OutboxAdmin missing = OutboxAdmin.builder().outboxDatabase(db.dataSource(), "no_such_schema").build();
        assertThatThrownBy(missing::status).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("schema 'no_such_schema' does not exist")
                .hasMessageContaining("outbox migrate --schema no_such_schema");

        db.exec("CREATE SCHEMA empty_one");
        OutboxAdmin empty = OutboxAdmin.builder().outboxDatabase(db.dataSource(), "empty_one").build();
        for (ThrowingCall call : List.<ThrowingCall>of(empty::status, () -> empty.deadLetters(DeadLetterFilter.all(), 10, null),
                () -> empty.retryDeadLetters(DeadLetterFilter.all(), "op"), () -> empty.discardDeadLetters(DeadLetterFilter.all(), null, "op"),
                () -> empty.replay(ReplaySelection.ids(List.of(id(1))), false, "op"))) {
            assertThatThrownBy(call::run).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("schema 'empty_one' does not hold the outboxkit tables")
                    .hasMessageContaining("outbox migrate --schema empty_one");
        }
        // the tables in public are untouched and the pool still works
        assertThat(OutboxAdmin.builder().outboxDatabase(db.dataSource(), "public").build().status().backlog()).isZero();
    }

    @Test
    void aFailedRetryRollsBackAndLeavesTheConnectionUsable(TestDatabase db) throws Exception {
        parkDeadLetter(db, id(60), 7, "account", "Opened", "E", T0);
        db.exec("INSERT INTO outbox_event (seq, id, aggregate_type, aggregate_id, event_type, payload) OVERRIDING SYSTEM VALUE "
                + "VALUES (7, '" + id(61) + "', 'account', 'c', 'Opened', '{}')");
        try (var pool = db.newPool(1)) {
            OutboxAdmin admin = OutboxAdmin.builder().outboxDatabase(pool, "public").build();
            assertThatThrownBy(() -> admin.retryDeadLetters(DeadLetterFilter.ids(id(60)), "op"))
                    .isInstanceOf(DeadLetterConflictException.class);
            // the one connection went back with autocommit restored: a later operation sees the row still parked
            assertThat(admin.deadLetter(id(60))).isPresent();
            try (Connection c = pool.getConnection()) {
                assertThat(c.getAutoCommit()).isTrue();
            }
            assertThat(Sql.count(pool, "SELECT count(*) FROM outbox_event WHERE id = '" + id(60) + "'")).isZero();
        }
    }

    @Test
    void retryAndDiscardCommitTogetherWithTheirJournalEntry(TestDatabase db) throws Exception {
        parkDeadLetter(db, id(70), 10, "account", "Opened", "E", T0);
        parkDeadLetter(db, id(71), 11, "order", "Placed", "E", T0);
        parkDeadLetter(db, id(72), 12, "order", "Placed", "E", T0);
        OutboxAdmin admin = OutboxAdmin.builder().outboxDatabase(db.dataSource(), "public").build();

        admin.retryDeadLetters(DeadLetterFilter.ids(id(70)), "alice@console");
        admin.discardDeadLetters(DeadLetterFilter.ids(id(71)), "topic deleted", "bob@console");
        List<JournalEntry> actions = admin.journal(10, JournalEntry.Kind.DEAD_LETTER_RETRY, JournalEntry.Kind.DEAD_LETTER_DISCARD);
        assertThat(actions).extracting(JournalEntry::kind).containsExactly(JournalEntry.Kind.DEAD_LETTER_DISCARD,
                JournalEntry.Kind.DEAD_LETTER_RETRY);
        assertThat(actions.get(0).actor()).isEqualTo("bob@console");
        assertThat(actions.get(0).summary()).isEqualTo("discarded 1 dead letter(s) of dead letters [" + id(71) + "]; reason: topic deleted");
        assertThat(actions.get(0).detail()).containsEntry("count", 1).containsEntry("reason", "topic deleted")
                .containsEntry("ids", List.of(id(71).toString()));
        assertThat(actions.get(1).actor()).isEqualTo("alice@console");
        assertThat(actions.get(1).outcome()).isEqualTo(JournalEntry.Outcome.SUCCESS);
        assertThat(admin.journal(10, JournalEntry.Kind.RECONCILE)).isEmpty();
        assertThat(admin.journal(1)).as("every kind, the latest first").extracting(JournalEntry::kind)
                .containsExactly(JournalEntry.Kind.DEAD_LETTER_DISCARD);
        assertThat(db.count("SELECT count(*) FROM outbox_ops_journal WHERE detail::text LIKE '%do-not-print%'"))
                .as("never a payload").isZero();

        // The entry cannot be written: the retry fails and moves nothing (one transaction); a failure entry of its own,
        // written after the rollback, says so.
        db.exec("ALTER TABLE outbox_ops_journal ADD CONSTRAINT no_retries CHECK (kind <> 'dead-letter-retry' OR outcome = 'failure') NOT VALID");
        assertThatThrownBy(() -> admin.retryDeadLetters(DeadLetterFilter.ids(id(72)), "alice@console"))
                .isInstanceOf(java.sql.SQLException.class).hasMessageContaining("no_retries");
        assertThat(admin.deadLetter(id(72))).as("still parked").isPresent();
        assertThat(db.count("SELECT count(*) FROM outbox_event WHERE id = '" + id(72) + "'")).isZero();
        JournalEntry failed = admin.journal(1, JournalEntry.Kind.DEAD_LETTER_RETRY).get(0);
        assertThat(failed.outcome()).isEqualTo(JournalEntry.Outcome.FAILURE);
        assertThat(failed.detail()).containsEntry("sqlState", "23514").containsEntry("selection", "dead letters [" + id(72) + "]");
        assertThat(failed.detail().get("message")).as("the server's detail (the failing row) is left out")
                .asString().contains("no_retries").doesNotContain("Failing row").doesNotContain("Detail");

        // Without the journal (a schema older than version 12) actions go on; reading it names the fix.
        db.exec("DROP TABLE outbox_ops_journal");
        OutboxAdmin older = OutboxAdmin.builder().outboxDatabase(db.dataSource(), "public").build();
        assertThat(older.retryDeadLetters(DeadLetterFilter.ids(id(72)), "alice@console").rows()).hasSize(1);
        assertThatThrownBy(() -> older.journal(5)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("schema version 12").hasMessageContaining("outbox migrate --schema public");
        assertThatThrownBy(() -> admin.journal(0)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("limit");
    }

    @FunctionalInterface
    private interface ThrowingCall {
        void run() throws Exception;
    }

    private static List<UUID> ids(DeadLetterPage page) {
        return page.items().stream().map(DeadLetter::id).toList();
    }

    private static void parkDeadLetter(TestDatabase db, UUID id, long seq, String aggregateType, String eventType, String errorClass,
                                       Instant parkedAt) throws Exception {
        try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement(
                "INSERT INTO outbox_dead_letter (id, seq, aggregate_type, aggregate_id, event_type, payload, headers, created_at,"
                        + " error_class, error_message, attempts, parked_by, parked_at)"
                        + " VALUES (?, ?, ?, ?, ?, '{\"secret\": \"do-not-print\"}', '{}', now(), ?, 'refused', 3, 'relay-1', ?)")) {
            ps.setObject(1, id);
            ps.setLong(2, seq);
            ps.setString(3, aggregateType);
            ps.setString(4, "a-" + id);
            ps.setString(5, eventType);
            ps.setString(6, errorClass);
            ps.setTimestamp(7, Timestamp.from(parkedAt));
            ps.executeUpdate();
        }
    }
}
