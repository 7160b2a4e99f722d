package dev.outboxkit.relay.cdc.internal;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * Waits for the transactions running now to end. A transaction becomes visible to new snapshots a moment after its
 * commit record is written, and logical decoding may hand it over within that moment: a snapshot taken after this
 * returns sees every transaction whose commit record was written before it was called.
 */
final class RunningTransactions {

    /**
     * The transactions in progress now: a snapshot lists those below its {@code xmax} (one past the newest that ended),
     * and every id from there up to one this statement draws for itself was handed out since, so may run too. A
     * snapshot's list alone misses a transaction whose id is above every ended one, e.g. the only one committing.
     */
    private static final String RUNNING = "SELECT array(SELECT pg_snapshot_xip(t.snap)::text UNION ALL "
            + "SELECT g::text FROM generate_series(pg_snapshot_xmax(t.snap)::text::numeric, t.me::text::numeric - 1) g) "
            + "FROM (SELECT pg_current_snapshot() AS snap, pg_current_xact_id() AS me, "
            // drawing an id makes this statement a transaction that commits: it has nothing to keep, so it waits for
            // neither the WAL flush nor a synchronous standby
            + "set_config('synchronous_commit', 'off', true)) t";
    /**
     * Of the transactions with the given 32-bit ids (as logical decoding reports them), those a new snapshot does not
     * see yet ({@link #STILL_RUNNING}). The full id is the one nearest the snapshot's {@code xmax}: a transaction being
     * decoded is recent, far less than 2^31 ids from it, on either side (its id may be above every ended one).
     */
    private static final String STILL_RUNNING_OF = "SELECT count(*) FROM "
            + "(SELECT snap, pg_snapshot_xmax(snap)::text::numeric AS m FROM pg_current_snapshot() snap) s, "
            + "unnest(?::bigint[]) x WHERE NOT pg_visible_in_snapshot("
            + "(s.m + mod(x - mod(s.m, 4294967296) + 6442450944, 4294967296) - 2147483648)::text::xid8, s.snap)";
    /**
     * Of the given transactions, those a new snapshot does not see yet: running, or committing (their commit record
     * written, their id not yet out of the server's list of running transactions). Asked of a snapshot, the very thing
     * the pass that follows reads with, so the answer does not rest on the order in which a server version's
     * {@code pg_xact_status} looks at that list and at the commit log.
     */
    private static final String STILL_RUNNING = "SELECT count(*) FROM pg_current_snapshot() snap, unnest(?::text[]) x "
            + "WHERE NOT pg_visible_in_snapshot(x::xid8, snap)";

    private RunningTransactions() {
    }

    /**
     * Waits until none of the transactions {@code txIds} (32-bit, as logical decoding reports them) is in progress,
     * looking every 10 ms; false when {@code maxWait} passed first. {@code c} must be in autocommit mode.
     */
    static boolean awaitEnded(Connection c, long[] txIds, Duration maxWait) throws SQLException, InterruptedException {
        long deadline = System.nanoTime() + maxWait.toNanos();
        try (PreparedStatement ps = c.prepareStatement(STILL_RUNNING_OF)) {
            ps.setArray(1, c.createArrayOf("bigint", Arrays.stream(txIds).boxed().toArray()));
            return poll(ps, deadline, () -> true);
        }
    }

    /**
     * Waits until no transaction that was in progress when this was called still is, looking every 10 ms; false when
     * {@code maxWait} passed first or {@code keepGoing} turned false. {@code c} must be in autocommit mode.
     */
    static boolean awaitEnded(Connection c, Duration maxWait, BooleanSupplier keepGoing)
            throws SQLException, InterruptedException {
        Object[] running;
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(RUNNING)) {
            rs.next();
            running = (Object[]) rs.getArray(1).getArray();
        }
        if (running.length == 0) {
            return true;
        }
        long deadline = System.nanoTime() + maxWait.toNanos();
        try (PreparedStatement ps = c.prepareStatement(STILL_RUNNING)) {
            ps.setArray(1, c.createArrayOf("text", running));
            return poll(ps, deadline, keepGoing);
        }
    }

    /** Runs {@code stillRunning} (a count) every 10 ms until it is 0 (true), the deadline passed or keepGoing is false. */
    private static boolean poll(PreparedStatement stillRunning, long deadline, BooleanSupplier keepGoing)
            throws SQLException, InterruptedException {
        while (true) {
            try (ResultSet rs = stillRunning.executeQuery()) {
                rs.next();
                if (rs.getLong(1) == 0) {
                    return true;
                }
            }
            if (System.nanoTime() > deadline || !keepGoing.getAsBoolean()) {
                return false;
            }
            TimeUnit.MILLISECONDS.sleep(10);
        }
    }
}
