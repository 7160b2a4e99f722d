package dev.outboxkit.relay.cdc.internal;

import dev.outboxkit.core.spi.Transactions;
import dev.outboxkit.relay.RelayMetric;
import dev.outboxkit.runtime.LeaseTable;
import dev.outboxkit.runtime.Liveness;
import dev.outboxkit.runtime.Meters;
import dev.outboxkit.runtime.Takeovers;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import javax.sql.DataSource;

/**
 * The lease {@code cdc/<slot>} in {@code outbox_relay_lease} (statements shared with the poller, {@link LeaseTable}):
 * only its holder streams the slot.
 * Taking it draws a new fencing token from {@code outbox_fence_seq}; every offset write, delete and
 * dead-letter insert of the holder checks that the token is still the lease's (see {@link #checkFence}).
 * Expiry is judged by the database clock, so instances need no synchronised clocks. A holder whose process is gone
 * (its {@link Liveness} lock vanished with its connection: kill -9, OOM kill) loses the lease to the first standby that
 * looks, without waiting for its expiry.
 */
final class LeaseKeeper {

    /** Who holds the lease now (for health and logs). */
    record Holder(String holder, long fence, boolean live) {
    }

    private final DataSource dataSource;
    private final String leaseKey;
    private final String instanceId;
    private final Duration duration;
    private final LeaseTable table;
    private final Liveness liveness;
    private final Takeovers takeovers;

    /** For tests: takeovers counted nowhere. */
    LeaseKeeper(DataSource dataSource, SlotTerms terms, String instanceId, Duration duration) {
        this(dataSource, terms, instanceId, duration, new Takeovers(new Meters(new SimpleMeterRegistry(), RelayMetric.CDC, Tags.empty())));
    }

    /** @param duration the lease's duration ({@code LeaseTiming#lease}) */
    LeaseKeeper(DataSource dataSource, SlotTerms terms, String instanceId, Duration duration, Takeovers takeovers) {
        this.dataSource = dataSource;
        this.leaseKey = terms.leaseKey();
        this.instanceId = instanceId;
        this.duration = duration;
        this.table = new LeaseTable(terms.schema());
        this.takeovers = takeovers;
        this.liveness = new Liveness(dataSource, terms.schema(), leaseKey, instanceId,
                "CDC relay " + instanceId + " on slot " + terms.slotName(), duration);
    }

    String leaseKey() {
        return leaseKey;
    }

    /**
     * A new fencing token when the lease was free, expired, or held under this instance's own id (a process
     * restarted after a crash takes its lease back at once; should the old one still run, the new token
     * fences it out), or whose holder's process is gone. Empty while another holder's lease is live and its process
     * runs, and while this instance does not hold its own liveness lock. Cheap while the lease is held: one read of
     * the lease row and one of {@code pg_locks}, no lock taken.
     */
    Optional<Acquired> tryAcquire() throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            // before the lease: a holder without its liveness lock would look dead to the others
            boolean alive = liveness.hold();
            c.setAutoCommit(false);
            try {
                LeaseTable.Holder current = table.holder(c, leaseKey);
                Set<String> gone = Set.of();
                if (current != null && current.live() && !current.holder().equals(instanceId)) {
                    gone = liveness.gone(c, Set.of(current.holder()));
                    if (gone.isEmpty()) {
                        c.commit();
                        return Optional.empty();
                    }
                }
                if (!alive) {
                    c.commit();
                    return Optional.empty();
                }
                List<LeaseTable.Taken> taken = table.take(c, List.of(leaseKey), instanceId, duration, true, gone);
                c.commit();
                taken.forEach(takeovers::count);
                return taken.stream().findFirst().map(t -> new Acquired(t.fence(), t.previousHolder(), t.from()));
            } catch (SQLException | RuntimeException e) {
                c.rollback();
                throw e;
            }
        }
    }

    /** A taken lease: the new fencing token, who held the lease before (null when nobody did) and why it was free. */
    record Acquired(long fence, String previousHolder, LeaseTable.From from) {
    }

    /** Extends the lease; false when it is no longer ours (it expired, or another instance took it). */
    boolean renew(long fence) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            liveness.hold(); // takes the lock again should its connection have broken
            c.setAutoCommit(true);
            return !table.renew(c, Map.of(leaseKey, fence), instanceId, duration).isEmpty();
        }
    }

    /** Lets a standby take over at once (graceful stop). */
    void release(long fence) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(true);
            table.release(c, Map.of(leaseKey, fence), instanceId);
        }
    }

    /**
     * A standby's wait between looks at the lease: returns early (true) when an instance gave a lease of this schema
     * back (a graceful stop announces it at its commit), so the standby takes over within milliseconds.
     */
    boolean awaitRelease(Duration timeout) throws InterruptedException {
        return liveness.awaitRelease(timeout);
    }

    /** Releases the liveness lock (a graceful stop, after the lease was given back). */
    void closeLiveness() {
        liveness.close();
    }

    /** {@link Liveness#release}: null when released, else why not (the caller reports it). */
    String releaseLiveness(Duration patience) {
        return liveness.release(patience);
    }

    /** Whether the database answers a round trip on the liveness connection within {@code within}. */
    boolean databaseAnswers(Duration within) {
        return liveness.answers(within);
    }

    Holder holder() throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(true);
            LeaseTable.Holder h = table.holder(c, leaseKey);
            return h == null ? null : new Holder(h.holder(), h.fence(), h.live());
        }
    }

    /** Work done in a fenced transaction. */
    interface SqlWork {
        void run(Connection c) throws SQLException;
    }

    /**
     * Runs {@code work} in one transaction on {@code c} that first checks {@code fence} ({@link #checkFence});
     * commits, or rolls back and rethrows; the connection's auto-commit setting is restored ({@link Transactions}).
     */
    void inFencedTransaction(Connection c, long fence, SqlWork work) throws SQLException {
        Transactions.inTransaction(c, tx -> {
            checkFence(tx, fence);
            work.run(tx);
            return null;
        });
    }

    /**
     * Inside the caller's transaction: throws {@link FencedWriteException} unless {@code fence} is still the
     * lease's token. It takes no lock on purpose: a holder frozen in the middle of a transaction must not
     * block the takeover (the new holder ends the old holder's sessions right after taking the lease, see
     * {@link SlotGuard#terminateSessionsOf}). A write that checked just before the takeover and commits
     * just after it is harmless: it records only what Kafka had acknowledged, and offsets never go to a
     * smaller token once the new holder wrote.
     */
    void checkFence(Connection c, long fence) throws SQLException {
        long current = table.currentFence(c, leaseKey);
        if (current != fence) {
            throw new FencedWriteException("lease " + leaseKey + " now has fencing token " + current
                    + ", this instance (" + instanceId + ") holds " + fence + ": another instance took over");
        }
    }
}
