package dev.outboxkit.relay.poller.internal;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;

/**
 * Claims a batch: in one round trip, the transaction's settings and the claim of the rows of the
 * partitions this instance leases that are its claim loop's share ({@link Ownership#share}), re-checking each lease in
 * the database. The transaction stays
 * open in the returned {@link Batch} until {@link Settlement} ends it. Between claims it says how
 * long to wait: growing with each empty claim, short while traffic is likely to go on.
 */
final class Claimer {

    /** Rows per claim in careful mode (after a failure: one record at a time). */
    static final int CAREFUL_BATCH = 50;
    private static final long MIN_IDLE_NANOS = TimeUnit.MICROSECONDS.toNanos(1000);
    /** For a second after rows were found, polls come at least this often (traffic is likely to go on). */
    private static final long ACTIVE_MAX_IDLE_NANOS = TimeUnit.MILLISECONDS.toNanos(2);
    private static final long ACTIVE_PERIOD_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final DataSource dataSource;
    private final PollerSql sql;
    private final LeaseManager leases;
    private final RelayMetrics metrics;
    private final LoopStatus status;
    private final boolean hold;
    /** This claim loop's number and the loop count: it claims the partitions p held with p % loops == loop. */
    private final int loop;
    private final int loops;
    private final String instanceId;
    private final int batchSize;
    private final long maxPollDelayNanos;
    private final Clock clock;
    private final String idleTimeout;
    private final String statementTimeout;

    private int emptyStreak;
    private long activeUntilNanos;

    /**
     * @param loop  this claim loop's number: it claims the held partitions p with {@code p % loops == loop}
     * @param loops the claim loop count
     */
    Claimer(ClaimTerms terms, DataSource dataSource, PollerSql sql, LeaseManager leases, RelayMetrics metrics,
            LoopStatus status, boolean hold, int loop, int loops) {
        this.dataSource = dataSource;
        this.sql = sql;
        this.leases = leases;
        this.metrics = metrics;
        this.status = status;
        this.hold = hold;
        this.loop = loop;
        this.loops = loops;
        this.instanceId = terms.instanceId();
        this.batchSize = terms.batchSize();
        this.maxPollDelayNanos = terms.maxPollDelay().toNanos();
        this.clock = terms.clock();
        this.idleTimeout = Long.toString(terms.timing().idleTransactionTimeout().toMillis());
        this.statementTimeout = Long.toString(terms.timing().ackBudget().toMillis());
    }

    /** True when the last claims found nothing: wait {@link #idleDelayNanos()} before the next. */
    boolean idle() {
        return emptyStreak > 0;
    }

    long idleDelayNanos() {
        long max = maxPollDelayNanos;
        long delay = emptyStreak > 30 ? max : Math.min(max, MIN_IDLE_NANOS << (emptyStreak - 1));
        if (System.nanoTime() < activeUntilNanos) {
            delay = Math.min(delay, ACTIVE_MAX_IDLE_NANOS);
        }
        return delay;
    }

    /**
     * Claims the next batch in a new transaction; null when there is nothing (or no lease). A failed
     * claim is rolled back and its exception thrown. {@code slice}: one slice ({@link PollerSql#SLICES}), or -1 for all.
     */
    Batch claim(boolean careful, int slice) throws SQLException {
        Ownership own = leases.ownership().share(loop, loops);
        if (own.isEmpty()) {
            // standby (or every partition of this loop's share lost): poll at the slowest rate; a lease gain wakes us
            emptyStreak = Math.max(emptyStreak + 1, 31);
            return null;
        }
        Connection c = null;
        try {
            c = dataSource.getConnection();
            if (emptyStreak > 0 && !anyRow(c)) {
                // Idle: a cheap look at the index instead of a claim transaction that locks the leases.
                status.databaseTroubleSinceNanos = 0;
                c.close();
                c = null;
                emptyStreak++;
                status.lastProgressNanos = System.nanoTime();
                return null;
            }
            c.setAutoCommit(false);
            List<ClaimedRow> rows = claimRows(c, own, careful, slice);
            status.databaseTroubleSinceNanos = 0;
            if (rows.isEmpty()) {
                c.commit();
                c.close();
                emptyStreak++;
                status.lastProgressNanos = System.nanoTime();
                return null;
            }
            emptyStreak = 0;
            activeUntilNanos = System.nanoTime() + ACTIVE_PERIOD_NANOS;
            metrics.batch(rows.size());
            status.lastBatchSize = rows.size();
            Batch b = new Batch(c, own, rows, hold, careful, clock);
            c = null;
            return b;
        } finally {
            if (c != null) {
                Jdbc.rollbackQuietly(c);
                Jdbc.closeQuietly(c);
            }
        }
    }

    /** Runs the claim statement on {@code c} (its transaction stays open) and reads the claimed rows. */
    private List<ClaimedRow> claimRows(Connection c, Ownership own, boolean careful, int slice) throws SQLException {
        List<ClaimedRow> rows = new ArrayList<>();
        // One round trip: the transaction's settings (PollerSql.claimSettings), then the claim.
        String claim = slice < 0 ? (own.holdsAll() ? sql.claimAll : sql.claimSome)
                : (own.holdsAll() ? sql.claimAllSlice[slice] : sql.claimSomeSlice[slice]);
        try (PreparedStatement ps = c.prepareStatement(claim)) {
            ps.setString(1, idleTimeout);
            ps.setString(2, statementTimeout);
            ps.setString(3, statementTimeout);
            ps.setArray(4, Jdbc.ints(c, own.partitions()));
            ps.setArray(5, Jdbc.longs(c, own.fences()));
            ps.setString(6, instanceId);
            ps.setInt(7, careful ? Math.min(CAREFUL_BATCH, batchSize) : batchSize);
            ps.execute();
            if (!ps.getMoreResults()) {
                throw new SQLException("the claim statement returned no rows result");
            }
            try (ResultSet rs = ps.getResultSet()) {
                while (rs.next()) {
                    rows.add(ClaimedRow.read(rs));
                }
            }
        }
        return rows;
    }

    private boolean anyRow(Connection c) throws SQLException {
        c.setAutoCommit(true);
        try (PreparedStatement ps = c.prepareStatement(sql.anyRow); ResultSet rs = ps.executeQuery()) {
            return rs.next();
        }
    }
}
