package dev.outboxkit.ops.retention;

import dev.outboxkit.consumer.InboxRetention;
import dev.outboxkit.core.Identifiers;
import dev.outboxkit.core.MissingGrantsException;
import dev.outboxkit.core.OutboxTables;
import dev.outboxkit.core.spi.GrantsOnce;
import dev.outboxkit.core.spi.RoleGrants;
import dev.outboxkit.ops.OpsBuilder;
import dev.outboxkit.ops.internal.Checks;
import dev.outboxkit.ops.admin.JournalEntry;
import dev.outboxkit.ops.internal.ChunkedDelete;
import dev.outboxkit.ops.internal.Journal;
import dev.outboxkit.ops.reconcile.IntentLedger;
import dev.outboxkit.writer.IdempotencyKeys;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import javax.sql.DataSource;
import org.apache.kafka.clients.admin.Admin;

/**
 * The one place that purges what outboxkit keeps, each with its window and its safety rule:
 * <ul>
 *   <li>intent ledger: day partitions dropped whole once older than {@code intentRetention}
 *       (kept while an older event is still unpublished), partitions created ahead;</li>
 *   <li>{@code processed_event} of each configured group: delegated to
 *       {@link InboxRetention#purge}, which never deletes an id its group has not committed past
 *       in Kafka (a redelivery could still reach it); a dry run to {@link InboxRetention#dryRun}, the same rule;</li>
 *   <li>idempotency keys: delegated to {@link IdempotencyKeys#purgeExpired} (tombstones kept);</li>
 *   <li>dead letters: only when {@code deadLetterRetention} is set (default: keep for ever);</li>
 *   <li>the operations journal ({@code outbox_ops_journal}): entries older than {@code journalRetention} (90 days).</li>
 * </ul>
 * Each round that purges (not a dry run) leaves one entry in the operations journal: what it purged per store, or its
 * failure; on a schema older than version 12, which has no journal, it logs one WARN and purges all the same.
 * Run it from a scheduler (hourly is plenty; {@link RetentionSchedule} runs it periodically, one
 * instance per schema at a time), the sidecar ({@code outbox relay … --retention-interval}), or
 * {@code outbox purge}.
 */
public final class Retention {

    /** Default {@link Builder#intentRetention}: 8 days (the default 7-day dedupe window plus a day). */
    public static final Duration DEFAULT_INTENT_RETENTION = Duration.ofDays(8);
    /** Default {@link Builder#journalRetention}: 90 days. */
    public static final Duration DEFAULT_JOURNAL_RETENTION = Duration.ofDays(90);
    /** Default {@link Builder#partitionsAhead}: 3 days. */
    public static final int DEFAULT_PARTITIONS_AHEAD = 3;

    /** A consumer group's processed_event retention. */
    public record Inbox(DataSource dataSource, String schema, String group, Duration retention) {
        public Inbox {
            Objects.requireNonNull(dataSource, "dataSource");
            Identifiers.requireValid("schema", schema);
            if (group == null || group.isBlank()) {
                throw new IllegalArgumentException("group must not be blank");
            }
            Checks.requirePositive("retention of group " + group, retention);
        }
    }

    /**
     * What a purge did, or in a dry run would do.
     *
     * @param intents            the intent ledger's purge
     * @param partitionsCreated  day partitions created ahead (0 in a dry run)
     * @param processedEvents    per group: ids purged and kept (dry run: purged = what would go)
     * @param idempotencyKeys    keys purged; -1 in a dry run or when not configured
     * @param deadLetters        dead letters purged (or that would be); 0 when kept for ever
     */
    public record Result(boolean dryRun, IntentLedger.Purge intents, int partitionsCreated,
                         Map<String, InboxRetention.Result> processedEvents, long idempotencyKeys, long deadLetters,
                         long archivedEvents) {
        public Result {
            processedEvents = Map.copyOf(processedEvents);
        }
    }

    private final DataSource outboxDatabase;
    private final String schema;
    private final Duration intentRetention;
    private final int partitionsAhead;
    private final Duration deadLetterRetention;
    private final Duration archiveRetention;
    private final Duration journalRetention;
    private final IdempotencyKeys idempotencyKeys;
    private final List<Inbox> inboxes;
    private final Admin admin;
    private final Clock clock;
    private final MeterRegistry registry;
    /** outbox.retention.purged by its {@code what} tag, registered up front so rules and panels see 0, not "no data". */
    private final Map<String, Counter> purged = new LinkedHashMap<>();

    private final OutboxTables tables;
    private final Journal journal;
    private final String actor;
    /** The outbox database's privileges for what is configured, then each inbox database's: checked once each. */
    private final List<GrantsOnce> grants = new ArrayList<>();
    private final List<DataSource> grantsOn = new ArrayList<>();

    private Retention(Builder b, OpsBuilder.Resolved p) {
        this.outboxDatabase = p.dataSource();
        this.schema = p.schema();
        this.tables = p.tables();
        this.intentRetention = b.intentRetention;
        this.partitionsAhead = b.partitionsAhead;
        this.deadLetterRetention = b.deadLetterRetention;
        this.archiveRetention = b.archiveRetention;
        this.journalRetention = b.journalRetention;
        this.actor = b.actorName;
        this.journal = new Journal(outboxDatabase, tables);
        this.idempotencyKeys = b.idempotencyKeys;
        this.inboxes = List.copyOf(b.inboxes);
        this.admin = b.admin;
        this.clock = p.clock();
        this.registry = p.registry();
        for (String what : PURGED_KINDS) {
            purged.put(what, Counter.builder("outbox.retention.purged").description("Rows (or intent partitions) purged by retention")
                    .tag("what", what).register(registry));
        }
        Set<RoleGrants.Purged> configured = EnumSet.noneOf(RoleGrants.Purged.class);
        if (archiveRetention != null) {
            configured.add(RoleGrants.Purged.ARCHIVE);
        }
        if (deadLetterRetention != null) {
            configured.add(RoleGrants.Purged.DEAD_LETTERS);
        }
        if (idempotencyKeys != null) {
            configured.add(idempotencyKeys.keepTombstones() ? RoleGrants.Purged.IDEMPOTENCY_KEYS_WITH_TOMBSTONES
                    : RoleGrants.Purged.IDEMPOTENCY_KEYS);
        }
        grants.add(new GrantsOnce(RoleGrants.purge(schema, configured), "outbox purge (schema " + schema + ")"));
        grantsOn.add(outboxDatabase);
        for (Inbox inbox : inboxes) {
            grants.add(new GrantsOnce(RoleGrants.purgeInbox(inbox.schema()),
                    "outbox purge (processed_event of group " + inbox.group() + ", schema " + inbox.schema() + ")"));
            grantsOn.add(inbox.dataSource());
        }
    }

    /** Each database's privileges, before anything is purged (after the first success: nothing, no round trip). */
    private void requireGrants() throws SQLException {
        for (int i = 0; i < grants.size(); i++) {
            try (Connection c = grantsOn.get(i).getConnection()) {
                grants.get(i).require(c);
            }
        }
    }

    /** Every value of outbox.retention.purged's {@code what} tag. */
    static final List<String> PURGED_KINDS = List.of("archived_events", "intent_partitions", "intent_rows", "processed_events",
            "idempotency_keys", "dead_letters");

    public static Builder builder() {
        return new Builder();
    }

    DataSource outboxDatabase() {
        return outboxDatabase;
    }

    String schema() {
        return schema;
    }

    MeterRegistry registry() {
        return registry;
    }

    private void count(String what, long n) {
        purged.get(what).increment(n);
    }

    /**
     * {@link #purge purge(false)} under the schema's retention lock, the one every relay sidecar's
     * {@link RetentionSchedule} takes, so a manual or cron purge never runs beside a scheduled round:
     * waits up to {@code wait} for a round running elsewhere to end. Needs two connections of the
     * outbox database's DataSource (the lock's and the job's).
     *
     * @throws IllegalStateException when another session still held the lock after {@code wait}
     */
    public Result purgeExclusively(Duration wait) throws SQLException, InterruptedException {
        try (Connection c = outboxDatabase.getConnection(); RetentionLock lock = RetentionLock.acquire(c, schema, wait)) {
            if (lock == null) {
                throw new IllegalStateException("another instance is running retention on schema " + schema + " (a relay"
                        + " sidecar's --retention-interval schedule or another 'outbox purge'); waited " + wait
                        + ". It is doing this work already: run again later, or with --dry-run to see what is due.");
            }
            return purge(false);
        }
    }

    /**
     * Purges (or, with {@code dryRun}, only counts) everything configured.
     *
     * @throws MissingGrantsException before anything is purged, when a role lacks a privilege the configured purges
     *                                need (a dry run checks the same), with the statements to run
     */
    public Result purge(boolean dryRun) throws SQLException {
        return purge(dryRun, null);
    }

    /**
     * {@link #purge(boolean)}; a round that purges (not a dry run) leaves one entry in the operations journal, with
     * {@code interval} (the schedule's, so a reader can tell when the next round is due; null: no schedule).
     */
    Result purge(boolean dryRun, Duration interval) throws SQLException {
        requireGrants();
        Instant started = clock.instant();
        if (dryRun) {
            return purgeOrCount(started, true).result();
        }
        Round round;
        try {
            round = purgeOrCount(started, false);
        } catch (SQLException | RuntimeException e) {
            Map<String, Object> d = Journal.failure(e);
            putInterval(d, interval);
            journal.record(JournalEntry.Kind.RETENTION, started, clock.instant(), actor, false,
                    Journal.failureSummary("retention", e), d);
            throw e;
        }
        Result r = round.result();
        Map<String, Object> purgedPerStore = purgedPerStore(r, round.journalEntries());
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("purged", purgedPerStore);
        d.put("intentPartitionsDropped", r.intents().dropped());
        d.put("partitionsCreated", r.partitionsCreated());
        putInterval(d, interval);
        StringBuilder summary = new StringBuilder("purged ");
        purgedPerStore.forEach((store, n) -> summary.append(store).append(' ').append(n).append(", "));
        summary.append("created ").append(r.partitionsCreated()).append(" intent partition(s) ahead");
        journal.record(JournalEntry.Kind.RETENTION, started, clock.instant(), actor, true, summary.toString(), d);
        return r;
    }

    private static void putInterval(Map<String, Object> d, Duration interval) {
        if (interval != null) {
            d.put("interval", interval.toString());
        }
    }

    /** What a round purged, per store, as the journal records it (stores not configured are left out). */
    private Map<String, Object> purgedPerStore(Result r, long journalEntries) {
        Map<String, Object> p = new LinkedHashMap<>();
        p.put("intent_partitions", r.intents().dropped().size());
        p.put("intent_rows", r.intents().defaultRowsDeleted());
        r.processedEvents().forEach((group, x) -> p.put("processed_events/" + group, x.purged()));
        if (r.idempotencyKeys() >= 0) {
            p.put("idempotency_keys", r.idempotencyKeys());
        }
        if (deadLetterRetention != null) {
            p.put("dead_letters", r.deadLetters());
        }
        if (archiveRetention != null) {
            p.put("archived_events", r.archivedEvents());
        }
        p.put("journal_entries", journalEntries);
        return p;
    }

    /** A round's result and the journal entries it deleted (not part of {@link Result}, whose shape is API). */
    private record Round(Result result, long journalEntries) {
    }

    private Round purgeOrCount(Instant now, boolean dryRun) throws SQLException {
        IntentLedger ledger = new IntentLedger(outboxDatabase, schema);
        int created = dryRun ? 0 : ledger.createPartitions(now.atZone(ZoneOffset.UTC).toLocalDate(), partitionsAhead);
        IntentLedger.Purge intents = ledger.purge(now.minus(intentRetention), dryRun);
        Map<String, InboxRetention.Result> processed = new LinkedHashMap<>();
        for (Inbox inbox : inboxes) {
            InboxRetention.Result r = dryRun
                    ? InboxRetention.dryRun(inbox.dataSource(), inbox.schema(), inbox.group(), inbox.retention(), admin, clock)
                    : InboxRetention.purge(inbox.dataSource(), inbox.schema(), inbox.group(), inbox.retention(), admin, clock);
            processed.put(inbox.group(), r);
        }
        long keys = -1;
        if (idempotencyKeys != null && !dryRun) {
            keys = idempotencyKeys.purgeExpired(outboxDatabase);
        }
        long deadLetters = deadLetterRetention == null ? 0 : deadLetters(now.minus(deadLetterRetention), dryRun);
        // The outbox archive: rows a MARK-mode relay kept after publishing them (unpublished rows are never touched).
        long archived = archiveRetention == null ? 0 : ChunkedDelete.olderThan(outboxDatabase,
                tables.outboxEvent(), "id", "published_at", now.minus(archiveRetention), dryRun);
        // The operations journal stays bounded (absent before schema version 12: then there is nothing to purge).
        long journalEntries = !dryRun && journal.present() ? ChunkedDelete.olderThan(outboxDatabase, tables.opsJournal(), "id",
                "finished_at", now.minus(journalRetention), false) : 0;
        if (!dryRun) {
            count("archived_events", archived);
            count("intent_partitions", intents.dropped().size());
            count("intent_rows", intents.defaultRowsDeleted());
            processed.values().forEach(r -> count("processed_events", r.purged()));
            count("idempotency_keys", Math.max(keys, 0));
            count("dead_letters", deadLetters);
        }
        return new Round(new Result(dryRun, intents, created, processed, keys, deadLetters, archived), journalEntries);
    }

    private long deadLetters(Instant cutoff, boolean dryRun) throws SQLException {
        return ChunkedDelete.olderThan(outboxDatabase, tables.deadLetter(), "id", "parked_at",
                cutoff, dryRun);
    }

    /**
     * Configuration; {@link #build()} validates it. The outbox database and schema ({@link #outboxDatabase}, required)
     * hold the intent ledger, the dead letters and the idempotency keys; the {@link #clock} decides which rows are
     * older than their retention; the {@link #meterRegistry} receives {@code outbox.retention.purged}.
     */
    public static final class Builder extends OpsBuilder<Builder> {
        private Duration intentRetention = DEFAULT_INTENT_RETENTION;
        private int partitionsAhead = DEFAULT_PARTITIONS_AHEAD;
        private Duration deadLetterRetention;
        private Duration archiveRetention;
        private Duration journalRetention = DEFAULT_JOURNAL_RETENTION;
        private IdempotencyKeys idempotencyKeys;
        private final List<Inbox> inboxes = new ArrayList<>();
        private Admin admin;

        private String actorName;

        private Builder() {
        }

        /** How long intents are kept. Default 8 days; keep it longer than the reconcile lookback and the dedupe window. */
        public Builder intentRetention(Duration intentRetention) {
            this.intentRetention = intentRetention;
            return this;
        }

        /**
         * Delete entries of the operations journal ({@code outbox_ops_journal}) that finished longer ago than this.
         * Default {@link #DEFAULT_JOURNAL_RETENTION 90 days}.
         */
        public Builder journalRetention(Duration journalRetention) {
            this.journalRetention = journalRetention;
            return this;
        }

        /** Day partitions created ahead on every run. Default 3. */
        public Builder partitionsAhead(int partitionsAhead) {
            this.partitionsAhead = partitionsAhead;
            return this;
        }

        /** Purge dead letters parked longer ago than this. Default null: dead letters are kept for ever. */
        public Builder deadLetterRetention(Duration deadLetterRetention) {
            this.deadLetterRetention = deadLetterRetention;
            return this;
        }

        /**
         * Purge published rows that a MARK-mode relay kept in {@code outbox_event} (the outbox
         * archive that {@code outbox replay} reads) once published longer ago than this. Default:
         * null, keep them; rows not yet published are never purged.
         */
        public Builder archiveRetention(Duration archiveRetention) {
            this.archiveRetention = archiveRetention;
            return this;
        }

        /** Purge idempotency keys with this instance's windows (its own retention per scope). Default: not purged here. */
        public Builder idempotencyKeys(IdempotencyKeys idempotencyKeys) {
            this.idempotencyKeys = idempotencyKeys;
            return this;
        }

        /** Purge a group's processed_event rows (repeatable); needs {@link #kafkaAdmin}. */
        public Builder inbox(DataSource dataSource, String schema, String group, Duration retention) {
            inboxes.add(new Inbox(dataSource, schema, group, retention));
            return this;
        }

        /** Reads the groups' committed offsets; required with {@link #inbox}. Not closed by Retention. */
        public Builder kafkaAdmin(Admin admin) {
            this.admin = admin;
            return this;
        }

        public Retention build() {
            Resolved resolved = resolveSettings();
            Checks.requirePositive("intentRetention", intentRetention);
            if (intentRetention.compareTo(Duration.ofDays(1)) < 0) {
                throw new IllegalArgumentException("intentRetention must be at least 1 day (partitions are days), got "
                        + intentRetention);
            }
            if (partitionsAhead < 1 || partitionsAhead > 60) {
                throw new IllegalArgumentException("partitionsAhead must be between 1 and 60, got " + partitionsAhead);
            }
            if (archiveRetention != null) {
                Checks.requirePositive("archiveRetention", archiveRetention);
            }
            if (deadLetterRetention != null) {
                Checks.requirePositive("deadLetterRetention", deadLetterRetention);
            }
            Checks.requirePositive("journalRetention", journalRetention);
            if (!inboxes.isEmpty() && admin == null) {
                throw new IllegalArgumentException("kafkaAdmin is required to purge processed_event (the committed offsets"
                        + " prove a redelivery cannot reach a purged id)");
            }
            actorName = resolvedActor();
            return new Retention(this, resolved);
        }
    }
}
