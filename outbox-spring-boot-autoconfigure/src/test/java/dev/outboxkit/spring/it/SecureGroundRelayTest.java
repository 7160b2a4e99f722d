package dev.outboxkit.spring.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.outboxkit.testkit.DocumentedGrants;
import dev.outboxkit.testkit.OutboxTestkit;
import dev.outboxkit.testkit.SecureGround;
import dev.outboxkit.testkit.SecureKafka;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import dev.outboxkit.writer.OutboxMessage;
import dev.outboxkit.writer.OutboxWriter;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import javax.sql.DataSource;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.resource.ResourceType;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;

/**
 * The in-app polling relay and the in-app CDC relay of a booted Spring context over the ground
 * managed services give — Kafka only over SASL_SSL (SCRAM-SHA-512, a PEM truststore of the run's CA, ACLs enforced)
 * and PostgreSQL only over TLS with {@code sslmode=verify-full} and SCRAM — with exactly the documented least
 * privileges: the application's role may INSERT into {@code outbox_event}, the relay's role holds relay-poller's (or
 * relay-debezium's) grants, the relay's Kafka principal WRITE and DESCRIBE on its topic. Everything comes from
 * properties, as docs/managed-services.md lists them.
 */
class SecureGroundRelayTest {

    /** Only what the relay needs: no component scan, so none of the other tests' beans. */
    @Configuration(proxyBeanMethods = false)
    @EnableAutoConfiguration(excludeName = {"org.springframework.boot.hibernate.autoconfigure.HibernateJpaAutoConfiguration",
            "org.springframework.boot.data.jpa.autoconfigure.DataJpaRepositoriesAutoConfiguration"})
    static class App {
    }

    /** Shared by both tests (and any other class of this JVM): its start costs more than a test on it. */
    private final SecureGround ground = OutboxTestkit.secureGround();

    @Test
    void theInAppPollingRelayPublishesOverSaslSslAndVerifyFullWithTheDocumentedLeastPrivileges() throws Exception {
        publishesWithTheDocumentedLeastPrivileges("poll");
    }

    /** The CDC relay: a REPLICATION role with relay-debezium's grants, the publication made by an administrator. */
    @Test
    void theInAppCdcRelayPublishesOverSaslSslAndVerifyFullWithTheDocumentedLeastPrivileges() throws Exception {
        publishesWithTheDocumentedLeastPrivileges("cdc");
    }

    private void publishesWithTheDocumentedLeastPrivileges(String mode) throws Exception {
        String appPassword = "app-" + UUID.randomUUID();
        String relayPassword = "relay-" + UUID.randomUUID();
        String kafkaPassword = "relay-kafka-" + UUID.randomUUID();
        String principal = "spring-" + mode + "-relay";
        String relayRole = mode + "_relay";   // roles and slots belong to the server: one per test
        String slot = "spring_secure_" + mode;
        SecureKafka kafka = ground.kafka();
        String topic = TestKafka.uniqueTopic("spring-secure-" + mode);
        kafka.createTopic(topic, 2);
        kafka.createScramUser(principal, kafkaPassword);
        kafka.grant(principal, AclOperation.WRITE, ResourceType.TOPIC, topic);
        kafka.grant(principal, AclOperation.DESCRIBE, ResourceType.TOPIC, topic);

        TestDatabase db = ground.postgres().newDatabase();
        try (Connection c = db.connect(); Statement s = c.createStatement()) {
            s.execute("CREATE ROLE " + mode + "_app LOGIN PASSWORD '" + appPassword + "'");
            DocumentedGrants.writer(s, mode + "_app", false);
            if (mode.equals("cdc")) {
                s.execute("CREATE ROLE " + relayRole + " LOGIN REPLICATION PASSWORD '" + relayPassword + "'");
                DocumentedGrants.cdcRelay(s, relayRole, true);
                DocumentedGrants.cdcPublication(s);
            } else {
                s.execute("CREATE ROLE " + relayRole + " LOGIN PASSWORD '" + relayPassword + "'");
                DocumentedGrants.pollingRelay(s, relayRole);
            }
        }
        assertThat(db.jdbcUrl()).contains("sslmode=verify-full");

        Map<String, Object> properties = new LinkedHashMap<>();
        properties.put("spring.datasource.url", db.jdbcUrl());
        properties.put("spring.datasource.username", mode + "_app");
        properties.put("spring.datasource.password", appPassword);
        properties.put("spring.kafka.bootstrap-servers", kafka.bootstrapServers());
        properties.put("outboxkit.relay.mode", mode);
        properties.put("outboxkit.relay.username", relayRole);
        properties.put("outboxkit.relay.password", relayPassword);
        properties.put("outboxkit.relay.options.route", topic);
        if (mode.equals("cdc")) {
            properties.put("outboxkit.relay.options.slot-name", slot);
            properties.put("outboxkit.relay.options.offset-flush-interval", "200ms");
        } else {
            properties.put("outboxkit.relay.options.max-poll-delay", "20ms");
        }
        // docs/managed-services.md, "A broker with a private CA", as producer options of the Spring relay
        kafka.clientSecurity(principal, kafkaPassword, SecureKafka.SCRAM_SHA_512)
                .forEach((k, v) -> properties.put("outboxkit.relay.options.producer." + k, String.valueOf(v)));
        try (ConfigurableApplicationContext context = new SpringApplicationBuilder(App.class)
                .web(WebApplicationType.NONE).properties(properties).run()) {
            HealthIndicator readiness = context.getBean("outboxRelayHealthIndicator", HealthIndicator.class);
            await("the " + mode + " relay ready over SASL_SSL").atMost(Duration.ofSeconds(60))
                    .until(() -> readiness.health().getStatus().equals(Status.UP));

            OutboxWriter writer = context.getBean(OutboxWriter.class);
            DataSource app = context.getBean(DataSource.class);
            Set<UUID> written = new HashSet<>();
            for (int i = 0; i < 10; i++) {
                int n = i;
                written.addAll(writer.inTransaction(app, (c, tx) -> List.of(tx.add(OutboxMessage.builder("order", "o" + (n % 3),
                        "Placed").payloadJson("{\"n\":" + n + "}").build()))));
            }
            await("every event on " + topic).atMost(Duration.ofSeconds(60))
                    .until(() -> ids(kafka, topic).equals(written));
            await("every row removed").atMost(Duration.ofSeconds(10)).until(() -> db.count("SELECT count(*) FROM outbox_event") == 0);
            assertThat(db.count("SELECT count(*) FROM outbox_dead_letter")).isZero();
            assertThat(readiness.health().getStatus()).isEqualTo(Status.UP);
        } finally {
            if (mode.equals("cdc")) {
                db.dropReplicationSlot(slot);
            }
        }
    }

    private static Set<UUID> ids(SecureKafka kafka, String topic) {
        Set<UUID> ids = new HashSet<>();
        kafka.readAll(List.of(topic)).forEach(r -> ids.add(UUID.fromString(
                new String(r.headers().lastHeader("id").value(), StandardCharsets.UTF_8).replace("\"", ""))));
        return ids;
    }
}
