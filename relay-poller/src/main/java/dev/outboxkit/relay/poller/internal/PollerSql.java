package dev.outboxkit.relay.poller.internal;

import dev.outboxkit.core.Identifiers;
import dev.outboxkit.core.OutboxTables;
import dev.outboxkit.core.spi.PollPartitions;
import dev.outboxkit.relay.poller.AfterPublish;
import dev.outboxkit.relay.poller.ParkPolicy;
import dev.outboxkit.runtime.LeaseTable;
import java.util.ArrayList;
import java.util.List;

/**
 * Not API: public for {@code dev.outboxkit.relay.poller.PollingRelay}.
 *
 * <p>Every statement of the polling relay, built once from validated settings. Table names come
 * from {@link Identifiers#qualified} (validated and quoted); the only other values spliced into
 * the text are integers from the settings. Everything else is a bind parameter.
 *
 * <p>Lease protocol in one paragraph: a claim locks the lease rows it relies on with
 * {@code FOR KEY SHARE} until its transaction ends. Renewal is a plain UPDATE of non-key columns
 * ({@code FOR NO KEY UPDATE}), which does not conflict with it. A takeover DELETEs the expired
 * lease row (needs {@code FOR UPDATE}, which does conflict) and INSERTs a new one with a new fence
 * from the sequence; it skips rows that are still locked. So a new holder can never claim rows of a
 * partition while an old holder's claim on that partition is still open.
 */
public final class PollerSql {

    /** Prefix of the poller's keys in {@code outbox_relay_lease}: {@code poll/0} … {@code poll/63}. */
    public static final String LEASE_PREFIX = PollPartitions.LEASE_PREFIX;

    final String event;
    final String deadLetter;
    final String lease;
    final String member;
    /** The lease table's statements (shared with the CDC relay). */
    final LeaseTable leases;
    private final int partitions;

    /**
     * The claim transaction's settings (SET LOCAL): its timeouts, its commit mode and its plan. Sent in the same round
     * trip as the claim.
     */
    final String claimSettings;
    final String claimSome;
    final String claimAll;
    /** {@link #claimSome} and {@link #claimAll} of each slice (see {@link #SLICES}), by slice. */
    final String[] claimSomeSlice = new String[SLICES];
    final String[] claimAllSlice = new String[SLICES];
    /** Whether outbox_event has the slice index (one parameter: the table). */
    final String sliceIndexPresent;
    /** Idle polls ask this first (no transaction, no locks): is there any row at all? */
    final String anyRow;
    final String requeue;
    final String deleteParked;

    final String memberUpsert;
    final String members;
    final String purgeMembers;
    /** Deletes the members whose process is gone (one parameter: their ids). */
    final String purgeGoneMembers;
    final String memberLeave;

    final String backlogCount;
    final String oldestAge;
    final String tablesPresent;
    final String notifyTriggerPresent;
    final String unpublishedIndexPresent;

    /** Whether the statements read and write the binary payload columns of schema version 10. */
    final boolean binaryColumns;
    /** Whether outbox_event has the version-10 columns (one parameter: the table). */
    final String binaryColumnsPresent;

    public PollerSql(String schema, int partitions, AfterPublish afterPublish, ParkPolicy parkPolicy) {
        this(schema, partitions, afterPublish, parkPolicy, true);
    }

    /**
     * @param binaryColumns false on a schema before version 10: the statements are the ones of version 9, which
     *                      do not name payload_bytes or content_type (a relay upgraded before its schema)
     */
    public PollerSql(String schema, int partitions, AfterPublish afterPublish, ParkPolicy parkPolicy, boolean binaryColumns) {
        this.binaryColumns = binaryColumns;
        this.event = Identifiers.qualified(schema, OutboxTables.OUTBOX_EVENT);
        this.deadLetter = Identifiers.qualified(schema, OutboxTables.DEAD_LETTER);
        this.lease = Identifiers.qualified(schema, OutboxTables.RELAY_LEASE);
        this.member = Identifiers.qualified(schema, OutboxTables.RELAY_MEMBER);
        this.partitions = partitions;
        this.leases = new LeaseTable(schema);
        boolean mark = afterPublish == AfterPublish.MARK;
        boolean hold = parkPolicy == ParkPolicy.HOLD_AGGREGATE;

        claimSettings = claimSettings();
        String held = heldLeases(lease);
        String candidates = candidates(event, deadLetter, mark, hold);
        String forget = forget(event, mark);
        String returning = returning(binaryColumns);
        String some = partitionOf("c") + " = ANY (ARRAY(SELECT p FROM held))";
        // Holding every partition: no per-row hash, only the one-time lease check.
        String all = "(SELECT count(*) FROM held) = " + partitions;
        claimSome = claimSettings + ";\n" + held + forget.formatted(candidates.formatted(some)) + returning;
        claimAll = claimSettings + ";\n" + held + forget.formatted(candidates.formatted(all)) + returning;
        for (int i = 0; i < SLICES; i++) {
            // a literal, so that the planner matches the slice's partial index
            String slice = " AND " + sliceOf("c") + " = " + i;
            claimSomeSlice[i] = claimSettings + ";\n" + held + forget.formatted(candidates.formatted(some + slice)) + returning;
            claimAllSlice[i] = claimSettings + ";\n" + held + forget.formatted(candidates.formatted(all + slice)) + returning;
        }
        // by name: an index of that name with another predicate is only not used by the planner (claims stay correct)
        sliceIndexPresent = "SELECT count(*) = 2 FROM pg_index i JOIN pg_class x ON x.oid = i.indexrelid"
                + " WHERE i.indrelid = to_regclass(?) AND i.indisvalid AND x.relname IN ('" + SLICE_INDEX + "_0', '"
                + SLICE_INDEX + "_1')";

        anyRow = "SELECT seq FROM " + event + (mark ? " WHERE published_at IS NULL" : "") + " ORDER BY seq LIMIT 1";
        requeue = requeue(event, mark, binaryColumns);
        deleteParked = "DELETE FROM " + event + " WHERE seq = ANY (?::bigint[])";
        memberUpsert = memberUpsert(member);
        members = "SELECT member_id, partitions FROM " + member + " WHERE expires_at > statement_timestamp() ORDER BY member_id";
        purgeMembers = "DELETE FROM " + member + " WHERE member_id IN (SELECT member_id FROM " + member
                + " WHERE expires_at < statement_timestamp() FOR UPDATE SKIP LOCKED)";
        memberLeave = "DELETE FROM " + member + " WHERE member_id = ?";
        purgeGoneMembers = "DELETE FROM " + member + " WHERE member_id = ANY (?::text[])";
        String unpublished = mark ? " WHERE published_at IS NULL" : "";
        backlogCount = "SELECT count(*) FROM " + event + unpublished;
        oldestAge = "SELECT EXTRACT(EPOCH FROM statement_timestamp() - created_at) FROM " + event + unpublished
                + " ORDER BY seq LIMIT 1";
        binaryColumnsPresent = "SELECT count(*) = 2 FROM pg_attribute WHERE attrelid = to_regclass(?)"
                + " AND attname IN ('payload_bytes', 'content_type') AND NOT attisdropped";
        tablesPresent = "SELECT to_regclass(?) IS NOT NULL, to_regclass(?) IS NOT NULL, to_regclass(?) IS NOT NULL,"
                + " to_regclass(?) IS NOT NULL";
        notifyTriggerPresent = "SELECT EXISTS (SELECT 1 FROM pg_trigger t JOIN pg_proc p ON p.oid = t.tgfoid"
                + " WHERE t.tgrelid = to_regclass(?) AND p.proname = 'outbox_event_notify' AND t.tgenabled <> 'D')";
        unpublishedIndexPresent = "SELECT EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = to_regclass(?) AND i.indisvalid"
                + " AND i.indkey[0] = (SELECT attnum FROM pg_attribute WHERE attrelid = i.indrelid AND attname = 'seq')"
                + " AND pg_get_expr(i.indpred, i.indrelid) = '(published_at IS NULL)')";
    }

    private static String claimSettings() {
        // synchronous_commit off for the claim transaction only: its commit (forget after the acks, put back, park)
        // is lost in a database crash only together with every later commit in the WAL, and losing it brings its
        // rows back to be published again: duplicates, never loss (FaultScenariosTest's PostgreSQL crash shows it).
        // The plan: a claim costs its batch, not the backlog, only as an ordered scan of an index on seq that stops at
        // the batch, and a lookup per claimed row. The statement's shape gives the second: the candidates are an array
        // computed once (an InitPlan), and the rows to forget are found by seq = ANY (that array). Written as
        // seq IN (candidates), it let the planner join the two, and on an outbox table analysed while empty (as it is
        // between bursts) it chose a semi join that runs the candidates' LIMIT ... FOR UPDATE SKIP LOCKED scan again for
        // every row of the table: quadratic in the backlog, the claims of the latency benchmark's seconds-long spirals
        // (auto_explain: 386 rescans and 527,039 buffer hits for 173 rows). The settings give the first: the planner
        // prices index scans as random reads and, on a table whose statistics do not know its backlog, scans and sorts
        // the whole table for the candidates; with sequential scans and sorts off for the claim transaction it is left
        // the index on seq (the primary key, or the slice or MARK-mode partial indexes). ClaimPlanTest shows the plans.
        return "SELECT set_config('idle_in_transaction_session_timeout', ?, true), "
                + "set_config('lock_timeout', ?, true), set_config('statement_timeout', ?, true), "
                + "set_config('synchronous_commit', 'off', true), "
                + "set_config('enable_seqscan', 'off', true), set_config('enable_sort', 'off', true)";
    }

    /** The claimed rows' columns, with the partition each belongs to. */
    private String returning(boolean binaryColumns) {
        return " RETURNING e.seq, " + partitionOf("e") + " AS part, e.id, e.aggregate_type, e.aggregate_id,"
                + " e.event_type, e.topic, e.payload, e.headers, e.created_at, e.attempts"
                + (binaryColumns ? ", e.payload_bytes, e.content_type" : ", NULL::bytea, NULL::text");
    }

    /** The claim's first step: the leases it relies on, each locked FOR KEY SHARE until the claim's transaction ends. */
    private static String heldLeases(String lease) {
        return """
                WITH held AS MATERIALIZED (
                    SELECT m.p
                      FROM %s l
                      JOIN unnest(?::int[], ?::bigint[]) AS m(p, fence)
                        ON l.lease_key = '%s' || m.p AND l.fence = m.fence
                     WHERE l.holder = ? AND l.expires_at > statement_timestamp()
                       FOR KEY SHARE OF l
                )
                """.formatted(lease, LEASE_PREFIX);
    }

    /** The claim's candidates, in seq order; {@code %s} is the partition (and slice) filter. */
    private static String candidates(String event, String deadLetter, boolean mark, boolean hold) {
        return "SELECT c.seq FROM " + event + " c WHERE %s"
                + (mark ? " AND c.published_at IS NULL" : "")
                + (hold ? " AND NOT EXISTS (SELECT 1 FROM " + deadLetter + " d"
                        + " WHERE d.aggregate_type = c.aggregate_type AND d.aggregate_id = c.aggregate_id)" : "")
                + " ORDER BY c.seq LIMIT ? FOR UPDATE OF c SKIP LOCKED";
    }

    /** How a claim forgets (deletes or marks) its rows; {@code %s} is the candidates. */
    private static String forget(String event, boolean mark) {
        return mark
                ? "UPDATE " + event + " e SET published_at = statement_timestamp() WHERE e.seq = ANY (ARRAY(%s))"
                : "DELETE FROM " + event + " e WHERE e.seq = ANY (ARRAY(%s))";
    }

    /** Puts rows that did not make it back, with their attempt counts. */
    private static String requeue(String event, boolean mark, boolean binaryColumns) {
        return mark
                ? "UPDATE " + event + " e SET published_at = NULL, attempts = r.attempts"
                        + " FROM unnest(?::bigint[], ?::int[]) AS r(seq, attempts) WHERE e.seq = r.seq"
                : "INSERT INTO " + event + " (seq, id, aggregate_type, aggregate_id, event_type, topic, payload, headers,"
                        + " created_at, attempts" + (binaryColumns ? ", payload_bytes, content_type" : "")
                        + ") OVERRIDING SYSTEM VALUE"
                        + " SELECT r.seq, r.id::uuid, r.aggregate_type, r.aggregate_id, r.event_type, r.topic, r.payload::jsonb,"
                        + " r.headers::jsonb, r.created_at::timestamptz, r.attempts"
                        + (binaryColumns ? ", decode(r.payload_hex, 'hex'), r.content_type" : "")
                        + " FROM unnest(?::bigint[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[],"
                        + " ?::text[], ?::text[], ?::int[]" + (binaryColumns ? ", ?::text[], ?::text[]" : "") + ")"
                        + " AS r(seq, id, aggregate_type, aggregate_id, event_type, topic, payload, headers, created_at, attempts"
                        + (binaryColumns ? ", payload_hex, content_type" : "") + ")";
    }

    private static String memberUpsert(String member) {
        String expiresIn = "statement_timestamp() + ? * interval '1 millisecond'";
        return "INSERT INTO " + member + " (member_id, partitions, started_at, heartbeat_at, expires_at)"
                + " VALUES (?, ?, statement_timestamp(), statement_timestamp(), " + expiresIn + ")"
                + " ON CONFLICT (member_id) DO UPDATE SET partitions = EXCLUDED.partitions,"
                + " heartbeat_at = EXCLUDED.heartbeat_at, expires_at = EXCLUDED.expires_at";
    }

    /** Whether outbox_event has an index on seq for unpublished rows only (one parameter: the table); MARK mode needs it. */
    public String unpublishedIndexPresent() {
        return unpublishedIndexPresent;
    }

    /** Whether outbox_event has the binary payload columns of schema version 10 (one parameter: the table). */
    public String binaryColumnsPresent() {
        return binaryColumnsPresent;
    }

    /** Four to_regclass checks: outbox_event, outbox_dead_letter, outbox_relay_lease, outbox_relay_member. */
    public String tablesPresent() {
        return tablesPresent;
    }

    /** Whether the outbox_event_notify trigger is attached and enabled (one parameter: the table). */
    public String notifyTriggerPresent() {
        return notifyTriggerPresent;
    }

    /**
     * Slices for pipelined claims: consecutive claims take alternate slices, so the next claim never steps over the
     * rows the batch in flight holds locked. An aggregate's rows are all in one slice (the low bit of the partition
     * hash; with an even partition count a slice is the partitions of one parity). Served by one partial index on
     * seq per slice, {@value #SLICE_INDEX}_0 and _1 (an index on (slice, seq) loses to the primary key in the
     * planner's costs: its leading column does not follow the heap's order). Only for afterPublish DELETE: with MARK
     * the indexes would also hold every published row.
     */
    public static final int SLICES = 2;
    public static final String SLICE_INDEX = "outbox_event_slice";

    /** The slice of an outbox row; the predicate of the slice indexes ({@link #sliceIndexDdl}) is the same. */
    static String sliceOf(String alias) {
        return "(hashtext(" + alias + ".aggregate_type || '/' || " + alias + ".aggregate_id) & 1)";
    }

    /**
     * The statements that create the slice indexes in {@code schema} (run outside a transaction: CONCURRENTLY does
     * not block writers). The start-up log and the docs quote them; the tests and benchmarks run them.
     */
    public static List<String> sliceIndexDdl(String schema) {
        List<String> ddl = new ArrayList<>();
        for (int i = 0; i < SLICES; i++) {
            ddl.add("CREATE INDEX CONCURRENTLY IF NOT EXISTS " + SLICE_INDEX + "_" + i + " ON "
                    + Identifiers.qualified(schema, OutboxTables.OUTBOX_EVENT) + " (seq) WHERE "
                    + "(hashtext(aggregate_type || '/' || aggregate_id) & 1) = " + i);
        }
        return List.copyOf(ddl);
    }

    /** Whether outbox_event has both slice indexes (one parameter: the table). */
    public String sliceIndexPresent() {
        return sliceIndexPresent;
    }

    /** The partition of an outbox row: a stable hash of aggregate type and id, modulo the partition count. */
    String partitionOf(String alias) {
        return PollPartitions.of(alias, partitions);
    }

    static String leaseKey(int partition) {
        return PollPartitions.leaseKey(partition);
    }

    /** {@code poll/7} → 7. */
    static int partitionOfKey(String leaseKey) {
        try {
            return Integer.parseInt(leaseKey.substring(LEASE_PREFIX.length()));
        } catch (RuntimeException e) {
            throw new IllegalStateException("outbox_relay_lease holds a poll/ key that is not poll/<number>: " + leaseKey, e);
        }
    }

    /** Partitions and their fences as the lease table's key → fence map. */
    static java.util.Map<String, Long> leaseMap(int[] partitions, long[] fences) {
        java.util.Map<String, Long> leases = new java.util.LinkedHashMap<>();
        for (int i = 0; i < partitions.length; i++) {
            leases.put(leaseKey(partitions[i]), fences[i]);
        }
        return leases;
    }
}
