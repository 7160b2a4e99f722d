package dev.outboxkit.runtime;

import com.zaxxer.hikari.HikariDataSource;
import java.security.cert.CertificateException;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Set;
import java.util.function.BooleanSupplier;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Not API: shared by both relays.
 *
 * <p>A relay's first contact with PostgreSQL at start, one rule for both. A database that does not answer yet (a
 * server still starting, a failover in progress, a network not up yet, a first TLS and SCRAM login that a loaded node
 * makes slower than the pool's connection timeout) is asked again until the relay's {@code startTimeout}, with a WARN
 * per attempt naming the cause; readiness meanwhile says what the relay waits for ({@link #status()}). A database
 * that answers no is refused at once, because asking again cannot change the answer: a wrong password or role
 * (SQLSTATE class 28), a missing CONNECT privilege (42501), a database that does not exist, a certificate the client
 * does not trust or that does not name the host. See {@link #retried(SQLException)} for the rule.
 *
 * <p>Thread-safe: {@link #status()} may be read from any thread while {@link #await} runs.
 */
public final class DatabaseAtStart {

    private static final Logger log = LoggerFactory.getLogger(DatabaseAtStart.class);

    /** The pause after an attempt that failed at once (a refused port), doubling up to {@link #MAX_PAUSE}. */
    static final Duration FIRST_PAUSE = Duration.ofMillis(250);
    static final Duration MAX_PAUSE = Duration.ofSeconds(2);

    /** SQLSTATE classes and codes of a database that did not answer (yet), as opposed to one that answered no. */
    private static final Set<String> RETRIED_CLASSES = Set.of("08", "53");
    private static final Set<String> RETRIED_CODES = Set.of("57P01", "57P02", "57P03");

    private final String who;
    private final String where;
    private final String jdbcUrl;
    private final Duration timeout;
    private final BooleanSupplier stopping;
    private volatile String status;

    /**
     * @param who      the relay, as messages name it ({@code "poll relay relay-1"})
     * @param jdbcUrl  the URL it connects with, for the messages (host, port, database and CA file only), or null
     *                 when the relay was given a data source whose URL it does not know
     * @param timeout  how long to keep asking ({@code startTimeout}); zero: one attempt
     * @param stopping true once the relay is being closed: the wait ends at its next pause
     */
    public DatabaseAtStart(String who, String jdbcUrl, Duration timeout, BooleanSupplier stopping) {
        this.who = who;
        this.jdbcUrl = jdbcUrl;
        this.where = JdbcUrls.where(jdbcUrl);
        this.timeout = timeout;
        this.stopping = stopping;
    }

    /** What the relay waits for while {@link #await} runs (for its health detail), else null. */
    public String status() {
        return status;
    }

    /**
     * Returns once {@code dataSource} gave a connection.
     *
     * @throws IllegalStateException "cannot reach the database at …" when it did not answer within the timeout
     *                               (naming the attempts and the last cause), "the database at … refused …" at once
     *                               when it answered no, or "stopped while waiting" when the relay is being closed
     */
    public void await(DataSource dataSource) {
        long began = System.nanoTime();
        long deadline = began + timeout.toNanos();
        Duration pause = FIRST_PAUSE;
        status = "starting: connecting to the database at " + where;
        try {
            for (int attempt = 1; ; attempt++) {
                SQLException failure;
                try (Connection probe = direct(dataSource); Connection c = dataSource.getConnection()) {
                    return;
                } catch (SQLException e) {
                    failure = e;
                }
                String why = OperatorActions.database(failure, jdbcUrl);
                if (certificateProblem(failure)) {
                    throw new IllegalStateException(who + " cannot start: " + why + "; not retried: " + fix(failure),
                            failure);
                }
                if (!retried(failure)) {
                    throw new IllegalStateException(who + ": the database at " + where + " refused the connection, which "
                            + "is not retried: " + why + sqlState(failure) + "; " + fix(failure), failure);
                }
                long now = System.nanoTime();
                long waited = (now - began) / 1_000_000_000L;
                long left = deadline - now;
                if (left <= 0) {
                    throw new IllegalStateException(who + " cannot reach the database at " + where + ": " + attempt
                            + (attempt == 1 ? " attempt" : " attempts") + " in " + waited + " s (startTimeout " + timeout
                            + ") failed, the last with " + why + sqlState(failure) + ". Check the JDBC URL (host, port, "
                            + "sslmode), that the server is up and that this host can reach it, or give it longer with "
                            + "startTimeout", failure);
                }
                status = "starting: the database at " + where + " does not answer yet (attempt " + attempt + ", " + waited
                        + " s of startTimeout " + timeout + "): " + why;
                log.warn("{}: the database at {} does not answer yet (attempt {}, {} s of startTimeout {}): {}{}; trying "
                        + "again", who, where, attempt, waited, timeout, why, sqlState(failure));
                // the last pause ends at the deadline, so the last attempt is made when the start timeout runs out
                pauseUnlessStopping(pause.toNanos() < left ? pause : Duration.ofNanos(left));
                if (stopping.getAsBoolean()) {
                    throw new IllegalStateException(who + " stopped while waiting for the database at " + where
                            + " (attempt " + attempt + ": " + why + ")", failure);
                }
                pause = pause.multipliedBy(2).compareTo(MAX_PAUSE) > 0 ? MAX_PAUSE : pause.multipliedBy(2);
            }
        } finally {
            status = null;
        }
    }

    /**
     * For a pool of {@link ConnectionPools}, one connection attempt straight from its driver, or null for any other
     * data source. A pool reports a failed login only when its connection timeout ran out (10 s) however fast the
     * database said no; the driver reports a wrong password, an unknown role, an untrusted certificate or a refused
     * port at once, so this rule decides after milliseconds and a close ends the wait at the next pause. Closed again
     * right away.
     */
    private static Connection direct(DataSource dataSource) throws SQLException {
        if (dataSource instanceof HikariDataSource pool && pool.getDataSource() instanceof PromptReconnect driver) {
            return driver.connectOnce(pool.getUsername(), pool.getPassword());
        }
        return null;
    }

    private void pauseUnlessStopping(Duration pause) {
        long until = System.nanoTime() + pause.toNanos();
        while (!stopping.getAsBoolean() && until - System.nanoTime() > 0) {
            try {
                // a pause between connection attempts, not a wait for a condition: it only spaces the attempts out
                Thread.sleep(Math.min(50, Math.max(1, (until - System.nanoTime()) / 1_000_000)));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /**
     * Whether a failure to connect is worth another attempt: the database did not answer (SQLSTATE class 08, a pool
     * or socket timeout without a SQLSTATE), had no room (class 53: too many connections) or is starting or shutting
     * down (57P01–57P03). Not retried: a certificate that is not trusted or does not name the host, and every answer
     * that says no (28000, 28P01: no such role or a wrong password; 42501: no CONNECT privilege; 3D000: no such
     * database; anything else).
     */
    public static boolean retried(SQLException failure) {
        if (certificateProblem(failure)) {
            return false;
        }
        String state = innermostSqlState(failure);
        if (state == null) {
            return true;
        }
        return RETRIED_CLASSES.contains(state.substring(0, Math.min(2, state.length()))) || RETRIED_CODES.contains(state);
    }

    /** The innermost SQLSTATE of the cause chain (the driver's, under a pool's wrapper), or null. */
    private static String innermostSqlState(Throwable failure) {
        String found = null;
        Throwable t = failure;
        for (int depth = 0; t != null && depth < 32; depth++) {
            if (t instanceof SQLException s && s.getSQLState() != null) {
                found = s.getSQLState();
            }
            t = t.getCause() == t ? null : t.getCause();
        }
        return found;
    }

    private static String sqlState(SQLException failure) {
        String state = innermostSqlState(failure);
        return state == null ? "" : " (SQLSTATE " + state + ")";
    }

    private static boolean certificateProblem(Throwable failure) {
        Throwable t = failure;
        for (int depth = 0; t != null && depth < 32; depth++) {
            if (t instanceof CertificateException || OperatorActions.hostNameMismatch(t)) {
                return true;
            }
            t = t.getCause() == t ? null : t.getCause();
        }
        return false;
    }

    private static String fix(SQLException failure) {
        if (certificateProblem(failure)) {
            return "fix sslrootcert (the CA that signed the server's certificate) or the host in the JDBC URL (a name "
                    + "the certificate carries)";
        }
        String state = String.valueOf(innermostSqlState(failure));
        if (state.startsWith("28")) {
            return "check the user and password (and that pg_hba.conf lets this role in from here)";
        }
        if (state.equals("42501")) {
            return "grant the role CONNECT on the database";
        }
        if (state.equals("3D000")) {
            return "check the database name in the JDBC URL";
        }
        return "check the JDBC URL, user and password";
    }
}
