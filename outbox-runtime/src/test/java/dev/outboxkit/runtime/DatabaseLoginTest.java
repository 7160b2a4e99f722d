package dev.outboxkit.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.outboxkit.core.Secret;
import org.junit.jupiter.api.Test;

/** One resolution of URL, user and password for both relays and the CLI. */
class DatabaseLoginTest {

    private static final String BASE = "jdbc:postgresql://db:5432/shop";

    @Test
    void userAndPasswordComeFromTheUrlAsTheDriverReadsThem() {
        DatabaseLogin login = DatabaseLogin.resolve(BASE + "?sslmode=require&user=app&password=p%26w&ApplicationName=x", null, null);
        assertThat(login.user()).isEqualTo("app");
        assertThat(login.password()).isEqualTo(Secret.of("p&w"));
        assertThat(login.jdbcUrl()).isEqualTo(BASE + "?sslmode=require&ApplicationName=x");
        assertThat(login.urlNamesApplication()).isTrue();
    }

    @Test
    void explicitValuesWinOverTheUrlsAndTheUrlKeepsNeither() {
        DatabaseLogin login = DatabaseLogin.resolve(BASE + "?user=app&password=url-pw", "relay", Secret.of("flag-pw"));
        assertThat(login.user()).isEqualTo("relay");
        assertThat(login.password()).isEqualTo(Secret.of("flag-pw"));
        assertThat(login.jdbcUrl()).isEqualTo(BASE);
        // a blank user counts as unset; a password alone can come from the URL
        DatabaseLogin mixed = DatabaseLogin.resolve(BASE + "?password=url-pw&user=app", " ", null);
        assertThat(mixed.user()).isEqualTo("app");
        assertThat(mixed.password()).isEqualTo(Secret.of("url-pw"));
        assertThat(DatabaseLogin.resolve(BASE, "relay", null).password()).isNull();
    }

    @Test
    void noUserAnywhereIsRefusedNamingEveryPlaceWithoutThePassword() {
        DatabaseLogin login = DatabaseLogin.resolve(BASE + "?password=hunter2", null, null);
        assertThat(login.user()).isNull();
        assertThatThrownBy(() -> login.requireUser("user(…)", "jdbcUrl"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("user is required: set user(…), or put user=ROLE (and password=…) in jdbcUrl")
                .hasMessageNotContaining("hunter2");
        assertThat(login.toString()).doesNotContain("hunter2");
    }

    @Test
    void aUrlTheDriverDoesNotTakeIsRefusedMasked() {
        assertThatThrownBy(() -> DatabaseLogin.resolve("jdbc:mysql://h/db?password=hunter2", "u", null))
                .hasMessageContaining("is not a PostgreSQL JDBC URL").hasMessageNotContaining("hunter2");
        assertThatThrownBy(() -> DatabaseLogin.resolve(null, "u", null)).hasMessageContaining("is not a PostgreSQL JDBC URL");
    }

    @Test
    void poolsGetTheResolvedLoginTheSharedTimeoutsAndAnApplicationName() {
        DatabaseLogin login = DatabaseLogin.resolve(BASE + "?user=app&password=pw", null, null);
        try (HikariDataSource pool = ConnectionPools.open(login, "test-pool", 3, "outboxkit-test")) {
            assertThat(pool.getJdbcUrl()).isEqualTo(BASE);
            assertThat(pool.getUsername()).isEqualTo("app");
            assertThat(pool.getPassword()).isEqualTo("pw");
            assertThat(pool.getMaximumPoolSize()).isEqualTo(3);
            assertThat(pool.getPoolName()).isEqualTo("test-pool");
            assertThat(pool.getConnectionTimeout()).isEqualTo(ConnectionPools.CONNECTION_TIMEOUT.toMillis());
            assertThat(pool.getDataSourceProperties()).containsEntry("ApplicationName", "outboxkit-test");
            assertThat(pool.getDataSourceProperties()).as("keepalive probes find a server gone without a FIN")
                    .containsEntry("tcpKeepAlive", "true");
            // the driver reads the URL over the pool's properties, so a user's tcpKeepAlive=false stands
            assertThat(org.postgresql.Driver.parseURL(BASE + "?tcpKeepAlive=false", pool.getDataSourceProperties())
                    .getProperty("tcpKeepAlive")).isEqualTo("false");
        }
        DatabaseLogin named = DatabaseLogin.resolve(BASE + "?ApplicationName=mine", "u", null);
        try (HikariDataSource pool = ConnectionPools.open(named, "test-pool-2", 1, "outboxkit-test")) {
            assertThat(pool.getDataSourceProperties()).doesNotContainKey("ApplicationName");
        }
    }
}
