package dev.outboxkit.relay.poller.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxkit.relay.poller.AfterPublish;
import dev.outboxkit.relay.poller.ParkPolicy;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The claim's plan on the tables a queue really has (issue 30 item 5): a backlog larger than a batch in an outbox table
 * whose statistics do not know it (never analysed, analysed while nearly empty, or analysed while empty as it is between
 * bursts). The textbook claim, {@code DELETE ... WHERE seq IN (SELECT ... LIMIT ... FOR UPDATE SKIP LOCKED)}, then
 * reads the whole table for every claim (a scan and sort of it, or a hash join over it), or worse runs the candidates'
 * scan again for every row of the table (a semi join, quadratic in the backlog: the latency benchmark's claims that
 * reached their 5 s statement timeout). The relay's claim ({@link PollerSql}) computes the candidates once, by an
 * ordered scan of the index on seq, and finds the rows to forget by {@code seq = ANY} of them, whatever the statistics.
 *
 * <p>So in every mode the relay claims in: afterPublish MARK claims with an UPDATE whose candidates are the unpublished
 * rows, read through the partial index MARK mode requires (a MARK-mode table keeps its published rows, so between
 * bursts it is full of them rather than empty), and ParkPolicy HOLD_AGGREGATE's candidates skip the aggregates with a
 * parked row, an anti-join on outbox_dead_letter (the tests park a few).
 */
@ExtendWith(OutboxTestkitExtension.class)
class ClaimPlanTest {

    private static final int PARTITIONS = 64;
    private static final int BATCH = 10_000;
    /** The partitions of one of two claim loops (the claimer's claimSome), and all of them (claimAll). */
    private static final int[] HALF = IntStream.range(0, PARTITIONS).filter(p -> p % 2 == 0).toArray();
    private static final int[] ALL = IntStream.range(0, PARTITIONS).toArray();

    @Test
    void onATableNeverAnalysedEveryClaimReadsItsBatchOnly(TestDatabase db) throws Exception {
        leases(db);
        unpublishedIndex(db);
        db.exec(insert(300_000));
        park(db);
        assertThat(textbookPlan(db, AfterPublish.DELETE)).as("the hazard on this PostgreSQL: a scan and sort of the "
                + "whole backlog").contains("Seq Scan on outbox_event c").contains("Sort");
        assertTextbookMarkClaimSortsTheBacklog(db); // (here a bitmap scan of the whole unpublished index)
        assertClaimsReadTheirBatchOnly(db, AfterPublish.DELETE);
        assertClaimsReadTheirBatchOnly(db, AfterPublish.MARK);
    }

    @Test
    void onATableAnalysedWhileNearlyEmptyEveryClaimReadsItsBatchOnly(TestDatabase db) throws Exception {
        leases(db);
        unpublishedIndex(db);
        db.exec(insert(50), "ANALYZE outbox_event", insert(300_000));
        park(db);
        assertThat(textbookPlan(db, AfterPublish.DELETE)).as("the hazard on this PostgreSQL: a scan of the whole backlog "
                + "(for the candidates, or for the rows to delete)")
                .containsAnyOf("Seq Scan on outbox_event", "Hash Semi Join");
        assertTextbookMarkClaimSortsTheBacklog(db); // (here a sequential scan)
        assertClaimsReadTheirBatchOnly(db, AfterPublish.DELETE);
        assertClaimsReadTheirBatchOnly(db, AfterPublish.MARK);
    }

    @Test
    void onATableAnalysedWhileEmptyEveryClaimScansItsCandidatesOnce(TestDatabase db) throws Exception {
        leases(db);
        // Between bursts: the table was drained and analysed with its pages still there (one live row at the end keeps
        // VACUUM from truncating them), then a burst arrives that the statistics do not know. DELETE mode's state: a
        // MARK-mode table is not drained (the next test).
        db.exec(insert(40_000), "DELETE FROM outbox_event WHERE seq < (SELECT max(seq) FROM outbox_event)",
                "VACUUM ANALYZE outbox_event", insert(3_000));
        park(db);
        assertThat(textbookPlan(db, AfterPublish.DELETE)).as("the hazard on this PostgreSQL: the candidates' scan runs "
                + "again for every row of the table").contains("Nested Loop Semi Join")
                .containsPattern("LockRows \\(actual rows=\\d+ loops=3001\\)");
        assertClaimsReadTheirBatchOnly(db, AfterPublish.DELETE);
    }

    @Test
    void onATableAnalysedWhileAllWasPublishedEveryMarkClaimScansItsCandidatesOnce(TestDatabase db) throws Exception {
        leases(db);
        unpublishedIndex(db);
        // MARK mode between bursts: every row published and kept, the table analysed so (no unpublished row in its
        // statistics, one left at the end as in the DELETE-mode state), then a burst arrives that they do not know. The
        // textbook MARK claim is no hazard here on PostgreSQL 17, so nothing is asserted of it: the table's statistics
        // know its size, and expecting about one candidate the planner computes the candidates first (one ordered scan
        // of the unpublished index, made unique by a HashAggregate) and looks each up by the primary key.
        db.exec(insert(40_000),
                "UPDATE outbox_event SET published_at = now() WHERE seq < (SELECT max(seq) FROM outbox_event)",
                "VACUUM ANALYZE outbox_event", insert(3_000));
        park(db);
        assertClaimsReadTheirBatchOnly(db, AfterPublish.MARK);
    }

    private static void leases(TestDatabase db) throws Exception {
        db.exec("ALTER TABLE outbox_event SET (autovacuum_enabled = false)", // no analyse during the test
                "INSERT INTO outbox_relay_lease (lease_key, holder, fence, expires_at)"
                        + " SELECT 'poll/' || p, 'test', p, now() + interval '1 day' FROM generate_series(0, "
                        + (PARTITIONS - 1) + ") p");
    }

    /**
     * The partial index a MARK-mode relay refuses to start without (the schema drops it where no row was kept as
     * published). Created on the empty table, as the schema did, so that building it tells the planner nothing about
     * the rows to come; DELETE-mode claims cannot use it (their candidates do not say published_at IS NULL).
     */
    private static void unpublishedIndex(TestDatabase db) throws Exception {
        db.exec("CREATE INDEX outbox_event_unpublished ON outbox_event (seq) WHERE published_at IS NULL");
    }

    private static String insert(int rows) {
        return "INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload)"
                + " SELECT gen_random_uuid(), 'order', (i % 5000)::text, 'E', jsonb_build_object('x', repeat('y', 150))"
                + " FROM generate_series(1, " + rows + ") i";
    }

    /**
     * Holds a few aggregates, as if an earlier event of each had been parked (HOLD_AGGREGATE's anti-join reads only
     * the dead letters' aggregate): those of the first unpublished rows of each parity of partition, so that every
     * claim form, whichever partitions or slice it claims, would take rows of held aggregates if it did not skip them.
     */
    private static void park(TestDatabase db) throws Exception {
        String firstOfEachParity = IntStream.of(0, 1)
                .mapToObj(parity -> "(SELECT * FROM outbox_event e WHERE e.published_at IS NULL AND " + partitionOf("e")
                        + " % 2 = " + parity + " ORDER BY e.seq LIMIT 10)")
                .collect(Collectors.joining(" UNION ALL "));
        db.exec("INSERT INTO outbox_dead_letter (id, seq, aggregate_type, aggregate_id, event_type, payload, headers,"
                + " created_at, error_class, error_message, attempts, parked_by)"
                + " SELECT gen_random_uuid(), seq, aggregate_type, aggregate_id, event_type, payload, headers,"
                + " created_at, 'test', 'parked by the test', 1, 'test' FROM (" + firstOfEachParity + ") f");
    }

    /** The partition of an outbox row, as the relay computes it. */
    private static String partitionOf(String alias) {
        return new PollerSql("public", PARTITIONS, AfterPublish.DELETE, ParkPolicy.CONTINUE).partitionOf(alias);
    }

    /** The textbook claim of one claim loop's partitions in {@code mode}, without the relay's settings: the hazard. */
    private static String textbookClaim(AfterPublish mode) {
        boolean mark = mode == AfterPublish.MARK;
        return (mark ? "UPDATE outbox_event e SET published_at = statement_timestamp()" : "DELETE FROM outbox_event e")
                + " WHERE e.seq IN (SELECT c.seq FROM outbox_event c WHERE " + partitionOf("c") + " % 2 = 0"
                + (mark ? " AND c.published_at IS NULL" : "") + " ORDER BY c.seq LIMIT " + BATCH
                + " FOR UPDATE OF c SKIP LOCKED) RETURNING e.seq";
    }

    /** The textbook MARK claim's hazard where it has one: a scan and sort of the whole backlog for its candidates. */
    private static void assertTextbookMarkClaimSortsTheBacklog(TestDatabase db) throws Exception {
        assertThat(textbookPlan(db, AfterPublish.MARK)).as("the hazard on this PostgreSQL: a scan and sort of the whole "
                + "backlog").containsPattern("(Seq|Bitmap Heap) Scan on outbox_event c").contains("Sort");
    }

    private static String textbookPlan(TestDatabase db, AfterPublish mode) throws Exception {
        try (Connection c = db.connect()) {
            c.setAutoCommit(false);
            try {
                return plan(c.prepareStatement("EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) " + textbookClaim(mode)));
            } finally {
                c.rollback();
            }
        }
    }

    /** One of the relay's claim statements and the partitions the claimer holds when it runs it. */
    private record Claim(String statement, int[] partitions) {
    }

    /**
     * The claim forms the relay runs in {@code sql}'s mode: some or all partitions and, in DELETE mode only, each slice
     * (PollingRelay uses slices only with afterPublish DELETE: with MARK their indexes would hold every published row).
     */
    private static List<Claim> claims(PollerSql sql, AfterPublish mode) {
        List<Claim> claims = new ArrayList<>(List.of(new Claim(sql.claimSome, HALF), new Claim(sql.claimAll, ALL)));
        if (mode == AfterPublish.DELETE) {
            claims.add(new Claim(sql.claimSomeSlice[0], HALF));
            claims.add(new Claim(sql.claimAllSlice[1], ALL));
        }
        return claims;
    }

    /**
     * Every claim form of {@code mode}, with each park policy, run with its transaction's settings as the claimer runs
     * it (then rolled back): the candidates come from one ordered scan of an index on seq, executed once, and the rows
     * to forget are looked up by {@code seq = ANY} of them: no scan of the table, no sort, no join of the two. With
     * HOLD_AGGREGATE the claim takes no row of a held aggregate; with CONTINUE it does (the control).
     */
    private static void assertClaimsReadTheirBatchOnly(TestDatabase db, AfterPublish mode) throws Exception {
        Set<String> held = Set.copyOf(db.strings("SELECT aggregate_type || '/' || aggregate_id FROM outbox_dead_letter"));
        try (Connection c = db.connect()) {
            c.setAutoCommit(false);
            for (ParkPolicy policy : ParkPolicy.values()) {
                for (Claim claim : claims(new PollerSql("public", PARTITIONS, mode, policy), mode)) {
                    settings(c, claim);
                    String plan = plan(claimStatement(c, "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) ", claim));
                    c.rollback(); // the settings are the transaction's only, and the claim's changes are undone
                    assertReadsItsBatchOnly(plan, mode, policy);
                    Set<String> claimed = claimedAggregates(c, claim);
                    c.rollback();
                    if (policy == ParkPolicy.HOLD_AGGREGATE) {
                        assertThat(claimed).as("the claim skips the held aggregates").isNotEmpty()
                                .doesNotContainAnyElementsOf(held);
                    } else {
                        assertThat(claimed).as("the control: without HOLD_AGGREGATE the claim takes rows of the held "
                                + "aggregates").containsAnyElementsOf(held);
                    }
                }
            }
        }
    }

    private static void assertReadsItsBatchOnly(String plan, AfterPublish mode, ParkPolicy policy) {
        boolean mark = mode == AfterPublish.MARK;
        assertThat(plan).as("the claim's plan with its transaction's settings")
                .contains(mark ? "Index Scan using outbox_event_unpublished on outbox_event c"
                        : "Index Scan using outbox_event_pkey on outbox_event c")
                .containsPattern("Index Cond: \\(seq = ANY \\(")
                .doesNotContain("Seq Scan on outbox_event").doesNotContain("Sort")
                // (the 64 lease rows of the held CTE may be joined any way: that is not the backlog)
                .doesNotContain("Semi Join").doesNotContain("Merge");
        assertThat(plan.lines().filter(l -> l.contains("LockRows") || l.contains("on outbox_event c")))
                .as("the candidates' scan runs once").isNotEmpty().allMatch(l -> l.endsWith(" loops=1)"));
        assertThat(plan).as("the claim took rows")
                .containsPattern((mark ? "Update" : "Delete") + " on outbox_event e \\(actual rows=[1-9]");
        if (policy == ParkPolicy.HOLD_AGGREGATE) {
            // With sequential scans off even a tiny outbox_dead_letter is read through its index, probed once per
            // candidate (a nested loop anti-join on PostgreSQL 17): it costs the batch, not the dead letters.
            assertThat(plan).as("HOLD_AGGREGATE's anti-join looks each candidate's aggregate up in the dead letters' "
                    + "index")
                    .contains("Anti Join")
                    .containsPattern("Index (Only )?Scan using outbox_dead_letter_aggregate on outbox_dead_letter d")
                    .contains("Index Cond: ((aggregate_type = c.aggregate_type) AND (aggregate_id = c.aggregate_id))")
                    .doesNotContain("Seq Scan on outbox_dead_letter");
        }
    }

    /** Runs the claim's first statement, the transaction's settings, as the claimer does. */
    private static void settings(Connection c, Claim claim) throws Exception {
        String statement = claim.statement();
        try (PreparedStatement ps = c.prepareStatement(statement.substring(0, statement.indexOf(";\n")))) {
            ps.setString(1, "60000");
            ps.setString(2, "5000");
            ps.setString(3, "5000");
            ps.executeQuery().close();
        }
    }

    /** The claim's second statement, after {@code prefix}, with the claimer's parameters. */
    private static PreparedStatement claimStatement(Connection c, String prefix, Claim claim) throws Exception {
        String statement = claim.statement();
        PreparedStatement ps = c.prepareStatement(prefix + statement.substring(statement.indexOf(";\n") + 2));
        ps.setArray(1, Jdbc.ints(c, claim.partitions()));
        ps.setArray(2, Jdbc.longs(c, IntStream.of(claim.partitions()).asLongStream().toArray()));
        ps.setString(3, "test");
        ps.setInt(4, BATCH);
        return ps;
    }

    /** The aggregates of the rows the claim takes, run with its settings as the claimer runs it. */
    private static Set<String> claimedAggregates(Connection c, Claim claim) throws Exception {
        settings(c, claim);
        Set<String> aggregates = new HashSet<>();
        try (PreparedStatement ps = claimStatement(c, "", claim); ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                aggregates.add(rs.getString("aggregate_type") + "/" + rs.getString("aggregate_id"));
            }
        }
        return aggregates;
    }

    private static String plan(PreparedStatement explain) throws Exception {
        StringBuilder plan = new StringBuilder();
        try (explain; ResultSet rs = explain.executeQuery()) {
            while (rs.next()) {
                plan.append(rs.getString(1)).append('\n');
            }
        }
        return plan.toString();
    }
}
