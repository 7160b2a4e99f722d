package dev.outboxkit.core.spi;

import dev.outboxkit.core.OutboxTables;
import java.util.Set;

/**
 * Not API: the one definition of the PostgreSQL privileges each outboxkit role needs in a schema, as the
 * least-privilege sections of the module READMEs (and docs/managed-services.md) list them. Each component checks
 * its role's {@link Grants} at start; the testkit's {@code DocumentedGrants} derives the grants its tests give a role
 * from these same methods ({@link Grants#privileges()}), so a component, its start-up check and the tests cannot
 * disagree, and a README that lists less fails the suite.
 */
public final class RoleGrants {

    /** What a retention run purges besides the intent ledger (which it always does). */
    public enum Purged {
        /** Published rows a MARK-mode relay kept in {@code outbox_event}. */
        ARCHIVE,
        /** Old dead letters. */
        DEAD_LETTERS,
        /** Expired idempotency keys, without tombstones. */
        IDEMPOTENCY_KEYS,
        /** Expired idempotency keys, keeping a tombstone of each. */
        IDEMPOTENCY_KEYS_WITH_TOMBSTONES
    }

    private RoleGrants() {
    }

    /** relay-poller/README.md, "Least privilege": what a batch needs in either afterPublish mode. */
    public static Grants pollingRelay(String schema) {
        return Grants.in(schema)
                .table(OutboxTables.OUTBOX_EVENT, "SELECT", "INSERT", "UPDATE", "DELETE")
                .table(OutboxTables.DEAD_LETTER, "SELECT", "INSERT", "UPDATE")
                .table(OutboxTables.RELAY_LEASE, "SELECT", "INSERT", "UPDATE", "DELETE")
                .table(OutboxTables.RELAY_MEMBER, "SELECT", "INSERT", "UPDATE", "DELETE")
                .sequence(OutboxTables.FENCE_SEQUENCE);
    }

    /**
     * relay-debezium/README.md, "Least-privilege role": the table grants and REPLICATION; DELETE on the outbox only when
     * the relay deletes rows after publishing them. The publication is an administrator's (or created by the relay).
     */
    public static Grants cdcRelay(String schema, boolean deleteAfterPublish) {
        return Grants.in(schema)
                .table(OutboxTables.OUTBOX_EVENT, deleteAfterPublish ? new String[] {"SELECT", "DELETE"} : new String[] {"SELECT"})
                .table(OutboxTables.DEAD_LETTER, "SELECT", "INSERT", "UPDATE")
                .table(OutboxTables.RELAY_LEASE, "SELECT", "INSERT", "UPDATE", "DELETE")
                .sequence(OutboxTables.FENCE_SEQUENCE)
                .table(OutboxTables.CDC_OFFSET, "SELECT", "INSERT", "UPDATE", "DELETE")
                .table(OutboxTables.CDC_SLOT, "SELECT", "INSERT", "UPDATE", "DELETE")
                .table(OutboxTables.CDC_HEARTBEAT, "SELECT", "INSERT", "DELETE")
                .replication();
    }

    /** consumer-dedupe/README.md, "Least privilege": DELETE too when the consumer runs its retention job. */
    public static Grants consumer(String schema, boolean purges) {
        return purges ? Grants.in(schema).table(OutboxTables.PROCESSED_EVENT, "SELECT", "INSERT", "DELETE")
                : Grants.in(schema).table(OutboxTables.PROCESSED_EVENT, "SELECT", "INSERT");
    }

    /**
     * outbox-writer/README.md: INSERT (mode KEEP); with INSERT_AND_DELETE also SELECT and DELETE (the DELETE finds its
     * rows by id). The LOGICAL_MESSAGE mode needs nothing: {@code pg_logical_emit_message} is executable by PUBLIC.
     */
    public static Grants writer(String schema, boolean insertAndDelete) {
        return insertAndDelete ? Grants.in(schema).table(OutboxTables.OUTBOX_EVENT, "INSERT", "SELECT", "DELETE")
                : Grants.in(schema).table(OutboxTables.OUTBOX_EVENT, "INSERT");
    }

    /** outbox-writer/README.md: {@code IdempotencyKeys} (its writer's grants come on top). */
    public static Grants idempotencyKeys(String schema) {
        return Grants.in(schema).table(OutboxTables.IDEMPOTENCY_KEY, "SELECT", "INSERT", "UPDATE", "DELETE")
                .table(OutboxTables.IDEMPOTENCY_KEY_TOMBSTONE, "SELECT", "INSERT", "UPDATE");
    }

    /** outbox-cli/README.md, "Dead letters": {@code outbox status} ({@code OutboxAdmin.status}). */
    public static Grants status(String schema) {
        return Grants.in(schema).table(OutboxTables.OUTBOX_EVENT, "SELECT").table(OutboxTables.DEAD_LETTER, "SELECT")
                .table(OutboxTables.RELAY_LEASE, "SELECT");
    }

    /** outbox-cli/README.md, "Dead letters": the CDC relay slots {@code outbox status} shows when it may. */
    public static Grants cdcRelaySlots(String schema) {
        return Grants.in(schema).table(OutboxTables.CDC_SLOT, "SELECT");
    }

    /** outbox-ops/README.md, "Least-privilege grants": {@code OutboxAdmin.relayMembers} (the console's overview). */
    public static Grants relayMembers(String schema) {
        return Grants.in(schema).table(OutboxTables.RELAY_MEMBER, "SELECT");
    }

    /**
     * relay-poller/README.md and relay-debezium/README.md, "Least privilege": the instance's report in
     * {@code outbox_relay_report} (schema version 13), which every relay instance writes and deletes on a clean stop.
     * Not part of {@link #pollingRelay} and {@link #cdcRelay} and not checked at start: the report is best effort, so a
     * role without these grants publishes all the same and its relay names this statement once in its log.
     */
    public static Grants relayReportWriter(String schema) {
        return Grants.in(schema).table(OutboxTables.RELAY_REPORT, "SELECT", "INSERT", "UPDATE", "DELETE");
    }

    /** outbox-ops/README.md, "Least-privilege grants": {@code OutboxAdmin.relayReports} (the console's overview). */
    public static Grants relayReports(String schema) {
        return Grants.in(schema).table(OutboxTables.RELAY_REPORT, "SELECT");
    }

    /**
     * outbox-ops/README.md, "Least-privilege grants": {@code OutboxAdmin.eventPayload} (the console with payloads shown):
     * the columns a payload lives in.
     */
    public static Grants eventPayload(String schema) {
        return Grants.in(schema)
                .columns(OutboxTables.OUTBOX_EVENT, "SELECT", "id", "payload", "payload_bytes", "content_type")
                .columns(OutboxTables.DEAD_LETTER, "SELECT", "id", "payload", "payload_bytes", "content_type");
    }

    /**
     * outbox-ops/README.md, "Least-privilege grants": {@code OutboxAdmin.traceEvent}. Tables a deployment does not have
     * (no {@code processed_event} on a producer-only database, no {@code outbox_intent} without reconciliation) are not
     * asked for: {@link Grants} skips a table that does not exist.
     */
    public static Grants traceEvent(String schema) {
        return Grants.in(schema).table(OutboxTables.OUTBOX_EVENT, "SELECT").table(OutboxTables.DEAD_LETTER, "SELECT")
                .table(OutboxTables.RELAY_LEASE, "SELECT").table(OutboxTables.RELAY_MEMBER, "SELECT")
                .table(OutboxTables.PROCESSED_EVENT, "SELECT").table(OutboxTables.INTENT, "SELECT")
                .table(OutboxTables.OPS_JOURNAL, "SELECT");
    }

    /**
     * outbox-ops/README.md, "Least-privilege grants": {@code OutboxAdmin.idempotencyKey}: the key's state columns only,
     * never the stored response (its body and headers may hold personal data).
     */
    public static Grants idempotencyKeyState(String schema) {
        return Grants.in(schema).columns(OutboxTables.IDEMPOTENCY_KEY, "SELECT", "scope", "idem_key", "request_hash", "state",
                "locked_until", "response_status", "created_at", "completed_at", "attempt");
    }

    /** outbox-cli/README.md, "Dead letters": {@code outbox dead-letters list}. */
    public static Grants deadLettersList(String schema) {
        return Grants.in(schema).table(OutboxTables.DEAD_LETTER, "SELECT");
    }

    /**
     * outbox-cli/README.md, "Dead letters": {@code outbox dead-letters discard}, with its entry in the operations journal
     * (written in the same transaction).
     */
    public static Grants deadLettersDiscard(String schema) {
        return Grants.in(schema).table(OutboxTables.DEAD_LETTER, "SELECT", "DELETE").table(OutboxTables.OPS_JOURNAL, "INSERT");
    }

    /**
     * outbox-ops/README.md, "Least-privilege grants": reading the operations journal ({@code OutboxAdmin.journal}, the
     * console's Runs page).
     */
    public static Grants journal(String schema) {
        return Grants.in(schema).table(OutboxTables.OPS_JOURNAL, "SELECT");
    }

    /** outbox-cli/README.md, "Dead letters": {@code outbox dead-letters retry}: discard's, and the move back. */
    public static Grants deadLettersRetry(String schema) {
        return deadLettersDiscard(schema).table(OutboxTables.OUTBOX_EVENT, "INSERT")
                .columns(OutboxTables.OUTBOX_EVENT, "SELECT", "seq", "id", "aggregate_type", "aggregate_id");
    }

    /** outbox-cli/README.md, "Dead letters": {@code outbox replay} (a dry run too). */
    public static Grants replay(String schema) {
        return Grants.in(schema).table(OutboxTables.OUTBOX_EVENT, "SELECT", "UPDATE").table(OutboxTables.DEAD_LETTER, "SELECT");
    }

    /** outbox-ops/README.md, "Least-privilege grants": {@code outbox reconcile}, on the outbox database. */
    public static Grants reconcileOutboxDatabase(String schema) {
        return Grants.in(schema).table(OutboxTables.INTENT, "SELECT").table(OutboxTables.OUTBOX_EVENT, "SELECT")
                .table(OutboxTables.DEAD_LETTER, "SELECT").table(OutboxTables.IDEMPOTENCY_KEY, "SELECT")
                .table(OutboxTables.OPS_JOURNAL, "INSERT");
    }

    /** outbox-ops/README.md: {@code outbox reconcile}, consumer side (TEMPORARY: the window's intents are copied there). */
    public static Grants reconcileConsumer(String schema) {
        return Grants.in(schema).table(OutboxTables.PROCESSED_EVENT, "SELECT").table(OutboxTables.EXTERNAL_EFFECT, "SELECT")
                .temporary();
    }

    /**
     * outbox-ops/README.md, "Least-privilege grants": {@code outbox purge} on the producer database: the ledger's owner
     * (day partitions dropped) with CREATE (made ahead), the oldest unpublished event (which keeps its partition), and
     * the delete rights of each configured purge, and the operations journal (each round's entry, and its own
     * retention).
     */
    public static Grants purge(String schema, Set<Purged> purged) {
        Grants g = Grants.in(schema).ownerOf(OutboxTables.INTENT).create()
                .table(OutboxTables.OUTBOX_EVENT, purged.contains(Purged.ARCHIVE) ? new String[] {"SELECT", "DELETE"}
                        : new String[] {"SELECT"})
                .table(OutboxTables.OPS_JOURNAL, "SELECT", "INSERT", "DELETE");
        if (purged.contains(Purged.DEAD_LETTERS)) {
            g.table(OutboxTables.DEAD_LETTER, "SELECT", "DELETE");
        }
        if (purged.contains(Purged.IDEMPOTENCY_KEYS) || purged.contains(Purged.IDEMPOTENCY_KEYS_WITH_TOMBSTONES)) {
            g.table(OutboxTables.IDEMPOTENCY_KEY, "SELECT", "DELETE");
        }
        if (purged.contains(Purged.IDEMPOTENCY_KEYS_WITH_TOMBSTONES)) {
            g.table(OutboxTables.IDEMPOTENCY_KEY_TOMBSTONE, "SELECT", "INSERT", "UPDATE");
        }
        return g;
    }

    /** outbox-ops/README.md, "Least-privilege grants": {@code outbox purge --group}, on the consumer database. */
    public static Grants purgeInbox(String schema) {
        return Grants.in(schema).table(OutboxTables.PROCESSED_EVENT, "SELECT", "DELETE");
    }
}
