package dev.outboxkit.relay.poller.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxkit.relay.poller.AfterPublish;
import dev.outboxkit.relay.poller.ParkPolicy;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
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
 */
@ExtendWith(OutboxTestkitExtension.class)
class ClaimPlanTest {

    private static final int PARTITIONS = 64;
    private static final int BATCH = 10_000;

    /** The textbook claim of one claim loop's partitions, without the relay's settings: the hazard. */
    private static final String TEXTBOOK_CLAIM = "DELETE FROM outbox_event e WHERE e.seq IN (SELECT c.seq FROM outbox_event c"
            + " WHERE " + new PollerSql("public", PARTITIONS, AfterPublish.DELETE, ParkPolicy.CONTINUE).partitionOf("c")
            + " % 2 = 0 ORDER BY c.seq LIMIT " + BATCH + " FOR UPDATE OF c SKIP LOCKED) RETURNING e.seq";

    @Test
    void onATableNeverAnalysedEveryClaimReadsItsBatchOnly(TestDatabase db) throws Exception {
        leases(db);
        db.exec(insert(300_000));
        assertThat(textbookPlan(db)).as("the hazard on this PostgreSQL: a scan and sort of the whole backlog")
                .contains("Seq Scan on outbox_event c").contains("Sort");
        assertClaimsReadTheirBatchOnly(db);
    }

    @Test
    void onATableAnalysedWhileNearlyEmptyEveryClaimReadsItsBatchOnly(TestDatabase db) throws Exception {
        leases(db);
        db.exec(insert(50), "ANALYZE outbox_event", insert(300_000));
        assertThat(textbookPlan(db)).as("the hazard on this PostgreSQL: a scan of the whole backlog (for the candidates, "
                + "or for the rows to delete)").containsAnyOf("Seq Scan on outbox_event", "Hash Semi Join");
        assertClaimsReadTheirBatchOnly(db);
    }

    @Test
    void onATableAnalysedWhileEmptyEveryClaimScansItsCandidatesOnce(TestDatabase db) throws Exception {
        leases(db);
        // Between bursts: the table was drained and analysed with its pages still there (one live row at the end keeps
        // VACUUM from truncating them), then a burst arrives that the statistics do not know.
        db.exec(insert(40_000), "DELETE FROM outbox_event WHERE seq < (SELECT max(seq) FROM outbox_event)",
                "VACUUM ANALYZE outbox_event", insert(3_000));
        assertThat(textbookPlan(db)).as("the hazard on this PostgreSQL: the candidates' scan runs again for every row "
                + "of the table").contains("Nested Loop Semi Join").containsPattern("LockRows \\(actual rows=\\d+ loops=3001\\)");
        assertClaimsReadTheirBatchOnly(db);
    }

    private static void leases(TestDatabase db) throws Exception {
        db.exec("ALTER TABLE outbox_event SET (autovacuum_enabled = false)", // no analyse during the test
                "INSERT INTO outbox_relay_lease (lease_key, holder, fence, expires_at)"
                        + " SELECT 'poll/' || p, 'test', p, now() + interval '1 day' FROM generate_series(0, "
                        + (PARTITIONS - 1) + ") p");
    }

    private static String insert(int rows) {
        return "INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload)"
                + " SELECT gen_random_uuid(), 'order', (i % 5000)::text, 'E', jsonb_build_object('x', repeat('y', 150))"
                + " FROM generate_series(1, " + rows + ") i";
    }

    private static String textbookPlan(TestDatabase db) throws Exception {
        try (Connection c = db.connect()) {
            c.setAutoCommit(false);
            try {
                return plan(c.prepareStatement("EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) " + TEXTBOOK_CLAIM));
            } finally {
                c.rollback();
            }
        }
    }

    /**
     * Every claim form (some or all partitions, each slice), run with its transaction's settings as the claimer runs it:
     * the candidates come from one ordered scan of the primary key, executed once, and the rows to forget are looked up
     * by {@code seq = ANY} of them: no scan of the table, no sort, no join of the two.
     */
    private static void assertClaimsReadTheirBatchOnly(TestDatabase db) throws Exception {
        PollerSql sql = new PollerSql("public", PARTITIONS, AfterPublish.DELETE, ParkPolicy.CONTINUE);
        int[] half = IntStream.range(0, PARTITIONS).filter(p -> p % 2 == 0).toArray(); // one of two claim loops
        int[] all = IntStream.range(0, PARTITIONS).toArray();
        try (Connection c = db.connect()) {
            c.setAutoCommit(false);
            for (String claim : new String[] {sql.claimSome, sql.claimAll, sql.claimSomeSlice[0], sql.claimAllSlice[1]}) {
                int[] partitions = claim == sql.claimSome || claim == sql.claimSomeSlice[0] ? half : all;
                settings(c, claim);
                String plan = explain(c, claim, partitions);
                assertThat(plan).as("the claim's plan with its transaction's settings")
                        .contains("Index Scan using outbox_event_pkey on outbox_event c")
                        .containsPattern("Index Cond: \\(seq = ANY \\(")
                        .doesNotContain("Seq Scan on outbox_event").doesNotContain("Sort")
                        // (the 64 lease rows of the held CTE may be joined any way: that is not the backlog)
                        .doesNotContain("Semi Join").doesNotContain("Merge");
                assertThat(plan.lines().filter(l -> l.contains("LockRows") || l.contains("on outbox_event c")))
                        .as("the candidates' scan runs once").isNotEmpty().allMatch(l -> l.endsWith(" loops=1)"));
                assertThat(plan).as("the claim took rows").containsPattern("Delete on outbox_event e \\(actual rows=[1-9]");
                c.rollback(); // the settings are the transaction's only, and the claim's deletes are undone
            }
        }
    }

    /** Runs the claim's first statement, the transaction's settings, as the claimer does. */
    private static void settings(Connection c, String claim) throws Exception {
        try (PreparedStatement ps = c.prepareStatement(claim.substring(0, claim.indexOf(";\n")))) {
            ps.setString(1, "60000");
            ps.setString(2, "5000");
            ps.setString(3, "5000");
            ps.executeQuery().close();
        }
    }

    /** The plan of the claim's second statement with the claimer's parameters, as it ran (then rolled back). */
    private static String explain(Connection c, String claim, int[] partitions) throws Exception {
        long[] fences = IntStream.of(partitions).asLongStream().toArray();
        PreparedStatement ps = c.prepareStatement("EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) "
                + claim.substring(claim.indexOf(";\n") + 2));
        ps.setArray(1, Jdbc.ints(c, partitions));
        ps.setArray(2, Jdbc.longs(c, fences));
        ps.setString(3, "test");
        ps.setInt(4, BATCH);
        return plan(ps);
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
