package dev.outboxkit.relay.cdc.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxkit.core.Secret;
import dev.outboxkit.runtime.DatabaseLogin;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/** Debezium's connections log in as the relay's pool does: the resolved user and password, never the URL's raw text. */
class EngineConfigTest {

    private static CdcSettings settings(DatabaseLogin login) {
        return TestSettings.of(login, "s", "i", Map.of());
    }

    private static Properties engine(DatabaseLogin login) {
        CdcSettings s = settings(login);
        return EngineConfig.properties(CdcWiring.slotTerms(s), s.login(), CdcWiring.engineTuning(s),
                JdbcTarget.parse(s.jdbcUrl()), "ctx");
    }

    @Test
    void aUserAndPasswordInTheUrlReachDebezium() {
        Properties p = engine(DatabaseLogin.resolve("jdbc:postgresql://db:5433/shop?user=relay&password=s3cret&sslmode=require",
                null, null));
        assertThat(p).containsEntry("database.user", "relay").containsEntry("database.password", "s3cret")
                .containsEntry("database.hostname", "db").containsEntry("database.port", "5433")
                .containsEntry("database.dbname", "shop").containsEntry("database.sslmode", "require");
    }

    @Test
    void explicitValuesWinOverTheUrls() {
        Properties p = engine(DatabaseLogin.resolve("jdbc:postgresql://db/shop?user=url_user&password=url-pw", "relay",
                Secret.of("flag-pw")));
        assertThat(p).containsEntry("database.user", "relay").containsEntry("database.password", "flag-pw");
        assertThat(p.stringPropertyNames()).noneMatch(k -> k.equalsIgnoreCase("database.url"));
    }
}
