package dev.outboxkit.relay.poller.internal;

import dev.outboxkit.runtime.LeaseTable;
import dev.outboxkit.runtime.LeaseTiming;
import dev.outboxkit.runtime.Liveness;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Not API: public for {@code dev.outboxkit.relay.poller.PollingRelay}.
 *
 * <p>Membership and partition leases of one instance. On every heartbeat it renews its membership
 * and its leases, computes its fair share of the partitions among the live members (sorted by
 * id: the first {@code partitions % members} get one more), gives back what is above it and takes
 * free or expired partitions up to it, each with a new fencing token from the database sequence.
 *
 * <p>A member whose process is gone (its {@link Liveness} lock vanished with its connection: kill -9, OOM kill) is
 * dropped from the members at once and its partitions are free to take, without waiting for their expiry. Between
 * heartbeats {@link #watch()} looks for such members every {@link LeaseTiming#LIVENESS_LOOK} on the liveness connection, and
 * runs a heartbeat at once when another instance gives leases back (a graceful stop or a rebalance announces it), so
 * a handoff costs milliseconds.
 *
 * <p>The claim loop reads {@link #ownership()} before every claim; the claim itself re-checks each
 * lease (holder, fence, expiry) in the database, so a stale view can only make it claim less.
 */
public final class LeaseManager {

    private static final Logger log = LoggerFactory.getLogger(LeaseManager.class);

    private final DataSource dataSource;
    private final PollerSql sql;
    private final String instanceId;
    private final String logPrefix;
    private final int partitions;
    /** How long a lease (and a membership) lasts without renewal. */
    private final Duration lease;
    private final Duration heartbeatInterval;
    private final Duration releaseLockTimeout;
    private final RelayMetrics metrics;
    private final Runnable onGain;
    /** The lock timeout of the stop's release of its leases. */
    private static final long LEAVE_LOCK_MILLIS = 5000;
    private final Liveness liveness;
    /** The other live members seen by the last heartbeat, for {@link #watch()}. */
    private volatile List<String> others = List.of();
    /** Guards changes of {@link #ownership} only (never held across a database call). */
    private final Object ownershipLock = new Object();
    private volatile Ownership ownership;
    private volatile long lastHeartbeatNanos;
    private volatile String lastError;
    private volatile int liveMembers;
    private volatile boolean partitionMismatch;
    private volatile boolean stopped;
    /** Leases given up whose release the database missed, by partition, with their fences (guarded by this object). */
    private final Map<Integer, Long> unreleased = new HashMap<>();
    /** When the watcher last heard a release announced (System.nanoTime), 0 before: for the takeover's log. */
    private volatile long releaseHeardNanos;
    /** When partitions were last gained (System.nanoTime), 0 before: the claim loops log their first batch after it. */
    private volatile long gainedNanos;

    public LeaseManager(DataSource dataSource, PollerSql sql, LeaseTerms terms, RelayMetrics metrics, Runnable onGain) {
        this.dataSource = dataSource;
        this.sql = sql;
        this.instanceId = terms.instanceId();
        this.logPrefix = terms.logPrefix();
        this.partitions = terms.partitions();
        this.lease = terms.timing().lease();
        this.heartbeatInterval = terms.heartbeatInterval();
        this.releaseLockTimeout = terms.releaseLockTimeout();
        this.metrics = metrics;
        this.onGain = onGain;
        this.liveness = new Liveness(dataSource, terms.schema(), "poll", instanceId, logPrefix, lease);
        this.ownership = Ownership.of(Map.of(), partitions);
    }

    public Ownership ownership() {
        return ownership;
    }

    /** When partitions were last gained (System.nanoTime), 0 before the first gain. */
    public long gainedNanos() {
        return gainedNanos;
    }

    /** Nanos (System.nanoTime) of the last heartbeat that reached the database, 0 before the first. */
    public long lastHeartbeatNanos() {
        return lastHeartbeatNanos;
    }

    public String lastError() {
        return lastError;
    }

    public int liveMembers() {
        return liveMembers;
    }

    public boolean partitionMismatch() {
        return partitionMismatch;
    }

    /**
     * Runs until {@link #leave()}, on a thread of its own: a heartbeat at once when another instance gave leases back
     * or a member seen by the last heartbeat is gone (its process died), which takes their partitions. Waits for the
     * release notification on the liveness connection, reading {@code pg_locks} every {@link LeaseTiming#LIVENESS_LOOK} (a crashed member's
     * partitions wait at most that long plus one heartbeat).
     */
    public void watch() {
        try {
            while (!stopped) {
                boolean released = liveness.awaitRelease(LeaseTiming.LIVENESS_LOOK);
                if (released) {
                    releaseHeardNanos = System.nanoTime();
                }
                List<String> seen = others;
                if (!stopped && (released || !seen.isEmpty() && !liveness.gone(seen).isEmpty())) {
                    rebalanceNow();
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** One heartbeat: renew, rebalance. Never throws; failures are logged and kept for health. */
    public void heartbeat() {
        beat(true);
    }

    /**
     * A heartbeat without the renewal (the scheduled ones renew): on a release or a gone member the partitions are
     * taken one commit sooner, which is most of a handoff's time on a busy database.
     */
    private void rebalanceNow() {
        beat(false);
    }

    private void beat(boolean renew) {
        if (stopped) {
            return;
        }
        try (Connection c = dataSource.getConnection()) {
            // after the pool answered (a database that is down costs one connection timeout, not two), before any
            // lease: a member that holds leases without its lock would look dead to the others. Outside this object's
            // lock: hold() waits for the watcher's look on the liveness connection (up to LIVENESS_LOOK), and a stop's
            // leave() must not wait behind that (it did: up to 200 ms more before the handoff)
            boolean alive = liveness.hold();
            if (stopped) {
                // leave() ran meanwhile (it sets stopped before it closes the liveness lock): a hold() after its close
                // took the lock again, which nobody would release
                liveness.close();
                return;
            }
            synchronized (this) {
                if (stopped) {
                    return;
                }
                c.setAutoCommit(false);
                if (renew) {
                    renew(c);
                }
                List<Member> members = members(c);
                lastHeartbeatNanos = System.nanoTime();
                lastError = null;
                giveBackUnreleased(c);
                rebalance(c, members, alive);
            }
        } catch (SQLException | RuntimeException e) {
            lastError = e.getClass().getSimpleName() + ": " + e.getMessage();
            log.warn("{}: lease heartbeat failed ({}); will retry in {} ms. Leases expire {} after the last "
                            + "successful renewal; check that the database is reachable",
                    logPrefix, lastError, heartbeatInterval.toMillis(), lease);
        }
    }

    private void renew(Connection c) throws SQLException {
        Ownership held = ownership;
        Jdbc.setTimeouts(c, 2000);
        try (PreparedStatement ps = c.prepareStatement(sql.memberUpsert)) {
            ps.setString(1, instanceId);
            ps.setInt(2, partitions);
            ps.setLong(3, lease.toMillis());
            ps.executeUpdate();
        }
        Set<Integer> renewed = new HashSet<>();
        for (String key : sql.leases.renew(c, PollerSql.leaseMap(held.partitions(), held.fences()), instanceId,
                lease)) {
            renewed.add(PollerSql.partitionOfKey(key));
        }
        c.commit();
        List<Integer> lost = new ArrayList<>();
        for (int p : held.partitions()) {
            if (!renewed.contains(p)) {
                lost.add(p);
            }
        }
        if (!lost.isEmpty()) {
            stepDown(lost, "could not renew: the lease expired (this instance stalled or lost the database for "
                    + "longer than leaseDuration=" + lease + ") or another instance holds it now");
        }
    }

    /**
     * The claim loop found at commit time that it no longer holds these leases (a newer holder has
     * them, or they expired): drop each one still held under the same fence. Its work was rolled back.
     */
    public void fenced(Ownership claimedUnder, int[] partitions, String why) {
        metrics.fenceRejected();
        List<Integer> lost = new ArrayList<>();
        Ownership now = ownership;
        for (int p : partitions) {
            if (now.fence(p) == claimedUnder.fence(p)) {
                lost.add(p);
            }
        }
        stepDown(lost, why);
    }

    private void stepDown(List<Integer> candidates, String why) {
        Ownership before;
        List<Integer> lost = new ArrayList<>();
        synchronized (ownershipLock) {
            before = ownership;
            for (int p : candidates) {
                if (before.holds(p)) {
                    lost.add(p);
                }
            }
            if (lost.isEmpty()) {
                return;
            }
            ownership = before.without(lost);
        }
        metrics.rebalanced();
        Map<Integer, Long> gone = new TreeMap<>();
        for (int p : lost) {
            gone.put(p, before.fence(p));
        }
        log.warn("{}: FENCED, stepping down from {}: {}. Work in flight on them is rolled back and left to the "
                        + "current holder; nothing is forgotten. Now holding {}",
                logPrefix, describe(gone), why, ownership);
    }

    private record Member(String id, int partitions) {
    }

    private List<Member> members(Connection c) throws SQLException {
        List<Member> out = new ArrayList<>();
        Jdbc.setTimeouts(c, 2000);
        try (PreparedStatement purge = c.prepareStatement(sql.purgeMembers)) {
            purge.executeUpdate();
        }
        try (PreparedStatement ps = c.prepareStatement(sql.members); ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                out.add(new Member(rs.getString(1), rs.getInt(2)));
            }
        }
        Set<String> gone = liveness.gone(c, out.stream().map(Member::id).toList());
        if (!gone.isEmpty()) {
            try (PreparedStatement ps = c.prepareStatement(sql.purgeGoneMembers)) {
                ps.setArray(1, c.createArrayOf("text", gone.toArray()));
                ps.executeUpdate();
            }
            out.removeIf(m -> gone.contains(m.id()));
            log.warn("{}: {} gone (the database closed {} session: a crash, kill -9 or OOM kill); its "
                            + "partitions are taken over now, with new fencing tokens", logPrefix,
                    String.join(", ", new TreeSet<>(gone)), gone.size() == 1 ? "its" : "their");
        }
        c.commit();
        others = out.stream().map(Member::id).filter(id -> !id.equals(instanceId)).toList();
        return out;
    }

    private void rebalance(Connection c, List<Member> members, boolean alive) throws SQLException {
        liveMembers = members.size();
        List<String> disagree = new ArrayList<>();
        for (Member m : members) {
            if (m.partitions() != partitions) {
                disagree.add(m.id() + " (" + m.partitions() + ")");
            }
        }
        if (!disagree.isEmpty()) {
            if (!partitionMismatch) {
                log.error("{}: live instances disagree on the partition count: this one has {}, {} {}. An "
                                + "aggregate would map to two partitions and lose its order, so this instance takes no "
                                + "leases until all run with the same 'partitions' setting",
                        logPrefix, partitions, String.join(", ", disagree),
                        disagree.size() == 1 ? "differs" : "differ");
            }
            partitionMismatch = true;
            release(c, ownership.toMap(), "the partition count is in dispute");
            return;
        }
        partitionMismatch = false;
        int target = fairShare(members);
        Ownership held = ownership;
        if (held.size() > target) {
            TreeMap<Integer, Long> surplus = new TreeMap<>(Collections.reverseOrder());
            surplus.putAll(held.toMap());
            Map<Integer, Long> give = new HashMap<>();
            for (Map.Entry<Integer, Long> e : surplus.entrySet()) {
                if (give.size() == held.size() - target) {
                    break;
                }
                give.put(e.getKey(), e.getValue());
            }
            release(c, give, "rebalancing: " + members.size() + " live instances, fair share " + target);
        } else if (held.size() < target && alive) {
            acquire(c, target - held.size(), target);
        }
    }

    private int fairShare(List<Member> members) {
        int n = Math.max(1, members.size());
        int index = 0;
        boolean found = false;
        for (int i = 0; i < members.size(); i++) {
            if (members.get(i).id().equals(instanceId)) {
                index = i;
                found = true;
            }
        }
        if (!found) {
            n = members.size() + 1;
            index = members.size();
        }
        int p = partitions;
        return p / n + (index < p % n ? 1 : 0);
    }

    private void acquire(Connection c, int wanted, int target) throws SQLException {
        Map<Integer, String> taken = new HashMap<>();
        Jdbc.setTimeouts(c, 2000);
        for (Map.Entry<String, String> e : sql.leases.liveKeys(c, PollerSql.LEASE_PREFIX).entrySet()) {
            taken.put(PollerSql.partitionOfKey(e.getKey()), e.getValue());
        }
        Set<String> gone = liveness.gone(c, new HashSet<>(taken.values()));
        c.commit();
        List<Integer> free = new ArrayList<>();
        for (int p = 0; p < partitions; p++) {
            String holder = taken.get(p);
            if ((holder == null || gone.contains(holder)) && !ownership.holds(p)) {
                free.add(p);
            }
        }
        if (free.isEmpty()) {
            return;
        }
        Collections.shuffle(free);
        List<String> keys = new ArrayList<>();
        for (int p : free.subList(0, Math.min(wanted, free.size()))) {
            keys.add(PollerSql.leaseKey(p));
        }
        Map<Integer, Long> gained = new HashMap<>();
        Jdbc.setTimeouts(c, 2000);
        try {
            for (LeaseTable.Taken t : sql.leases.take(c, keys, instanceId, lease, false, gone)) {
                gained.put(PollerSql.partitionOfKey(t.key()), t.fence());
                metrics.tookOver(t);
            }
            c.commit();
        } catch (SQLException e) {
            Jdbc.rollbackQuietly(c);
            throw e;
        }
        if (!gained.isEmpty()) {
            synchronized (ownershipLock) {
                ownership = ownership.with(gained);
            }
            metrics.rebalanced();
            long now = System.nanoTime();
            gainedNanos = now;
            long heard = releaseHeardNanos;
            String after = heard != 0 && now - heard < TimeUnit.SECONDS.toNanos(5)
                    ? " (" + TimeUnit.NANOSECONDS.toMillis(now - heard) + " ms after a release was announced)" : "";
            log.info("{}: acquired {}{}; holding {} of a fair share of {}", logPrefix,
                    describe(gained), after, ownership, target);
            onGain.run();
        }
    }

    private void release(Connection c, Map<Integer, Long> give, String why) throws SQLException {
        if (give.isEmpty()) {
            return;
        }
        // Stop claiming first; the DELETE then waits for claims in flight on them (they hold KEY SHARE).
        synchronized (ownershipLock) {
            ownership = ownership.without(give.keySet());
        }
        metrics.rebalanced();
        giveBack(c, give, why);
    }

    /** Deletes leases this instance no longer claims under; fenced, so a lease taken since is left alone. */
    private void giveBack(Connection c, Map<Integer, Long> give, String why) throws SQLException {
        int[] parts = give.keySet().stream().mapToInt(Integer::intValue).toArray();
        long[] fences = new long[parts.length];
        for (int i = 0; i < parts.length; i++) {
            fences[i] = give.get(parts[i]);
        }
        Jdbc.setTimeouts(c, releaseLockTimeout.toMillis());
        try {
            sql.leases.release(c, PollerSql.leaseMap(parts, fences), instanceId);
            c.commit();
            log.info("{}: released {} ({}); holding {}", logPrefix, describe(give), why, ownership);
        } catch (SQLException e) {
            Jdbc.rollbackQuietly(c);
            // the database went away mid-handoff (a failover): the next heartbeat that reaches it gives them back, so
            // the instance they go to waits for that rather than for the lease to expire
            unreleased.putAll(give);
            log.warn("{}: could not release {} ({}); given back at the next heartbeat that reaches the database, or "
                    + "they expire by themselves after {}", logPrefix, give.keySet(), e.getMessage(),
                    lease);
        }
    }

    /** Leases a release could not give back (guarded by this object's lock). */
    private void giveBackUnreleased(Connection c) throws SQLException {
        if (unreleased.isEmpty()) {
            return;
        }
        Map<Integer, Long> again = new HashMap<>(unreleased);
        unreleased.clear();
        giveBack(c, again, "a release the database missed");
    }

    /**
     * Graceful stop (the claim loop has already finished its batch): gives back every lease and
     * the membership at once, so the other instances take over without waiting for expiry.
     */
    public void leave() {
        stopped = true; // before the lock: a heartbeat waiting for it, or for the liveness connection, ends at once
        synchronized (this) {
            leaveLocked();
        }
    }

    private void leaveLocked() {
        try {
            leaveGroup();
        } finally {
            liveness.close(); // after the leases are given back: nobody needs to notice this stop
        }
    }

    private void leaveGroup() {
        Ownership held;
        synchronized (ownershipLock) {
            held = ownership;
            ownership = Ownership.of(Map.of(), partitions);
        }
        try (Connection c = dataSource.getConnection()) {
            // a database cut off without a FIN (lost node, partition) would hold the stop until TCP keepalive gave up,
            // minutes later: past the server's own statement timeout below, the release is given up (leases expire)
            c.setNetworkTimeout(Runnable::run, (int) Jdbc.statementTimeout(LEAVE_LOCK_MILLIS) + 1000);
            c.setAutoCommit(false);
            Jdbc.setTimeouts(c, LEAVE_LOCK_MILLIS);
            try (PreparedStatement member = c.prepareStatement(sql.memberLeave)) {
                int n = sql.leases.releaseAll(c, instanceId, PollerSql.LEASE_PREFIX);
                member.setString(1, instanceId);
                member.executeUpdate();
                c.commit();
                log.info("{}: released {} lease{} and left", logPrefix, n, n == 1 ? "" : "s");
            }
        } catch (SQLException e) {
            log.warn("{}: could not release its {} on stop ({}); they expire by themselves after {}",
                    logPrefix, held, e.getMessage(), lease);
        }
    }

    /** "poll/{0-3,7} (fences 12..40)": partitions as ranges, with the span of their fences. */
    static String describe(Map<Integer, Long> leases) {
        TreeMap<Integer, Long> sorted = new TreeMap<>(leases);
        StringBuilder out = new StringBuilder(PollerSql.LEASE_PREFIX).append('{');
        Integer start = null;
        Integer previous = null;
        for (int p : sorted.keySet()) {
            if (previous != null && p == previous + 1) {
                previous = p;
                continue;
            }
            if (start != null) {
                out.append(start.equals(previous) ? "" + start : start + "-" + previous).append(',');
            }
            start = p;
            previous = p;
        }
        if (start != null) {
            out.append(start.equals(previous) ? "" + start : start + "-" + previous);
        }
        out.append('}');
        if (!sorted.isEmpty()) {
            long min = sorted.values().stream().mapToLong(Long::longValue).min().orElse(0);
            long max = sorted.values().stream().mapToLong(Long::longValue).max().orElse(0);
            out.append(min == max ? " (fence " + min + ")" : " (fences " + min + ".." + max + ")");
        }
        return out.toString();
    }
}
