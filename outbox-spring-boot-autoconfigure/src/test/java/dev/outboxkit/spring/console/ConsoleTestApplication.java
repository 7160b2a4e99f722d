package dev.outboxkit.spring.console;

import dev.outboxkit.testkit.OutboxTestkit;
import dev.outboxkit.testkit.TestDatabase;
import java.util.Map;
import java.util.UUID;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.core.userdetails.UserDetailsService;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.security.web.csrf.CsrfToken;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * An application as users secure theirs: every request authenticated (HTTP basic and a login form), Spring Security's
 * CSRF protection on (its default). {@code oper} has the console's role, {@code viewer} does not.
 */
@SpringBootApplication
public class ConsoleTestApplication {

    static final String PROPERTIES_EXCLUDE = "spring.autoconfigure.exclude=org.springframework.boot.hibernate.autoconfigure.HibernateJpaAutoConfiguration,"
            + "org.springframework.boot.data.jpa.autoconfigure.DataJpaRepositoriesAutoConfiguration";

    @Bean
    SecurityFilterChain security(HttpSecurity http) throws Exception {
        http.authorizeHttpRequests(a -> a.anyRequest().authenticated())
                .httpBasic(Customizer.withDefaults())
                .formLogin(Customizer.withDefaults());
        return http.build();
    }

    @Bean
    UserDetailsService users() {
        return new InMemoryUserDetailsManager(
                User.withUsername("oper").password("{noop}oper-pw").roles("OUTBOX_OPERATOR").build(),
                User.withUsername("viewer").password("{noop}viewer-pw").roles("USER").build());
    }

    /** The caller's Spring CSRF token, so a test can send a form the console never offered it. */
    @RestController
    static class CsrfController {
        @GetMapping("/csrf")
        Map<String, String> csrf(CsrfToken token) {
            return Map.of("parameterName", token.getParameterName(), "token", token.getToken());
        }
    }

    /** A new database with the outboxkit schema, as the context's DataSource. */
    static TestDatabase database(DynamicPropertyRegistry registry) {
        TestDatabase db = OutboxTestkit.postgres().newDatabase();
        registry.add("spring.datasource.url", db::jdbcUrl);
        registry.add("spring.datasource.username", db::user);
        registry.add("spring.datasource.password", db::password);
        return db;
    }

    /** Parks a dead letter the way the relay does (columns of outbox_dead_letter), with a seq far above the identity's. */
    static void park(TestDatabase db, UUID id, long seq) throws java.sql.SQLException {
        db.execute("INSERT INTO outbox_dead_letter (id, seq, aggregate_type, aggregate_id, event_type, payload, headers, created_at,"
                + " error_class, error_message, attempts, parked_by) VALUES (?, ?, 'account', 'e1', 'Opened',"
                + " '{\"secret\": \"do-not-print\"}', '{}', now(), 'org.apache.kafka.common.errors.RecordTooLargeException',"
                + " 'too large', 3, 'relay-1')", id, seq);
    }
}
