package dev.outboxkit.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.util.DriverDataSource;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

class PromptReconnectTest {

    @Test
    void aRefusedConnectionIsTriedAgainUntilTheWindowEnds() {
        DataSource refused = new DriverDataSource("jdbc:postgresql://127.0.0.1:1/none", null, new Properties(), "u", "p");
        long start = System.nanoTime();
        assertThatThrownBy(() -> new PromptReconnect(refused, Duration.ofMillis(600)).getConnection())
                .isInstanceOf(SQLException.class)
                .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("08001"));
        // it gives up only when one more retry would end past the window
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThan(Duration.ofMillis(600).minus(PromptReconnect.RETRY));
    }

    @Test
    void theConnectionIsReturnedOnceTheDatabaseAnswersAndAnAnswerNoIsReportedAtOnce() throws Exception {
        Connection connection = (Connection) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Connection.class},
                (p, m, a) -> null);
        AtomicInteger calls = new AtomicInteger();
        DataSource backSoon = failing(calls, 2, "08001", connection);
        assertThat(new PromptReconnect(backSoon, Duration.ofSeconds(30)).getConnection()).isSameAs(connection);
        assertThat(calls).hasValue(3);

        calls.set(0);
        DataSource wrongPassword = failing(calls, 5, "28P01", connection);
        assertThatThrownBy(() -> new PromptReconnect(wrongPassword, Duration.ofSeconds(30)).getConnection())
                .isInstanceOf(SQLException.class).hasMessageContaining("28P01");
        assertThat(calls).hasValue(1);
    }

    /** A data source whose first {@code failures} connections fail with {@code sqlState}. */
    private static DataSource failing(AtomicInteger calls, int failures, String sqlState, Connection connection) {
        return (DataSource) Proxy.newProxyInstance(PromptReconnectTest.class.getClassLoader(), new Class<?>[] {DataSource.class},
                (p, m, a) -> {
                    if (!m.getName().equals("getConnection")) {
                        throw new UnsupportedOperationException(m.getName());
                    }
                    if (calls.incrementAndGet() <= failures) {
                        throw new SQLException("failure " + sqlState, sqlState);
                    }
                    return connection;
                });
    }
}
