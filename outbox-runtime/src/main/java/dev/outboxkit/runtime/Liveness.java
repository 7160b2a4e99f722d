package dev.outboxkit.runtime;

import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Collection;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import javax.sql.DataSource;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Not API: how relay instances learn within milliseconds that a lease holder's process is gone, for both relays.
 *
 * <p>Each instance holds a session-level advisory lock on a connection of its own for as long as it runs. A process
 * that dies (kill -9, OOM kill, crash) has its connections closed by the kernel, and PostgreSQL drops the lock the
 * moment it sees the socket close; a frozen or partitioned process keeps its connection and so its lock. Others read
 * {@code pg_locks} (readable by every role) and treat a holder whose lock is gone as dead: they take its leases at
 * once, through the lease protocol with new fencing tokens ({@link LeaseTable#take}). This is liveness only: should the
 * signal be wrong (the holder lost just this one connection), the fencing tokens still refuse every write of the old
 * holder, exactly as after a lease expiry.
 *
 * <p>A database server that restarted (crash, failover of a container) lost every session and so every lock: for one
 * lease after its start nobody counts as gone, so instances that are merely reconnecting keep their leases. A standby
 * promoted to primary has none of the old primary's locks either, but its own, older start time: so an instance that
 * finds its liveness connection on another server than before (a different {@code pg_postmaster_start_time()}: a
 * restart or a failover) counts nobody as gone for one lease from then, and never judges locks on a server other than
 * the one that holds its own. The others reconnect meanwhile and take their locks again; one that does not is taken
 * over at lease expiry, as without this signal.
 *
 * <p>The lock key is the two-int form {@code (}{@value #LOCK_CLASS}{@code , hashtext(<scope>/<instance id>))}: the
 * fixed class id keeps it apart from applications' one-bigint advisory locks and from two-int locks of other classes.
 * A hash collision between two instance ids only makes the other look alive (takeover at lease expiry, as without
 * this signal).
 *
 * <p>The same connection LISTENs for {@link LeaseTable#RELEASED_CHANNEL}: an instance that stops gracefully (or
 * rebalances) gives its leases back, and {@link #awaitRelease} wakes the others at that commit, so a handoff costs
 * milliseconds rather than the next look at the lease table.
 *
 * <p>Thread-safe: one liveness connection per instance, used by one thread at a time under a fair lock (a watcher that
 * waits for releases in a loop must not starve the heartbeat).
 */
public final class Liveness implements AutoCloseable {

    /** The advisory lock class id of outboxkit's liveness locks ({@code 0x6F62786B}, "obxk" in ASCII). */
    public static final int LOCK_CLASS = 0x6F62786B;

    /**
     * How long {@link #close()} waits for the database: a relay cut off from it without a FIN (lost node, partition)
     * would otherwise wait until TCP keepalive gives up, minutes later, and never exit on its own.
     */
    public static final Duration CLOSE_PATIENCE = Duration.ofSeconds(2);

    private static final Logger log = LoggerFactory.getLogger(Liveness.class);
    private static final String KEY = "hashtext(? || '/' || ?)";
    private static final String LOCK = "SELECT pg_try_advisory_lock(" + LOCK_CLASS + ", " + KEY + ")";
    private static final String UNLOCK = "SELECT pg_advisory_unlock(" + LOCK_CLASS + ", " + KEY + ")";
    /** PostgreSQL 14+ may end idle sessions (idle_session_timeout); this one idles by design. */
    private static final String NEVER_IDLE_OUT = "SELECT set_config('idle_session_timeout', '0', false)"
            + " WHERE current_setting('server_version_num')::int >= 140000";
    /**
     * A server that (re)started less than a lease ago lost every session and lock: its instances are reconnecting,
     * not dead, so until then nobody is reported gone (their leases expire as without this signal).
     */
    private static final String GONE = "SELECT pg_postmaster_start_time()::text, array(SELECT h FROM unnest(?::text[]) AS h"
            + " WHERE pg_postmaster_start_time() < statement_timestamp() - ? * interval '1 millisecond'"
            + " AND NOT EXISTS (SELECT 1 FROM pg_locks l"
            + " WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2"
            + " AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())"
            + " AND l.classid = " + LOCK_CLASS + "::oid AND l.objid = hashtext(? || '/' || h)::oid))";
    /** Which server (and which run of it) a connection reached: a restart or a failover changes it. */
    private static final String SERVER_STARTED = "SELECT pg_postmaster_start_time()::text";

    private final DataSource dataSource;
    private final String schema;
    private final String scope;
    private final String instanceId;
    private final String who;
    private final Duration trustAfterStart;
    private final ReentrantLock lock = new ReentrantLock(true);
    /** Written under {@link #lock}; volatile so that {@link #release} can abort it while another thread is stuck on it. */
    private volatile Connection connection;
    private boolean warned;
    /** {@code pg_postmaster_start_time()} of the server that holds this instance's lock; null before the first lock. */
    private volatile String lockServer;
    /** When (System.nanoTime) the lock was last taken on another server than before; 0 when it never was. */
    private volatile long serverChangedNanos;

    /**
     * @param dataSource where the lock's connection comes from (it keeps one connection for the relay's life)
     * @param schema     the outboxkit schema: its lease releases wake {@link #awaitRelease}
     * @param group      keeps the relays of one schema apart, e.g. {@code poll} (the lock's scope is
     *                   {@code <schema>/<group>})
     * @param who        how logs name this relay, e.g. {@code poll relay relay-1}
     * @param lease      the lease duration: for this long after the database server started nobody counts as gone
     */
    public Liveness(DataSource dataSource, String schema, String group, String instanceId, String who, Duration lease) {
        this.dataSource = dataSource;
        this.schema = schema;
        this.scope = schema + "/" + group;
        this.instanceId = instanceId;
        this.who = who;
        this.trustAfterStart = lease;
    }

    /**
     * Makes sure this instance holds its lock: takes it (on a new connection if the old one broke) unless held. Call
     * before taking any lease and on every heartbeat. Returns whether the lock is held; never throws.
     */
    public boolean hold() {
        lock.lock();
        try {
            return holdLocked();
        } finally {
            lock.unlock();
        }
    }

    private boolean holdLocked() {
        if (connection != null) {
            try {
                if (connection.isValid(2)) {
                    return true;
                }
            } catch (SQLException e) {
                // fall through: a new connection
            }
            log.warn("{}: its liveness connection broke; taking the liveness lock again on a new one (meanwhile "
                    + "others may take its leases; its fencing tokens refuse any write it tries after that)", who);
            Connection broken = connection;
            connection = null;
            if (dataSource instanceof HikariDataSource pool) {
                pool.evictConnection(broken); // else the pool could hand the dead connection straight back
            } else {
                closeQuietly(broken);
            }
        }
        Connection c = null;
        try {
            c = dataSource.getConnection();
            c.setAutoCommit(true);
            try (PreparedStatement ps = c.prepareStatement(NEVER_IDLE_OUT)) {
                ps.execute();
            }
            boolean locked;
            try (PreparedStatement ps = c.prepareStatement(LOCK)) {
                ps.setString(1, scope);
                ps.setString(2, instanceId);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    locked = rs.getBoolean(1);
                }
            }
            if (!locked) {
                if (!warned) {
                    warned = true;
                    log.warn("{}: its liveness lock ({}, hashtext('{}/{}')) is held by another session: another "
                                    + "process runs with the same instance id (give each instance its own), or it is "
                                    + "restarting. Until it gets the lock a crash of this instance is noticed at lease "
                                    + "expiry only; retrying on every heartbeat", who, LOCK_CLASS, scope, instanceId);
                }
                c.close();
                return false;
            }
            try (Statement s = c.createStatement()) {
                s.execute("LISTEN " + LeaseTable.RELEASED_CHANNEL);
            }
            noteServer(c);
            connection = c;
            if (warned) {
                log.info("{}: holds its liveness lock now", who);
                warned = false;
            }
            return true;
        } catch (SQLException | RuntimeException e) {
            if (c != null) {
                try {
                    c.close();
                } catch (SQLException ignored) {
                    // already broken
                }
            }
            log.debug("{}: could not take its liveness lock ({}); retrying on the next heartbeat", who, e.toString());
            return false;
        }
    }

    /**
     * Those of {@code holders} (instance ids, this one excluded) whose process is gone: nobody holds their liveness
     * lock. Runs on {@code c}, in its transaction if any; reads {@code pg_locks} only.
     */
    public Set<String> gone(Connection c, Collection<String> holders) throws SQLException {
        Set<String> out = new HashSet<>();
        Set<String> others = new HashSet<>(holders);
        others.remove(instanceId);
        if (others.isEmpty()) {
            return out;
        }
        try (PreparedStatement ps = c.prepareStatement(GONE)) {
            ps.setArray(1, c.createArrayOf("text", others.toArray()));
            ps.setLong(2, trustAfterStart.toMillis());
            ps.setString(3, scope);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                if (!judges(rs.getString(1))) {
                    return out;
                }
                for (Object holder : (Object[]) rs.getArray(2).getArray()) {
                    out.add((String) holder);
                }
            }
        }
        return out;
    }

    /**
     * Whether locks on the server that started at {@code serverStarted} tell who is gone: only on the server that holds
     * this instance's own lock, and not within a lease of that lock moving to another server (a restart or a failover:
     * the others are reconnecting too).
     */
    private boolean judges(String serverStarted) {
        long changed = serverChangedNanos;
        return serverStarted.equals(lockServer)
                && (changed == 0 || System.nanoTime() - changed >= trustAfterStart.toNanos());
    }

    /** Records which server {@code c}, the new lock's connection, reached; a change starts a lease of trust. */
    private void noteServer(Connection c) throws SQLException {
        String started;
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(SERVER_STARTED)) {
            rs.next();
            started = rs.getString(1);
        }
        String before = lockServer;
        if (before != null && !before.equals(started)) {
            serverChangedNanos = System.nanoTime();
            log.info("{}: its liveness lock is on another database server run now (restarted or failed over: started at "
                    + "{}, before {}); for the next {} nobody counts as gone, while every instance reconnects", who,
                    started, before, trustAfterStart);
        }
        lockServer = started;
    }

    /**
     * {@link #gone(Connection, Collection)} on the liveness connection itself (no pool connection used): empty when
     * this instance holds no lock or the read fails.
     */
    public Set<String> gone(Collection<String> holders) {
        lock.lock();
        try {
            return connection == null ? Set.of() : gone(connection, holders);
        } catch (SQLException e) {
            log.debug("{}: liveness read failed ({}); the next heartbeat reconnects", who, e.toString());
            return Set.of();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Waits up to {@code timeout} for a lease release in this schema ({@link LeaseTable#RELEASED_CHANNEL}, announced
     * by any instance at its commit); true when one came. Without its connection (not yet taken, broken) it waits the
     * timeout out and returns false: the next {@link #hold()} reconnects. Blocks the other methods meanwhile, so keep
     * the timeout short.
     */
    public boolean awaitRelease(Duration timeout) throws InterruptedException {
        lock.lockInterruptibly();
        try {
            if (connection != null) {
                try {
                    PGNotification[] notes = connection.unwrap(PGConnection.class)
                            .getNotifications((int) Math.max(1, timeout.toMillis()));
                    if (notes != null) {
                        for (PGNotification n : notes) {
                            if (schema.equals(n.getParameter())) {
                                return true;
                            }
                        }
                    }
                    return false;
                } catch (SQLException e) {
                    log.debug("{}: waiting for lease releases failed ({}); the next heartbeat reconnects", who, e.toString());
                }
            }
        } finally {
            lock.unlock();
        }
        Thread.sleep(timeout.toMillis());
        return false;
    }

    /**
     * Releases the lock and gives its connection back (a pool would otherwise keep the lock on an idle connection):
     * a graceful stop has given its leases back already. Waits at most about twice {@link #CLOSE_PATIENCE} for the
     * database; when it does not answer, says at WARN what was left and why that is safe.
     */
    @Override
    public void close() {
        String failed = release(CLOSE_PATIENCE);
        if (failed != null) {
            log.warn("{}: could not release its liveness lock ({}). Safe: PostgreSQL drops the lock when it ends this "
                    + "session, which it does once TCP keepalive (or tcp_user_timeout) finds this host silent, and this "
                    + "instance's leases expire on their own, after which others take them over with new fencing "
                    + "tokens", who, failed);
        }
    }

    /**
     * Whether the database answers on the liveness connection within {@code within} (a {@link Connection#isValid}
     * round trip). False when the connection is missing or another thread has been stuck on it for that long.
     */
    public boolean answers(Duration within) {
        try {
            if (!lock.tryLock(within.toMillis(), TimeUnit.MILLISECONDS)) {
                return false;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
        try {
            Connection c = connection;
            return c != null && c.isValid((int) Math.max(1, within.toSeconds()));
        } catch (SQLException e) {
            return false;
        } finally {
            lock.unlock();
        }
    }

    /**
     * {@link #close()} without its WARN, for a caller that reports the whole stop in one: releases the lock, waiting
     * at most {@code patience} for the liveness connection to be free (else it aborts the connection under the thread
     * stuck on it) and at most {@code patience} for each statement. Returns null when the lock was released (or none
     * was held), else why not.
     */
    public String release(Duration patience) {
        boolean locked = false;
        try {
            locked = lock.tryLock(patience.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        Connection c = connection;
        if (!locked) {
            // another thread waits on the database with this connection: closing its socket ends that wait
            abort(c);
            connection = null;
            return c == null ? null : "its connection was busy for " + patience + " (the database does not answer); "
                    + "closed it without releasing";
        }
        try {
            if (c == null) {
                return null;
            }
            String failed = null;
            try {
                if (c.unwrap(Connection.class).isClosed()) {
                    abort(c); // the driver closed it after an I/O error: evicted before the pool could complain of it
                    closeQuietly(c);
                    connection = null;
                    return "its connection broke (the database does not answer)";
                }
                c.setNetworkTimeout(Runnable::run, (int) patience.toMillis());
                try (Statement s = c.createStatement()) {
                    s.execute("UNLISTEN " + LeaseTable.RELEASED_CHANNEL); // a pool's next user must not get our notifications
                }
                try (PreparedStatement ps = c.prepareStatement(UNLOCK)) {
                    ps.setString(1, scope);
                    ps.setString(2, instanceId);
                    ps.execute();
                }
            } catch (SQLException e) {
                failed = "the database did not answer within " + patience + ": " + e.getMessage();
                abort(c);
            }
            closeQuietly(c);
            connection = null;
            return failed;
        } finally {
            lock.unlock();
        }
    }

    /** Closes {@code c}'s socket at once, whatever waits on it (a pool then discards it). */
    private void abort(Connection c) {
        if (c == null) {
            return;
        }
        try {
            if (dataSource instanceof HikariDataSource pool) {
                pool.evictConnection(c); // closes it (aborting a connection in use) and keeps the pool from reusing it
            }
            c.unwrap(Connection.class).abort(Runnable::run);
        } catch (SQLException | RuntimeException e) {
            log.debug("{}: aborting the liveness connection failed: {}", who, e.toString());
        }
    }

    private void closeQuietly(Connection c) {
        if (c != null) {
            try {
                c.close();
            } catch (SQLException e) {
                log.debug("{}: closing the liveness connection failed: {}", who, e.toString());
            }
        }
    }
}
