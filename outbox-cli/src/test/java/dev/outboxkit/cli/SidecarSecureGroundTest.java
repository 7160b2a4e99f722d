package dev.outboxkit.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.outboxkit.relay.RelayOptions;
import dev.outboxkit.testkit.DocumentedGrants;
import dev.outboxkit.testkit.JavaProcess;
import dev.outboxkit.testkit.OutboxTestkit;
import dev.outboxkit.testkit.Readiness;
import dev.outboxkit.testkit.SecureGround;
import dev.outboxkit.testkit.SecureKafka;
import dev.outboxkit.testkit.TestCertificates;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import dev.outboxkit.writer.OutboxMessage;
import dev.outboxkit.writer.OutboxWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.resource.ResourceType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Both sidecars ({@code outbox relay poll} and {@code outbox relay cdc}) over the ground managed
 * services give: Kafka only over SASL_SSL (SCRAM-SHA-512, ACLs enforced), PostgreSQL only over TLS with
 * {@code sslmode=verify-full} and a password; each relay its own principal with WRITE and DESCRIBE on its topic and
 * its own role with exactly its README's grants. The Kafka settings come as {@code kafka.*} keys of the
 * {@code --config} file, the way a Kubernetes secret mounts them. Both sidecars run at once.
 */
class SidecarSecureGroundTest {

    /** Shared with the module's other secure-ground class: its start costs more than the tests on it. */
    private final SecureGround ground = OutboxTestkit.secureGround();

    /**
     * How long a sidecar may take to start or to refuse: the JVM's start, the relay's wait for the database (its
     * first TLS and SCRAM login took over 10 s at load 55-60 on 2 cores, and the relay keeps trying for the default
     * start timeout) and Kafka's TLS check (10 s). A bound on a condition, not a pause.
     */
    private static final Duration STARTING = RelayOptions.START_TIMEOUT.defaultValue().plusSeconds(120);

    @Test
    void bothSidecarsPublishWithExactlyTheirRights(@TempDir Path dir) throws Exception {
        SecureKafka kafka = ground.kafka();
        List<Sidecar> sidecars = new ArrayList<>();
        try {
            for (String relay : List.of("poll", "cdc")) {
                sidecars.add(start(relay, dir, "", null));
            }
            for (Sidecar s : sidecars) {
                if (s.relay.equals("cdc")) {
                    await("slot over TLS").atMost(STARTING).until(() -> s.db.count(
                            "SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'sidecar_secure'") == 1);
                }
                s.ids.addAll(write(s.db));
            }
            for (Sidecar s : sidecars) {
                await(s.relay + " sidecar published").atMost(STARTING).until(() -> kafka.readAll(List.of(s.topic))
                        .stream().map(r -> UUID.fromString(new String(r.headers().lastHeader("id").value(),
                                StandardCharsets.UTF_8))).collect(Collectors.toSet()).equals(Set.copyOf(s.ids)));
                String ready = "http://127.0.0.1:" + SidecarRetentionTest.port(s.process) + "/health/ready";
                Readiness.untilReady(() -> Readiness.overHttp(ready), Duration.ofSeconds(20));
            }
        } finally {
            for (Sidecar s : sidecars) {
                s.process.close();
                if (s.relay.equals("cdc")) {
                    s.db.dropReplicationSlot("sidecar_secure");
                }
            }
        }
    }

    private record Sidecar(String relay, TestDatabase db, String topic, JavaProcess process, List<UUID> ids) {
    }

    /**
     * A broker certificate of a CA the truststore does not hold is a configuration error. Both
     * sidecars refuse to start (exit 1 before serving health) naming the bootstrap servers and the CA file; the rows wait.
     */
    @Test
    void bothSidecarsRefuseToStartWhenTheBrokerCertificateIsNotTrusted(@TempDir Path dir) throws Exception {
        String otherCa = TestCertificates.create().caCertificate().toString();
        List<Sidecar> sidecars = new ArrayList<>();
        try {
            for (String relay : List.of("poll", "cdc")) {
                Sidecar s = start(relay, dir, "_untrusted", otherCa);
                s.ids.addAll(write(s.db));
                sidecars.add(s);
            }
            for (Sidecar s : sidecars) {
                assertThat(s.process.waitForExit(STARTING)).as(s.process.output()).isEqualTo(1);
                assertThat(s.process.output()).contains("cannot start: the TLS handshake with "
                        + ground.kafka().bootstrapServers() + " failed").contains("not signed by a CA in " + otherCa)
                        .doesNotContain(" started");
                assertThat(s.db.count("SELECT count(*) FROM outbox_event")).isEqualTo(s.ids.size());
            }
        } finally {
            sidecars.forEach(s -> s.process.close());
        }
    }

    /**
     * @param suffix     of the role, principal, instance and slot names (each belongs to the server or broker)
     * @param truststore the CA file the sidecar is given; null: the ground's
     */
    private Sidecar start(String relay, Path dir, String suffix, String truststore) throws Exception {
        SecureKafka kafka = ground.kafka();
        TestDatabase db = ground.postgres().newDatabase();
        String role = "sidecar_" + relay + suffix;
        String password = role + "-" + UUID.randomUUID();
        try (Connection c = db.connect(); Statement s = c.createStatement()) {
            s.execute("CREATE ROLE " + role + " LOGIN " + (relay.equals("cdc") ? "REPLICATION " : "") + "PASSWORD '"
                    + password + "'");
            if (relay.equals("cdc")) {
                DocumentedGrants.cdcRelay(s, role, true);
                DocumentedGrants.cdcPublication(s);
            } else {
                DocumentedGrants.pollingRelay(s, role);
            }
        }
        String topic = TestKafka.uniqueTopic("sidecar-secure-" + relay);
        kafka.createTopic(topic, 2);
        String principal = "sidecar-" + relay + suffix.replace('_', '-');
        Map<String, Object> security = kafka.createScramUser(principal, "sidecar-kafka-pw");
        kafka.grant(principal, AclOperation.WRITE, ResourceType.TOPIC, topic);
        kafka.grant(principal, AclOperation.DESCRIBE, ResourceType.TOPIC, topic);

        Properties config = new Properties();
        config.setProperty("jdbc-url", db.jdbcUrl());
        config.setProperty("user", role);
        config.setProperty("password", password);
        config.setProperty("bootstrap-servers", kafka.bootstrapServers());
        security.forEach((k, v) -> config.setProperty("kafka." + k, String.valueOf(v)));
        if (truststore != null) {
            config.setProperty("kafka.ssl.truststore.location", truststore);
        }
        Path file = dir.resolve(relay + suffix + ".properties");
        try (var out = Files.newBufferedWriter(file)) {
            config.store(out, "secure sidecar");
        }
        List<String> args = new ArrayList<>(List.of("--config", file.toString(), "relay", relay, "--http-port", "0",
                "--instance-id", "secure-" + relay + suffix, "--route", topic));
        if (relay.equals("cdc")) {
            args.addAll(List.of("--slot-name", "sidecar_secure" + suffix));
        }
        return new Sidecar(relay, db, topic, JavaProcess.start("secure-" + relay + suffix, Main.class, args, List.of(), Map.of()),
                new ArrayList<>());
    }

    private static List<UUID> write(TestDatabase db) throws Exception {
        List<OutboxMessage> messages = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            messages.add(OutboxMessage.builder("order", "o" + i, "Placed").payloadJson("{\"n\":" + i + "}").build());
        }
        try (Connection c = db.connect()) {
            c.setAutoCommit(false);
            List<UUID> ids = OutboxWriter.builder().schema("public").build().write(c, messages);
            c.commit();
            return ids;
        }
    }
}
