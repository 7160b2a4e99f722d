package dev.outboxkit.spring.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.outboxkit.testkit.OutboxTestkit;
import dev.outboxkit.testkit.TestDatabase;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;

/**
 * An in-app polling relay started with a wrong broker address and nothing to publish is never
 * ready, and names the address within 10 s of the context's start (the figure the note gives for the Spring relay).
 */
class ReadinessWrongAddressTest {

    /** Only what the relay needs: no component scan, so none of the other tests' beans. */
    @Configuration(proxyBeanMethods = false)
    @EnableAutoConfiguration(excludeName = {"org.springframework.boot.hibernate.autoconfigure.HibernateJpaAutoConfiguration",
            "org.springframework.boot.data.jpa.autoconfigure.DataJpaRepositoriesAutoConfiguration"})
    static class App {
    }

    @Test
    void aWrongBrokerAddressIsNeverReadyAndNamedWithinTenSeconds() {
        TestDatabase db = OutboxTestkit.postgres().newDatabase();
        try (ConfigurableApplicationContext context = new SpringApplicationBuilder(App.class).web(WebApplicationType.NONE)
                .properties("spring.datasource.url=" + db.jdbcUrl(), "spring.datasource.username=" + db.user(),
                        "spring.datasource.password=" + db.password(), "spring.kafka.bootstrap-servers=127.0.0.1:9",
                        "outboxkit.relay.mode=poll")
                .run()) {
            long started = System.nanoTime();
            HealthIndicator readiness = context.getBean("outboxRelayHealthIndicator", HealthIndicator.class);
            await("the wrong address named").atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50))
                    .untilAsserted(() -> {
                        assertThat(readiness.health().getStatus()).as("never ready").isEqualTo(Status.DOWN);
                        assertThat(readiness.health().toString()).contains("Kafka not reachable at 127.0.0.1:9");
                    });
            System.out.println("Spring relay, wrong broker address: DOWN from the start, the reason "
                    + (System.nanoTime() - started) / 1_000_000 + " ms after the context started: " + readiness.health());
        } finally {
            OutboxTestkit.postgres().drop(db);
        }
    }
}
