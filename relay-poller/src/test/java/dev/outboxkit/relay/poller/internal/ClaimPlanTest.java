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
 * The claim's plan on the table a queue really has (issue 30 item 5): a backlog far larger than a batch in an outbox
 * table whose statistics do not know it (never analysed, or analysed while nearly empty). Left to itself the planner
 * reads the whole table for every claim (a scan and a sort of it, or a hash join over it), so a claim costs the whole
 * backlog and a growing backlog slows the claims further (in the latency benchmark they reached their 5 s statement timeout). The
 * claim transaction's settings ({@link PollerSql#claimSettings}) leave it the ordered scan of the index on seq and a
 * lookup per claimed row, whose cost the batch bounds.
 */
@ExtendWith(OutboxTestkitExtension.class)
class ClaimPlanTest {

    private static final int PARTITIONS = 64;
    private static final int BATCH = 10_000;

    @Test
    void onATableNeverAnalysedEveryClaimReadsTheIndexOnSeq(TestDatabase db) throws Exception {
        backlog(db, 0, 300_000);
        assertPinnedPlans(db);
    }

    @Test
    void onATableAnalysedWhileNearlyEmptyEveryClaimReadsTheIndexOnSeq(TestDatabase db) throws Exception {
        backlog(db, 50, 300_000);
        assertPinnedPlans(db);
    }

    /** {@code analysedAt} rows, ANALYZE (unless 0), then {@code rows} more that the statistics do not know. */
    private static void backlog(TestDatabase db, int analysedAt, int rows) throws Exception {
        db.exec("ALTER TABLE outbox_event SET (autovacuum_enabled = false)", // no analyse during the test
                "INSERT INTO outbox_relay_lease (lease_key, holder, fence, expires_at)"
                        + " SELECT 'poll/' || p, 'test', p, now() + interval '1 day' FROM generate_series(0, "
                        + (PARTITIONS - 1) + ") p");
        if (analysedAt > 0) {
            db.exec(insert(analysedAt), "ANALYZE outbox_event");
        }
        db.exec(insert(rows));
    }

    private static String insert(int rows) {
        return "INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload)"
                + " SELECT gen_random_uuid(), 'order', (i % 5000)::text, 'E', jsonb_build_object('x', repeat('y', 150))"
                + " FROM generate_series(1, " + rows + ") i";
    }

    private static void assertPinnedPlans(TestDatabase db) throws Exception {
        PollerSql sql = new PollerSql("public", PARTITIONS, AfterPublish.DELETE, ParkPolicy.CONTINUE);
        int[] half = IntStream.range(0, PARTITIONS).filter(p -> p % 2 == 0).toArray(); // one of two claim loops
        int[] all = IntStream.range(0, PARTITIONS).toArray();
        try (Connection c = db.connect()) {
            c.setAutoCommit(false);
            String unpinned = explain(c, sql.claimSome, half);
            assertThat(unpinned).as("the hazard itself, on this PostgreSQL: without the settings, the claim reads the "
                    + "whole backlog (a scan and sort of it for the candidates, or a hash of them and a scan of it)")
                    .containsAnyOf("Seq Scan on outbox_event", "Hash Semi Join");
            c.rollback();

            for (String claim : new String[] {sql.claimSome, sql.claimAll, sql.claimSomeSlice[0], sql.claimAllSlice[1]}) {
                int[] partitions = claim == sql.claimSome || claim == sql.claimSomeSlice[0] ? half : all;
                settings(c, claim);
                String plan = explain(c, claim, partitions);
                assertThat(plan).as("the claim's plan with its transaction's settings")
                        .contains("Index Scan using outbox_event_pkey on outbox_event c")
                        .contains("Index Scan using outbox_event_pkey on outbox_event e")
                        .doesNotContain("Seq Scan on outbox_event").doesNotContain("Sort")
                        .doesNotContain("Hash Join").doesNotContain("Hash Semi Join").doesNotContain("Merge");
                c.rollback(); // the settings are the transaction's only
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

    /** The plan of the claim's second statement with the claimer's parameters. */
    private static String explain(Connection c, String claim, int[] partitions) throws Exception {
        long[] fences = IntStream.of(partitions).asLongStream().toArray();
        StringBuilder plan = new StringBuilder();
        try (PreparedStatement ps = c.prepareStatement("EXPLAIN (COSTS OFF) " + claim.substring(claim.indexOf(";\n") + 2))) {
            ps.setArray(1, Jdbc.ints(c, partitions));
            ps.setArray(2, Jdbc.longs(c, fences));
            ps.setString(3, "test");
            ps.setInt(4, BATCH);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    plan.append(rs.getString(1)).append('\n');
                }
            }
        }
        return plan.toString();
    }
}
