package dev.outboxkit.ops.admin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxkit.ops.reconcile.IntentLedger;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The operator console's questions against real PostgreSQL: where an event is (in each state), dead letters by reason
 * (and acting on exactly one reason), an idempotency key's state, tables a deployment does not have, and a status
 * that counts or estimates.
 */
@ExtendWith(OutboxTestkitExtension.class)
class OutboxAdminConsoleTest {

    private static UUID id(int n) {
        return UUID.fromString(String.format("018f3a5e-7b2c-7d11-8b00-%012d", n));
    }

    private static OutboxAdmin admin(TestDatabase db) {
        return OutboxAdmin.builder().outboxDatabase(db.dataSource(), "public").build();
    }

    private static void event(TestDatabase db, UUID id, String aggregateId, String topic, boolean published) throws Exception {
        db.execute("INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload, topic, attempts, created_at,"
                + " published_at) VALUES (?, 'order', ?, 'Placed', '{\"n\": 1}', ?, 2, now() - interval '90 seconds', "
                + (published ? "now()" : "NULL") + ")", id, aggregateId, topic);
    }

    @Test
    void relayMembersListEveryInstanceOldestFirstAndTellTheExpiredOnes(TestDatabase db) throws Exception {
        assertThat(admin(db).relayMembers()).isEmpty();
        db.exec("INSERT INTO outbox_relay_member (member_id, partitions, started_at, heartbeat_at, expires_at) VALUES"
                + " ('relay-b', 8, now() - interval '1 hour', now() - interval '3 seconds', now() + interval '27 seconds'),"
                + " ('relay-a', 8, now() - interval '2 hours', now() - interval '5 minutes', now() - interval '4 minutes')");
        List<RelayMember> members = admin(db).relayMembers();
        assertThat(members).extracting(RelayMember::id).containsExactly("relay-a", "relay-b");
        assertThat(members).extracting(RelayMember::alive).containsExactly(false, true);
        assertThat(members).extracting(RelayMember::partitions).containsOnly(8);
        assertThat(members.get(1).heartbeatAge()).isBetween(Duration.ofSeconds(2), Duration.ofSeconds(60));
        assertThat(members.get(0).startedAt()).isBefore(members.get(1).startedAt());
    }

    @Test
    void relayReportsListEveryInstanceOfBothRelaysAliveFirstAndNameTheMigrationWithoutTheirTable(TestDatabase db)
            throws Exception {
        assertThat(admin(db).relayReports()).isEmpty();
        db.exec("INSERT INTO outbox_relay_report (instance_id, relay, host, started_at, reported_at, expires_at, ready, problem,"
                + " published, last_published_at) VALUES"
                + " ('cdc-standby', 'cdc', 'h2', now() - interval '1 hour', now() - interval '1 second',"
                + " now() + interval '14 seconds', true, NULL, 0, NULL),"
                + " ('poll-a', 'poll', 'h1', now() - interval '2 hours', now() - interval '2 seconds',"
                + " now() + interval '13 seconds', false, 'Kafka not reachable', 42, now() - interval '90 seconds'),"
                + " ('poll-crashed', 'poll', 'h3', now() - interval '3 hours', now() - interval '10 minutes',"
                + " now() - interval '9 minutes', true, NULL, 7, now() - interval '11 minutes')");
        List<RelayReport> reports = admin(db).relayReports();
        assertThat(reports).extracting(RelayReport::instanceId).as("alive first, then by relay and start")
                .containsExactly("cdc-standby", "poll-a", "poll-crashed");
        assertThat(reports).extracting(RelayReport::alive).containsExactly(true, true, false);
        assertThat(reports).extracting(RelayReport::relay).containsExactly("cdc", "poll", "poll");
        RelayReport standby = reports.get(0);
        assertThat(standby.ready()).isTrue();
        assertThat(standby.problem()).isNull();
        assertThat(standby.published()).isZero();
        assertThat(standby.lastPublishedAge()).as("never published").isNull();
        assertThat(standby.host()).isEqualTo("h2");
        RelayReport notReady = reports.get(1);
        assertThat(notReady.ready()).isFalse();
        assertThat(notReady.problem()).isEqualTo("Kafka not reachable");
        assertThat(notReady.published()).isEqualTo(42);
        assertThat(notReady.lastPublishedAge()).isBetween(Duration.ofSeconds(89), Duration.ofSeconds(150));
        assertThat(notReady.reportAge()).isBetween(Duration.ofSeconds(1), Duration.ofSeconds(60));
        assertThat(notReady.startedAt()).isBefore(standby.startedAt());

        // A schema older than version 13 has no reports: reading them names the fix.
        db.exec("DROP TABLE outbox_relay_report");
        assertThatThrownBy(() -> admin(db).relayReports()).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("schema version 13").hasMessageContaining("outbox migrate --schema public");
    }

    @Test
    void theBacklogIsSplitAsTheLivePollingRelaysSplitIt(TestDatabase db) throws Exception {
        for (int i = 0; i < 12; i++) {
            event(db, id(100 + i), "o-" + (i % 5), null, i == 11);
        }
        assertThat(admin(db).backlogByPartition()).as("no live polling relay: no partitions").isEmpty();
        db.exec("INSERT INTO outbox_relay_member (member_id, partitions, expires_at) VALUES ('relay-a', 3, now() + interval '1 minute'),"
                + " ('relay-gone', 7, now() - interval '1 minute')");
        List<PartitionBacklog> split = admin(db).backlogByPartition();
        List<String> expected = db.strings("SELECT k || '=' || n FROM (SELECT 'poll/' || ((hashtext(aggregate_type || '/' ||"
                + " aggregate_id) & 2147483647) % 3) AS k, count(*) AS n FROM outbox_event WHERE published_at IS NULL GROUP BY 1) x"
                + " ORDER BY k");
        assertThat(split).extracting(b -> b.leaseKey() + "=" + b.events()).as("the live member's count, 3, not the gone one's")
                .containsExactlyElementsOf(expected);
        assertThat(split.stream().mapToLong(PartitionBacklog::events).sum()).as("the published row is not backlog").isEqualTo(11);
        assertThat(split).allSatisfy(b -> assertThat(b.oldestAge()).isBetween(Duration.ofSeconds(80), Duration.ofMinutes(5)));

        Overview overview = admin(db).overview();
        assertThat(overview.backlogByPartition()).as("the overview splits the head in the same pass as it counts it")
                .extracting(b -> b.leaseKey() + "=" + b.events()).containsExactlyElementsOf(expected);
        assertThat(overview.members()).extracting(RelayMember::id).containsExactlyInAnyOrder("relay-a", "relay-gone");
        Status status = admin(db).status();
        assertThat(overview.status().backlog()).isEqualTo(status.backlog()).isEqualTo(11);
        assertThat(overview.status().backlogByTopic()).extracting(Status.Backlog::topic, Status.Backlog::aggregateType,
                Status.Backlog::events).containsExactlyElementsOf(status.backlogByTopic().stream()
                .map(b -> org.assertj.core.groups.Tuple.tuple(b.topic(), b.aggregateType(), b.events())).toList());
        assertThat(overview.status().oldestUnpublishedAge()).isBetween(Duration.ofSeconds(80), Duration.ofMinutes(5));

        assertThat(overview.reportsKept()).isTrue();
        assertThat(overview.reports()).isEmpty();
        db.exec("INSERT INTO outbox_relay_report (instance_id, relay, started_at, reported_at, expires_at, ready, published)"
                + " VALUES ('cdc-1', 'cdc', now(), now(), now() + interval '15 seconds', true, 0)");
        assertThat(admin(db).overview().reports()).extracting(RelayReport::instanceId).containsExactly("cdc-1");

        db.exec("UPDATE outbox_relay_member SET expires_at = now() - interval '1 second'");
        assertThat(admin(db).overview().backlogByPartition()).as("no live polling relay: no partitions").isEmpty();
        assertThat(admin(db).overview().status().backlog()).isEqualTo(11);
        db.exec("DROP TABLE outbox_relay_report");
        Overview older = admin(db).overview();
        assertThat(older.reportsKept()).as("a schema older than version 13").isFalse();
        assertThat(older.reports()).isEmpty();
    }

    private static void reconcileRun(TestDatabase db, Instant since, Instant until, String outcome, long phantoms,
                                     String findings) throws Exception {
        db.execute("INSERT INTO outbox_ops_journal (kind, started_at, finished_at, actor, outcome, summary, detail) VALUES"
                + " ('reconcile', ?, ?, 'outbox-cli ops@batch-1', ?, 'a run', ?::jsonb)", java.sql.Timestamp.from(until),
                java.sql.Timestamp.from(until.plusSeconds(1)), outcome, "{\"since\": \"" + since + "\", \"until\": \""
                + until + "\", \"counts\": {\"lost\": 0, \"phantom\": " + phantoms + "}, \"findings\": [" + findings + "]}");
    }

    @Test
    void anEventSaysWhatTheNewestReconciliationThatLookedAtItFound(TestDatabase db) throws Exception {
        new IntentLedger(db.dataSource(), "public").enable();
        event(db, id(20), "o-20", null, false);
        event(db, id(21), "o-21", null, false);
        OutboxAdmin admin = admin(db);
        assertThat(admin.traceEvent(id(20)).reconciled()).as("no run yet").isEmpty();

        Instant now = Instant.now();
        reconcileRun(db, now.minus(Duration.ofHours(2)), now.minus(Duration.ofHours(1)), "success", 0, "");
        assertThat(admin.traceEvent(id(20)).reconciled()).as("a run whose window ended before the event was written").isEmpty();

        reconcileRun(db, now.minus(Duration.ofHours(1)), now.plusSeconds(60), "success", 2,
                "{\"kind\": \"phantom\", \"where\": \"billing\", \"subject\": \"" + id(21) + "\", \"eventId\": \"" + id(21) + "\"}");
        EventTrace.Reconciliation named = admin.traceEvent(id(21)).reconciled().orElseThrow();
        assertThat(named.verdict()).isEqualTo(EventTrace.Reconciliation.Verdict.FINDING);
        assertThat(named.findings()).containsExactly("phantom");
        assertThat(named.actor()).isEqualTo("outbox-cli ops@batch-1");
        assertThat(admin.traceEvent(id(20)).reconciled().orElseThrow().verdict()).as("two findings, one listed, not this one")
                .isEqualTo(EventTrace.Reconciliation.Verdict.NOT_LISTED);

        reconcileRun(db, now.minus(Duration.ofHours(1)), now.plusSeconds(120), "failure", 0, "");
        reconcileRun(db, now.minus(Duration.ofHours(1)), now.plusSeconds(180), "success", 0, "");
        EventTrace.Reconciliation clean = admin.traceEvent(id(20)).reconciled().orElseThrow();
        assertThat(clean.verdict()).as("the newest successful run covers it and found nothing").isEqualTo(
                EventTrace.Reconciliation.Verdict.CLEAN);
        assertThat(clean.until()).isEqualTo(now.plusSeconds(180));
    }

    @Test
    void aPayloadIsReadByItsHeadOnlyFromTheOutboxOrTheDeadLetter(TestDatabase db) throws Exception {
        OutboxAdmin admin = admin(db);
        UUID big = id(11);
        db.execute("INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload) VALUES (?, 'order', 'o',"
                + " 'Placed', jsonb_build_object('note', repeat('x', 5000)))", big);
        EventPayload head = admin.eventPayload(big, 100, "test").orElseThrow();
        assertThat(head.table()).isEqualTo("outbox_event");
        assertThat(head.json()).isTrue();
        assertThat(head.head()).hasSize(100);
        assertThat(head.size()).isGreaterThan(5000);
        assertThat(head.truncated()).isTrue();
        assertThat(head.text()).startsWith("{\"note\": \"xxx");
        assertThat(admin.eventPayload(big, 1 << 20, "test").orElseThrow().truncated()).isFalse();

        UUID parked = id(12);
        db.execute("INSERT INTO outbox_dead_letter (id, seq, aggregate_type, aggregate_id, event_type, payload_bytes, content_type,"
                + " headers, created_at, error_class, error_message, attempts, parked_by) VALUES (?, 0, 'doc', 'd', 'Scanned',"
                + " '\\x00ff10', 'application/octet-stream', '{}', now(), 'E', 'm', 1, 'relay-1')", parked);
        EventPayload bytes = admin.eventPayload(parked, 100, "test").orElseThrow();
        assertThat(bytes.table()).isEqualTo("outbox_dead_letter");
        assertThat(bytes.contentType()).isEqualTo("application/octet-stream");
        assertThat(bytes.head()).containsExactly(0x00, 0xff, 0x10);
        assertThat(bytes.truncated()).isFalse();

        assertThat(admin.eventPayload(id(13), 100, "test")).isEmpty();
        assertThatThrownBy(() -> admin.eventPayload(big, 0, "test")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("maxBytes");
    }

    @Test
    void aPendingEventSaysItsPartitionLeaseAndHolder(TestDatabase db) throws Exception {
        OutboxAdmin admin = admin(db);
        event(db, id(1), "o-1", "orders.v2", false);
        EventTrace none = admin.traceEvent(id(1));
        assertThat(none.inOutbox()).get().satisfies(p -> {
            assertThat(p.leaseKey()).as("no live polling relay: no partition count to compute it with").isNull();
            assertThat(p.leaseHolder()).isNull();
        });

        db.exec("INSERT INTO outbox_relay_member (member_id, partitions, expires_at) VALUES ('relay-a', 4, now() + interval '1 minute')",
                "INSERT INTO outbox_relay_lease (lease_key, holder, fence, expires_at) SELECT 'poll/' || p, 'relay-a', p + 1,"
                        + " now() + interval '1 minute' FROM generate_series(0, 3) p");
        String expectedKey = db.strings("SELECT 'poll/' || ((hashtext('order/o-1') & 2147483647) % 4)").get(0);
        EventTrace t = admin.traceEvent(id(1));
        assertThat(t.found()).isTrue();
        assertThat(t.deadLetter()).isEmpty();
        assertThat(t.applications()).isEmpty();
        assertThat(t.intent()).as("the ledger is off by default").isEmpty();
        EventTrace.Pending p = t.inOutbox().orElseThrow();
        assertThat(p.seq()).isPositive();
        assertThat(p.aggregateType()).isEqualTo("order");
        assertThat(p.aggregateId()).isEqualTo("o-1");
        assertThat(p.eventType()).isEqualTo("Placed");
        assertThat(p.topic()).isEqualTo("orders.v2");
        assertThat(p.attempts()).isEqualTo(2);
        assertThat(p.published()).isFalse();
        assertThat(p.age()).isBetween(Duration.ofSeconds(89), Duration.ofSeconds(150));
        assertThat(p.leaseKey()).isEqualTo(expectedKey);
        assertThat(p.leaseHolder()).isEqualTo("relay-a");

        db.exec("UPDATE outbox_relay_lease SET expires_at = now() - interval '1 second'");
        assertThat(admin.traceEvent(id(1)).inOutbox().orElseThrow().leaseHolder()).as("an expired lease has no holder").isNull();
    }

    @Test
    void aMarkedPublishedEventShowsWhenItWasPublished(TestDatabase db) throws Exception {
        event(db, id(2), "o-2", null, true);
        EventTrace.Pending p = admin(db).traceEvent(id(2)).inOutbox().orElseThrow();
        assertThat(p.published()).isTrue();
        assertThat(p.publishedAt()).isBetween(Instant.now().minusSeconds(60), Instant.now().plusSeconds(60));
        assertThat(p.topic()).isNull();
    }

    @Test
    void aDeadLetteredEventShowsWhyAndByWhom(TestDatabase db) throws Exception {
        park(db, id(3), 7, "org.apache.kafka.common.errors.RecordTooLargeException", "The message is 2000000 bytes");
        EventTrace t = admin(db).traceEvent(id(3));
        assertThat(t.inOutbox()).isEmpty();
        DeadLetter d = t.deadLetter().orElseThrow();
        assertThat(d.errorMessage()).isEqualTo("The message is 2000000 bytes");
        assertThat(d.parkedBy()).isEqualTo("relay-1");
        assertThat(d.attempts()).isEqualTo(3);
    }

    @Test
    void theTraceIdIsTheWritersFromTheOutboxRowElseTheDeadLetterAndNeverAMalformedOne(TestDatabase db) throws Exception {
        OutboxAdmin admin = admin(db);
        String traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
        event(db, id(30), "o-30", null, false);
        assertThat(admin.traceEvent(id(30)).traceId()).as("no traceparent header").isNull();
        db.execute("UPDATE outbox_event SET headers = jsonb_build_object('traceparent', ?::text, 'tracestate', 'k=v')"
                + " WHERE id = ?", "00-" + traceId + "-00f067aa0ba902b7-01", id(30));
        assertThat(admin.traceEvent(id(30)).traceId()).isEqualTo(traceId);
        for (String malformed : List.of("00-" + traceId.toUpperCase() + "-00f067aa0ba902b7-01",
                "00-00000000000000000000000000000000-00f067aa0ba902b7-01", "ff-" + traceId + "-00f067aa0ba902b7-01",
                "00-" + traceId + "-00f067aa0ba902b7-01-extra", "<script>")) {
            db.execute("UPDATE outbox_event SET headers = jsonb_build_object('traceparent', ?::text) WHERE id = ?",
                    malformed, id(30));
            assertThat(admin.traceEvent(id(30)).traceId()).as(malformed).isNull();
        }

        park(db, id(31), 31, "org.apache.kafka.common.errors.RecordTooLargeException", "too large");
        db.execute("UPDATE outbox_dead_letter SET headers = jsonb_build_object('traceparent', ?::text) WHERE id = ?",
                "00-" + traceId + "-00f067aa0ba902b7-00", id(31));
        EventTrace parked = admin.traceEvent(id(31));
        assertThat(parked.deadLetter()).isPresent();
        assertThat(parked.traceId()).as("the dead letter keeps the row's headers").isEqualTo(traceId);
        assertThat(admin.traceEvent(id(32)).traceId()).as("found nowhere").isNull();
    }

    @Test
    void anEventAppliedByTwoGroupsSaysWhereItWasReadFrom(TestDatabase db) throws Exception {
        db.execute("INSERT INTO processed_event (consumer_group, event_id, processed_at, topic, kafka_partition, kafka_offset)"
                + " VALUES ('billing', ?, now() - interval '2 seconds', 'orders.v2', 3, 4711),"
                + " ('shipping', ?, now() - interval '1 second', NULL, NULL, NULL), ('audit', ?, now(), 'orders.v2', 0, 1)",
                id(4), id(4), id(5));
        EventTrace t = admin(db).traceEvent(id(4));
        assertThat(t.found()).isTrue();
        assertThat(t.inOutbox()).isEmpty();
        assertThat(t.applications()).extracting(EventTrace.Application::consumerGroup).containsExactly("billing", "shipping");
        EventTrace.Application billing = t.applications().get(0);
        assertThat(billing.topic()).isEqualTo("orders.v2");
        assertThat(billing.kafkaPartition()).isEqualTo(3);
        assertThat(billing.kafkaOffset()).isEqualTo(4711L);
        EventTrace.Application shipping = t.applications().get(1);
        assertThat(shipping.topic()).isNull();
        assertThat(shipping.kafkaPartition()).isNull();
        assertThat(shipping.kafkaOffset()).isNull();
    }

    @Test
    void theIntentLedgerRemembersAnEventAfterTheRelayDeletedIt(TestDatabase db) throws Exception {
        new IntentLedger(db.dataSource(), "public").enable();
        event(db, id(6), "o-6", null, false);
        EventTrace before = admin(db).traceEvent(id(6));
        EventTrace.Intent intent = before.intent().orElseThrow();
        assertThat(intent.createdAt()).isEqualTo(before.inOutbox().orElseThrow().createdAt());
        assertThat(intent.publishedAt()).isNull();
        assertThat(intent.payloadHash()).hasSize(64).matches("[0-9a-f]+")
                .isEqualTo(db.strings("SELECT encode(sha256(convert_to('{\"n\": 1}'::jsonb::text, 'UTF8')), 'hex')").get(0));

        db.execute("DELETE FROM outbox_event WHERE id = ?", id(6));
        EventTrace after = admin(db).traceEvent(id(6));
        assertThat(after.inOutbox()).isEmpty();
        assertThat(after.found()).isTrue();
        assertThat(after.intent().orElseThrow().publishedAt()).as("the relay's delete counts as published").isNotNull();
    }

    @Test
    void anEventFoundNowhereHasEveryPartEmpty(TestDatabase db) throws Exception {
        event(db, id(7), "o-7", null, false);
        EventTrace t = admin(db).traceEvent(id(8));
        assertThat(t.id()).isEqualTo(id(8));
        assertThat(t.found()).isFalse();
        assertThat(t.inOutbox()).isEmpty();
        assertThat(t.deadLetter()).isEmpty();
        assertThat(t.applications()).isEmpty();
        assertThat(t.intent()).isEmpty();
    }

    @Test
    void tablesADeploymentDoesNotHaveLeaveTheirPartEmpty(TestDatabase db) throws Exception {
        OutboxAdmin admin = admin(db);
        event(db, id(9), "o-9", null, false);
        admin.traceEvent(id(9));
        db.exec("DROP TABLE processed_event", "DROP TABLE outbox_intent CASCADE", "DROP TABLE outbox_relay_member",
                "DROP TABLE idempotency_key");
        EventTrace t = admin.traceEvent(id(9));
        assertThat(t.inOutbox()).get().extracting(EventTrace.Pending::leaseKey).isNull();
        assertThat(t.applications()).isEmpty();
        assertThat(t.intent()).isEmpty();
        assertThat(admin.idempotencyKey("checkout", "k-1")).isEmpty();

        db.exec("DROP TABLE outbox_dead_letter CASCADE");
        assertThatThrownBy(() -> admin.traceEvent(id(9))).as("the outbox tables themselves are not optional")
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("does not hold the outboxkit tables");
    }

    @Test
    void deadLettersAreGroupedByReasonWithTheVariablePartsReplaced(TestDatabase db) throws Exception {
        String tooLarge = "org.apache.kafka.common.errors.RecordTooLargeException";
        String invalid = "org.apache.kafka.common.errors.InvalidTopicException";
        park(db, id(10), 10, tooLarge, "record 123 too large");
        park(db, id(11), 11, tooLarge, "record 456 too large");
        park(db, id(12), 12, tooLarge, "record 78 too large");
        park(db, id(13), 13, invalid, "Topic 'orders-1' not present for event 018f3a5e-7b2c-7d11-8a00-000000000001");
        park(db, id(14), 14, invalid, "Topic \"payments\" not present for event ab8f3a5e-7b2c-7d11-8a00-0000000000a2");
        park(db, id(15), 15, invalid, "100% of quota_a used");
        park(db, id(16), 16, invalid, "100x of quotaba used");
        park(db, id(17), 17, "java.lang.IllegalStateException", "record 1 too large");
        park(db, id(18), 18, invalid, "path C:\\tmp\\x1 refused");

        OutboxAdmin admin = admin(db);
        List<DeadLetterReason> reasons = admin.deadLetterReasons(10);
        assertThat(reasons).extracting(DeadLetterReason::errorClass, DeadLetterReason::messagePattern, DeadLetterReason::count)
                .as("largest first, a UUID (starting with a digit or a letter) is one placeholder, quotes go with the value")
                .startsWith(org.assertj.core.groups.Tuple.tuple(tooLarge, "record {} too large", 3L),
                        org.assertj.core.groups.Tuple.tuple(invalid, "Topic {} not present for event {}", 2L))
                .containsExactlyInAnyOrder(
                        org.assertj.core.groups.Tuple.tuple(tooLarge, "record {} too large", 3L),
                        org.assertj.core.groups.Tuple.tuple(invalid, "Topic {} not present for event {}", 2L),
                        org.assertj.core.groups.Tuple.tuple("java.lang.IllegalStateException", "record {} too large", 1L),
                        org.assertj.core.groups.Tuple.tuple(invalid, "{}% of quota_a used", 1L),
                        org.assertj.core.groups.Tuple.tuple(invalid, "{}x of quotaba used", 1L),
                        org.assertj.core.groups.Tuple.tuple(invalid, "path C:\\tmp\\x{} refused", 1L));
        DeadLetterReason largest = reasons.get(0);
        assertThat(largest.firstParked()).isEqualTo(parkedAt(10));
        assertThat(largest.lastParked()).isEqualTo(parkedAt(12));
        assertThat(admin.deadLetterReasons(1)).containsExactly(largest);
        assertThatThrownBy(() -> admin.deadLetterReasons(0)).isInstanceOf(IllegalArgumentException.class);

        // LIKE's own wildcards and escape character in a pattern are literal
        DeadLetterFilter quota = DeadLetterFilter.all().withReason(invalid, "{}% of quota_a used");
        assertThat(admin.deadLetters(quota, 10, null).items()).extracting(DeadLetter::id).containsExactly(id(15));
        DeadLetterFilter path = DeadLetterFilter.all().withReason(invalid, "path C:\\tmp\\x{} refused");
        assertThat(admin.deadLetters(path, 10, null).items()).extracting(DeadLetter::id).containsExactly(id(18));

        DeadLetterFilter one = DeadLetterFilter.all().withReason(largest.errorClass(), largest.messagePattern());
        assertThat(admin.deadLetters(one, 10, null).items()).extracting(DeadLetter::id).containsExactly(id(10), id(11), id(12));
        DeadLetterChange retried = admin.retryDeadLetters(one, "alice@ops");
        assertThat(retried.rows()).extracting(DeadLetterChange.Row::id).containsExactly(id(10), id(11), id(12));
        assertThat(db.count("SELECT count(*) FROM outbox_event")).isEqualTo(3);
        assertThat(db.count("SELECT count(*) FROM outbox_dead_letter")).as("the other error class's 'record {} too large' stays")
                .isEqualTo(6);

        DeadLetterChange discarded = admin.discardDeadLetters(DeadLetterFilter.all().withReason("InvalidTopicException",
                "Topic {} not present for event {}"), "topics deleted", "alice@ops");
        assertThat(discarded.rows()).extracting(DeadLetterChange.Row::id).containsExactlyInAnyOrder(id(13), id(14));
        assertThat(admin.deadLetterReasons(10)).extracting(DeadLetterReason::messagePattern)
                .containsExactlyInAnyOrder("record {} too large", "{}% of quota_a used", "{}x of quotaba used",
                        "path C:\\tmp\\x{} refused");
        assertThatThrownBy(() -> DeadLetterFilter.all().withReason(invalid, null)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void anIdempotencyKeyShowsItsStateNeverItsResponse(TestDatabase db) throws Exception {
        OutboxAdmin admin = admin(db);
        assertThat(admin.idempotencyKey("checkout", "k-1")).isEmpty();
        db.exec("INSERT INTO idempotency_key (scope, idem_key, request_hash, state, locked_until, created_at, attempt)"
                        + " VALUES ('checkout', 'k-1', sha256('req'::bytea), 'in_progress', now() + interval '30 seconds',"
                        + " now() - interval '5 seconds', 2)",
                "INSERT INTO idempotency_key (scope, idem_key, request_hash, state, response_status, response_body, created_at,"
                        + " completed_at) VALUES ('checkout', 'k-2', sha256('req'::bytea), 'completed', 201,"
                        + " 'card 4111'::bytea, now() - interval '1 hour', now() - interval '59 minutes')");
        IdempotencyKeyState running = admin.idempotencyKey("checkout", "k-1").orElseThrow();
        assertThat(running.scope()).isEqualTo("checkout");
        assertThat(running.key()).isEqualTo("k-1");
        assertThat(running.state()).isEqualTo("in_progress");
        assertThat(running.completed()).isFalse();
        assertThat(running.requestHash()).isEqualTo(db.strings("SELECT encode(sha256('req'::bytea), 'hex')").get(0));
        assertThat(running.lockedUntil()).isAfter(Instant.now().minusSeconds(5));
        assertThat(running.responseStatus()).isNull();
        assertThat(running.attempt()).isEqualTo(2);
        assertThat(running.completedAt()).isNull();
        assertThat(running.age()).isBetween(Duration.ofSeconds(4), Duration.ofSeconds(60));

        IdempotencyKeyState done = admin.idempotencyKey("checkout", "k-2").orElseThrow();
        assertThat(done.completed()).isTrue();
        assertThat(done.responseStatus()).isEqualTo(201);
        assertThat(done.lockedUntil()).isNull();
        assertThat(done.completedAt()).isNotNull();
        assertThat(done.toString()).doesNotContain("4111");
        assertThat(admin.idempotencyKey("other-scope", "k-2")).isEmpty();
    }

    @Test
    void statusCountsUpToTheLimitAndEstimatesBeyondIt(TestDatabase db) throws Exception {
        OutboxAdmin admin = admin(db);
        int limit = Status.EXACT_BACKLOG_LIMIT;
        db.exec("INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload, topic, created_at)"
                + " SELECT gen_random_uuid(), CASE WHEN g % 4 = 0 THEN 'account' ELSE 'order' END, 'a-' || g, 'Placed', '{}',"
                + " NULL, now() - interval '1 hour' + g * interval '1 ms' FROM generate_series(1, " + limit + ") g");
        Status exact = admin.status();
        assertThat(exact.backlogExact()).as("exactly the limit is still counted").isTrue();
        assertThat(exact.backlog()).isEqualTo(limit);
        assertThat(exact.backlogByTopic()).extracting(Status.Backlog::aggregateType, Status.Backlog::events)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("order", (long) limit * 3 / 4),
                        org.assertj.core.groups.Tuple.tuple("account", (long) limit / 4));
        assertThat(exact.oldestUnpublishedAge()).isBetween(Duration.ofMinutes(59), Duration.ofMinutes(70));

        db.exec("INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload, topic)"
                + " SELECT gen_random_uuid(), 'invoice', 'i-' || g, 'Sent', '{}', 'invoices' FROM generate_series(1, 5000) g",
                "ANALYZE outbox_event");
        Status estimated = admin.status();
        assertThat(estimated.backlogExact()).isFalse();
        assertThat(estimated.backlog()).as("the planner's estimate, never below what was read").isGreaterThan(limit)
                .isBetween((long) limit, (long) (limit + 5000) * 2);
        assertThat(estimated.backlogByTopic()).as("the oldest events only: the newer invoices are not among them")
                .extracting(Status.Backlog::aggregateType).containsExactly("order", "account");
        assertThat(estimated.backlogByTopic().stream().mapToLong(Status.Backlog::events).sum()).isEqualTo(limit);
        assertThat(estimated.oldestUnpublishedAge()).isBetween(Duration.ofMinutes(59), Duration.ofMinutes(70));

        Status old = new Status("public", 3, null, List.of(), 0, List.of(), List.of());
        assertThat(old.backlogExact()).as("the constructor without the flag makes an exact status").isTrue();
    }

    private static Instant parkedAt(int n) {
        return Instant.parse("2026-11-29T10:00:00Z").plusSeconds(n);
    }

    private static void park(TestDatabase db, UUID id, int seq, String errorClass, String message) throws Exception {
        try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement(
                "INSERT INTO outbox_dead_letter (id, seq, aggregate_type, aggregate_id, event_type, payload, headers, created_at,"
                        + " error_class, error_message, attempts, parked_by, parked_at)"
                        + " VALUES (?, ?, 'order', ?, 'Placed', '{}', '{}', now(), ?, ?, 3, 'relay-1', ?)")) {
            ps.setObject(1, id);
            ps.setLong(2, seq);
            ps.setString(3, "o-" + seq);
            ps.setString(4, errorClass);
            ps.setString(5, message);
            ps.setTimestamp(6, java.sql.Timestamp.from(parkedAt(seq)));
            ps.executeUpdate();
        }
    }
}
