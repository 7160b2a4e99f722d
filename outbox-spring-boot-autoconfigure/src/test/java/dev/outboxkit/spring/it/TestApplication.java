package dev.outboxkit.spring.it;

import dev.outboxkit.testkit.OutboxTestkit;
import dev.outboxkit.testkit.TestDatabase;
import java.net.URI;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.Base64;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.core.userdetails.UserDetailsService;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.test.context.DynamicPropertyRegistry;

/** The service the tests run: a ledger with transfers, a projection, two users (HTTP basic). */
@SpringBootApplication
public class TestApplication {

    @Bean
    SecurityFilterChain security(HttpSecurity http) throws Exception {
        http.csrf(c -> c.disable())
                .authorizeHttpRequests(a -> a.requestMatchers("/actuator/**").permitAll().anyRequest().authenticated())
                .httpBasic(Customizer.withDefaults());
        return http.build();
    }

    @Bean
    UserDetailsService users() {
        return new InMemoryUserDetailsManager(
                User.withUsername("alice").password("{noop}alice-pw").roles("USER").build(),
                User.withUsername("bob").password("{noop}bob-pw").roles("USER").build());
    }

    /** A JSON POST as {@code user} (HTTP basic), with an Idempotency-Key unless {@code key} is null. */
    static HttpRequest post(int port, String path, String user, String key, String json) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/json")
                .header("Authorization", "Basic " + Base64.getEncoder()
                        .encodeToString((user + ":" + user + "-pw").getBytes(StandardCharsets.UTF_8)))
                .POST(HttpRequest.BodyPublishers.ofString(json));
        if (key != null) {
            b.header("Idempotency-Key", key);
        }
        return b.build();
    }

    /** A new database with the outboxkit schema and the ledger's tables, wired into the context. */
    static TestDatabase database(DynamicPropertyRegistry registry) {
        return wire(registry, withLedger(OutboxTestkit.postgres().newDatabase()));
    }

    /** {@code db} with the ledger's tables. */
    static TestDatabase withLedger(TestDatabase db) {
        try (Connection c = db.connect(); Statement s = c.createStatement()) {
            s.execute("""
                    CREATE TABLE account (id text PRIMARY KEY, balance bigint NOT NULL);
                    CREATE TABLE transfer (id uuid PRIMARY KEY, from_account text NOT NULL, to_account text NOT NULL,
                                           amount bigint NOT NULL, created_at timestamptz NOT NULL DEFAULT now());
                    CREATE TABLE projection_log (event_id uuid NOT NULL, transfer_id text NOT NULL, amount bigint NOT NULL);
                    INSERT INTO account VALUES ('A', 1000000000), ('B', 0);
                    """);
        } catch (Exception e) {
            throw new IllegalStateException("cannot create the ledger tables in " + db, e);
        }
        return db;
    }

    /** {@code db} as the context's DataSource. */
    static TestDatabase wire(DynamicPropertyRegistry registry, TestDatabase db) {
        registry.add("spring.datasource.url", db::jdbcUrl);
        registry.add("spring.datasource.username", db::user);
        registry.add("spring.datasource.password", db::password);
        registry.add("spring.datasource.hikari.maximum-pool-size", () -> "12");
        return db;
    }
}
