package dev.outboxkit.runtime;

import dev.outboxkit.core.Secret;
import dev.outboxkit.relay.ConnectionPoolerException;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.LinkedHashSet;
import java.util.Set;
import javax.sql.DataSource;
import org.postgresql.PGConnection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Not API: shared by both relays.
 *
 * <p>Whether a relay's connections reach PostgreSQL through a connection pooler, and in which pooling mode, checked
 * right after its first contact with the database. The relays need what only a session of their own gives: a
 * session-level advisory lock says an instance is alive, LISTEN wakes it up, and the CDC relay streams over a
 * replication connection. Behind transaction (or statement) pooling the server session that holds the lock is handed
 * to other clients between transactions, so the lock no longer says anything about this instance.
 *
 * <p>Two observations, both on connections of the relay's own data source:
 * <ol>
 *   <li><b>A pooler</b> (any mode) answers the login itself and gives the client a BackendKeyData of its own, so the
 *       backend pid the driver was told ({@link PGConnection#getBackendPID()}) is not the server's
 *       {@code pg_backend_pid()}. A TCP proxy forwards the server's bytes, so it shows no difference.</li>
 *   <li><b>Transaction or statement pooling</b>: with a pooler found, two client connections A and B, both in
 *       autocommit, read {@code pg_backend_pid()} in the order A, B, B, A, for up to {@link #ROUNDS} rounds. Session
 *       pooling binds one server session to each client for its life, so each client always sees one pid and two
 *       clients open at once never see the same one; the check reports transaction pooling only when a client saw two
 *       pids or the two saw a common one, which can therefore never happen on a direct connection or under session
 *       pooling. Under transaction pooling the order shows it in the first round whichever way the pooler reuses idle
 *       server sessions (PgBouncer's default, last released first: A's session goes to B; {@code server_round_robin}:
 *       B's two statements take two different idle sessions); the further rounds cover other clients of the same pool
 *       taking sessions in between.</li>
 * </ol>
 */
public final class PoolerCheck {

    private static final Logger log = LoggerFactory.getLogger(PoolerCheck.class);

    /** Rounds of A, B, B, A before concluding that server sessions stay with their clients. */
    static final int ROUNDS = 5;

    /** How the connections reach PostgreSQL. */
    public enum Pooling {
        /** Straight to the server (or through something that forwards its bytes, such as a TCP proxy). */
        NONE,
        /** Through a pooler that keeps one server session per client connection ({@code pool_mode=session}). */
        SESSION,
        /** Through a pooler that moves server sessions between clients ({@code pool_mode=transaction} or {@code statement}). */
        TRANSACTION
    }

    /** What the check saw: the pooling and the observation it rests on, in words. */
    public record Finding(Pooling pooling, String evidence) {
    }

    private PoolerCheck() {
    }

    /**
     * Looks at how {@code dataSource}'s connections reach PostgreSQL (one connection, and a second one only when a
     * pooler answers).
     *
     * @throws SQLException when a probe connection or statement fails
     */
    public static Finding probe(DataSource dataSource) throws SQLException {
        try (Connection a = dataSource.getConnection()) {
            a.setAutoCommit(true);
            Integer announced = announcedPid(a);
            int actual = backendPid(a);
            if (announced != null && announced == actual) {
                return new Finding(Pooling.NONE, "the connection runs on the server backend the server announced (pid "
                        + actual + ")");
            }
            String pooler = announced == null
                    ? "the driver is not pgjdbc, so a pooler cannot be told from the backend key"
                    : "the login was answered by a pooler: the connection was told backend pid " + announced
                    + " but runs on server backend " + actual;
            try (Connection b = dataSource.getConnection()) {
                b.setAutoCommit(true);
                Set<Integer> seenByA = new LinkedHashSet<>();
                Set<Integer> seenByB = new LinkedHashSet<>();
                for (int round = 1; round <= ROUNDS; round++) {
                    seenByA.add(backendPid(a));
                    seenByB.add(backendPid(b));
                    seenByB.add(backendPid(b));
                    seenByA.add(backendPid(a));
                    String moved = moved(seenByA, seenByB);
                    if (moved != null) {
                        return new Finding(Pooling.TRANSACTION, pooler + "; " + moved + " (round " + round + ")");
                    }
                }
                if (announced == null) {
                    return new Finding(Pooling.NONE, pooler + "; two connections kept their server backends ("
                            + seenByA + ", " + seenByB + ") over " + ROUNDS + " rounds");
                }
                return new Finding(Pooling.SESSION, pooler + "; two client connections kept server backends "
                        + seenByA.iterator().next() + " and " + seenByB.iterator().next() + " over " + ROUNDS + " rounds");
            }
        }
    }

    /** Why the pids seen by two clients show server sessions moving between them, or null when they do not. */
    static String moved(Set<Integer> seenByA, Set<Integer> seenByB) {
        if (seenByA.size() > 1) {
            return "one client connection ran on server backends " + seenByA + " in turn";
        }
        if (seenByB.size() > 1) {
            return "one client connection ran on server backends " + seenByB + " in turn";
        }
        if (seenByA.equals(seenByB)) {
            return "two client connections open at once both ran on server backend " + seenByA.iterator().next();
        }
        return null;
    }

    /**
     * The polling relay's check: refuses transaction and statement pooling, says once at INFO that session pooling is
     * fine.
     *
     * @param who     the relay as messages name it ({@code "poll relay relay-1"})
     * @param jdbcUrl the URL it connects with (masked in the message), or null when it was given a data source
     * @throws ConnectionPoolerException when its connections pass through transaction or statement pooling
     * @throws IllegalStateException     when the check itself fails on the database
     */
    public static void requireSessionPerConnection(DataSource dataSource, String who, String jdbcUrl) {
        Finding found = check(dataSource, who, jdbcUrl);
        if (found.pooling() == Pooling.TRANSACTION) {
            throw new ConnectionPoolerException(who + " cannot start: its connections to " + where(jdbcUrl)
                    + " go through a connection pooler in transaction (or statement) pooling mode, which hands server "
                    + "sessions from client to client between transactions (" + found.evidence() + "). The relay needs a "
                    + "server session per connection for the connection's life: its liveness is a session-level advisory "
                    + "lock and its wake-ups are LISTEN; behind transaction pooling the lock stays on a server session "
                    + "other clients then use, and another instance could take over partitions this one still publishes "
                    + "(events published twice). Fix: connect the relay to PostgreSQL directly, or through a pool with "
                    + "pool_mode=session (PgBouncer: a database entry of its own for the relay, e.g. "
                    + "'outbox_relay = host=… dbname=… pool_mode=session', and that name in jdbcUrl)");
        }
        if (found.pooling() == Pooling.SESSION) {
            log.info("{}: its connections to {} go through a connection pooler in session pooling mode ({}); that is "
                    + "fine for the polling relay: each connection keeps its server session, and with it the liveness "
                    + "lock and LISTEN, for its life", who, where(jdbcUrl), found.evidence());
        }
    }

    /**
     * The CDC relay's check: refuses any pooler.
     *
     * @param who     the relay as messages name it ({@code "the CDC relay (slot outbox)"})
     * @param jdbcUrl the URL it connects with (masked in the message)
     * @throws ConnectionPoolerException when its connections pass through a pooler, in any mode
     * @throws IllegalStateException     when the check itself fails on the database
     */
    public static void requireDirect(DataSource dataSource, String who, String jdbcUrl) {
        Finding found = check(dataSource, who, jdbcUrl);
        if (found.pooling() == Pooling.NONE) {
            return;
        }
        String mode = found.pooling() == Pooling.SESSION ? "session pooling mode" : "transaction (or statement) pooling mode";
        throw new ConnectionPoolerException(who + " cannot start: its connections to " + where(jdbcUrl) + " go through a "
                + "connection pooler in " + mode + " (" + found.evidence() + "). The CDC relay streams the outbox over a "
                + "replication connection to the same address, which a pooler does not carry (PgBouncer refuses it: "
                + "\"unsupported startup parameter: replication\")"
                + (found.pooling() == Pooling.TRANSACTION ? ", and its session-level liveness lock would stay on server "
                + "sessions other clients then use" : "")
                + ". Fix: connect it to PostgreSQL directly: set jdbcUrl to the server's own host and port, not the "
                + "pooler's (writers and consumers can stay behind the pooler)");
    }

    private static Finding check(DataSource dataSource, String who, String jdbcUrl) {
        try {
            Finding found = probe(dataSource);
            log.debug("{}: connections to {}: {} ({})", who, where(jdbcUrl), found.pooling(), found.evidence());
            return found;
        } catch (SQLException e) {
            throw new IllegalStateException(who + " cannot start: checking whether its connections to " + where(jdbcUrl)
                    + " pass through a connection pooler failed: " + Secret.maskUrl(String.valueOf(e.getMessage())), e);
        }
    }

    private static String where(String jdbcUrl) {
        return jdbcUrl == null ? "the database (its data source)" : JdbcUrls.where(jdbcUrl) + " (" + Secret.maskUrl(jdbcUrl) + ")";
    }

    /** The backend pid pgjdbc was given at login, or null when the connection is not pgjdbc's. */
    private static Integer announcedPid(Connection c) throws SQLException {
        if (!c.isWrapperFor(PGConnection.class)) {
            return null;
        }
        return c.unwrap(PGConnection.class).getBackendPID();
    }

    /** {@code pg_backend_pid()} with a one-shot statement: no server-side prepared statement, which a pooler could not carry. */
    private static int backendPid(Connection c) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT pg_catalog.pg_backend_pid()")) {
            rs.next();
            return rs.getInt(1);
        }
    }
}
