package dev.outboxkit.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.reflect.Proxy;
import java.security.cert.CertificateException;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/** The rule of {@link DatabaseAtStart}: what is tried again at start and what is refused at once. */
class DatabaseAtStartTest {

    private static final String URL = "jdbc:postgresql://db.example:6432/app?sslmode=verify-full&sslrootcert=/ca.pem";

    @Test
    void aDatabaseThatDoesNotAnswerIsTriedAgainOneThatAnswersNoIsNot() {
        assertThat(DatabaseAtStart.retried(new SQLException("refused", "08001"))).isTrue();
        assertThat(DatabaseAtStart.retried(new SQLException("too many connections", "53300"))).isTrue();
        assertThat(DatabaseAtStart.retried(new SQLException("the database system is starting up", "57P03"))).isTrue();
        // a pool's timeout without a reason yet (the first login still under way)
        assertThat(DatabaseAtStart.retried(new SQLTransientConnectionException("request timed out after 10004ms"))).isTrue();

        assertThat(DatabaseAtStart.retried(new SQLException("password authentication failed", "28P01"))).isFalse();
        assertThat(DatabaseAtStart.retried(new SQLException("role does not exist", "28000"))).isFalse();
        assertThat(DatabaseAtStart.retried(new SQLException("permission denied for database", "42501"))).isFalse();
        assertThat(DatabaseAtStart.retried(new SQLException("database does not exist", "3D000"))).isFalse();
        // a pool's timeout carries its last failure's state and cause: decided by the driver's answer under it
        assertThat(DatabaseAtStart.retried(new SQLTransientConnectionException("pool - request timed out", "28P01",
                new SQLException("password authentication failed", "28P01")))).isFalse();
        assertThat(DatabaseAtStart.retried(new SQLException("SSL error", "08006",
                new javax.net.ssl.SSLHandshakeException("PKIX path building failed")
                        .initCause(new CertificateException("unable to find valid certification path")))))
                .isFalse();
        assertThat(DatabaseAtStart.retried(new SQLException(
                "The hostname 127.0.0.2 could not be verified by hostnameverifier PgjdbcHostnameVerifier.", "08006")))
                .isFalse();
    }

    @Test
    void triesUntilTheStartTimeoutThenNamesWhatItTriedWithoutTheQuery() {
        AtomicInteger attempts = new AtomicInteger();
        DatabaseAtStart wait = new DatabaseAtStart("poll relay r1", URL, Duration.ofMillis(600), () -> false);
        assertThatThrownBy(() -> wait.await(failing(attempts, new SQLException("Connection refused", "08001"))))
                .hasMessageStartingWith("poll relay r1 cannot reach the database at db.example:6432/app: ")
                .hasMessageContaining("(startTimeout PT0.6S) failed, the last with SQLException: Connection refused "
                        + "(SQLSTATE 08001)")
                .hasMessageNotContaining("sslrootcert");
        assertThat(attempts.get()).isGreaterThan(1);
        assertThat(wait.status()).isNull();
    }

    @Test
    void refusesAWrongPasswordAtTheFirstAttempt() {
        AtomicInteger attempts = new AtomicInteger();
        DatabaseAtStart wait = new DatabaseAtStart("poll relay r1", URL, Duration.ofMinutes(10), () -> false);
        assertThatThrownBy(() -> wait.await(failing(attempts,
                new SQLException("FATAL: password authentication failed for user \"relay\"", "28P01"))))
                .hasMessage("poll relay r1: the database at db.example:6432/app refused the connection, which is not "
                        + "retried: SQLException: FATAL: password authentication failed for user \"relay\" (SQLSTATE "
                        + "28P01); check the user and password (and that pg_hba.conf lets this role in from here)");
        assertThat(attempts.get()).isEqualTo(1);
    }

    @Test
    void stopsWaitingWhenTheRelayIsClosed() {
        AtomicInteger attempts = new AtomicInteger();
        DatabaseAtStart wait = new DatabaseAtStart("poll relay r1", URL, Duration.ofMinutes(10), () -> attempts.get() >= 2);
        assertThatThrownBy(() -> wait.await(failing(attempts, new SQLException("Connection refused", "08001"))))
                .hasMessageStartingWith("poll relay r1 stopped while waiting for the database at db.example:6432/app");
        assertThat(attempts.get()).isEqualTo(2);
    }

    /** A data source whose every connection attempt fails with {@code failure}, counting them. */
    private static DataSource failing(AtomicInteger attempts, SQLException failure) {
        // a dynamic proxy rather than a stub of every DataSource method: DatabaseAtStart only asks for connections
        return (DataSource) Proxy.newProxyInstance(DatabaseAtStartTest.class.getClassLoader(),
                new Class<?>[] {DataSource.class}, (proxy, method, args) -> {
                    if (!method.getName().equals("getConnection")) {
                        throw new UnsupportedOperationException("a failing DataSource has no " + method.getName());
                    }
                    attempts.incrementAndGet();
                    throw failure;
                });
    }
}
