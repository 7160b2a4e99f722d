package dev.outboxkit.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariDataSource;
import dev.outboxkit.consumer.DedupeConsumer;
import dev.outboxkit.core.InvalidEventException;
import dev.outboxkit.core.Secret;
import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.relay.Relay;
import dev.outboxkit.relay.cdc.CdcRelay;
import dev.outboxkit.relay.poller.PollerProducerSeam;
import dev.outboxkit.relay.poller.PollingRelay;
import dev.outboxkit.runtime.LeaseTable;
import dev.outboxkit.testkit.History;
import dev.outboxkit.testkit.LocalPostgres;
import dev.outboxkit.testkit.SecureKafka;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import dev.outboxkit.writer.OutboxMessage;
import dev.outboxkit.writer.OutboxWriter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Future;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourceType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Everything over the ground managed services give (issue 26, items 3 and 4): a Kafka broker that takes only
 * SASL_SSL (SCRAM-SHA-512 for the relays, PLAIN for the consumer, as Confluent Cloud) with ACLs enforced and no
 * ACL meaning no access, and a PostgreSQL that takes only TLS with {@code sslmode=verify-full} and SCRAM passwords.
 * The writer, the polling relay, the CDC relay and consumer-dedupe (its dead-letter producer and its retention
 * admin client included) each run as their own principal holding exactly the ACLs of docs/managed-services.md and
 * as their own role holding exactly the grants of their README. One broker and one server for the class.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ManagedGroundTest {

    private static final String RELAY_KAFKA_PASSWORD = "relay-kafka-pw";
    private static final String CONSUMER_KAFKA_PASSWORD = "consumer-kafka-pw";

    private ManagedRoles ground;
    private SecureKafka kafka;
    private LocalPostgres pg;
    private String appPassword;
    private String pollPassword;
    private String cdcPassword;
    private String consumerPassword;

    @BeforeAll
    void start() throws Exception {
        ground = ManagedRoles.start(Map.of("consumer", CONSUMER_KAFKA_PASSWORD), List.of(ManagedRoles.Role.values()));
        kafka = ground.kafka();
        pg = ground.postgres();
        appPassword = ground.password(ManagedRoles.Role.WRITER);
        pollPassword = ground.password(ManagedRoles.Role.POLLING_RELAY);
        cdcPassword = ground.password(ManagedRoles.Role.CDC_RELAY);
        consumerPassword = ground.password(ManagedRoles.Role.CONSUMER);
    }

    @AfterAll
    void stop() {
        if (ground != null) {
            ground.close();
        }
    }

    /** A database of the test's own (the relays take every row of theirs), each role with exactly its grants. */
    private TestDatabase database() throws Exception {
        // applied: the order of first applications (an identity needs no grant on its sequence)
        return ground.newDatabase("CREATE TABLE effect (applied bigint GENERATED ALWAYS AS IDENTITY, "
                        + "event_id uuid PRIMARY KEY, aggregate_id text NOT NULL)",
                "GRANT INSERT ON effect TO consumer_role");
    }

    /**
     * The polling relay and the consumer, each its own principal and role: G1 (every committed event published), G3
     * (each aggregate's first publications and first applications in commit order), G4 (each event applied once, the
     * republished ones too), G5 (a rolled-back transaction never published), G7 (an oversized record the broker refuses
     * parked with Kafka's reason while the events behind it flow; a poison event forwarded to {@code <topic>.dlq} by the
     * consumer) and G6 (a stale lease holder's commit refused, the rows republished by the new holder).
     */
    @Test
    void pollingRelayAndConsumerKeepTheGuaranteesWithExactlyTheDocumentedRights() throws Exception {
        String topic = TestKafka.uniqueTopic("secure-poll");
        for (String t : List.of(topic, topic + ".dlq", topic + ".review")) {
            kafka.createTopic(t, 2);
        }
        String small = smallTopic(topic);
        Map<String, Object> relayKafka = kafka.createScramUser("relay", RELAY_KAFKA_PASSWORD);
        grantRelay("relay", topic);
        grantRelay("relay", small);
        String group = "secure-consumer-" + UUID.randomUUID();
        grantConsumer("consumer", topic, group);

        TestDatabase db = database();
        History history = new History();
        Written written = writeScenario(db, history, small);
        List<UUID> poison = write(db, "poison", 1);
        AckGate gate = new AckGate();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        PollingRelay relay = PollerProducerSeam.producerFactory(pollingRelayBuilder(db, "relay", relayKafka, topic)
                        // a 10 s wait for acknowledgements: the fencing step below holds them back for a moment
                        .leaseDuration(Duration.ofSeconds(30)).meterRegistry(registry),
                config -> new GatedProducer(config, gate)).build();
        try (Pipeline pipeline = pipeline(relay, db, "relay", group, topic)) {
            DedupeConsumer consumer = pipeline.consumer();
            await("every good event applied once").atMost(Duration.ofSeconds(60))
                    .until(() -> db.count("SELECT count(*) FROM effect") == written.committed().size());
            await("the poison event on " + topic + ".dlq").atMost(Duration.ofSeconds(60))
                    .until(() -> ids(kafka.readAll(List.of(topic + ".dlq"))).equals(Set.copyOf(poison)));
            assertThat(db.count("SELECT count(*) FROM outbox_event")).isZero();
            assertParkedOversized(db, written);
            // the retention job's admin client reads the group's offsets over the same settings (DESCRIBE on the group)
            assertThat(consumer.purgeExpired().purged()).isZero();

            List<UUID> republished = staleCommitRefused(db, history, gate, registry);
            await("the new holder's copies applied").atMost(Duration.ofSeconds(60))
                    .until(() -> db.count("SELECT count(*) FROM effect") == written.committed().size() + republished.size());
            Map<UUID, Integer> copies = copies(kafka.readAll(List.of(topic)));
            assertThat(republished).allSatisfy(id -> assertThat(copies.get(id))
                    .as("copies of %s: the stale holder's and the new holder's", id).isGreaterThanOrEqualTo(2));
            assertThat(copies.keySet()).containsAll(poison);
            checkScenario(db, history, topic, written, "polling relay");
            assertReady(consumer.health());
            await("ready").atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertReady(relay.health()));
        }
    }

    /**
     * G6 over the secure connections: the relay's acknowledgements of three events are held back (the records are in
     * Kafka); meanwhile a newer holder supersedes every lease with a new fencing token. The old holder's commit is then
     * refused and deletes nothing, so when the newer holder gives the leases back the relay claims the rows again under
     * new tokens and publishes them a second time. Returns the three events.
     */
    private List<UUID> staleCommitRefused(TestDatabase db, History history, AckGate gate, SimpleMeterRegistry registry)
            throws Exception {
        gate.hold();
        List<UUID> ids;
        // one transaction: the relay claims the three rows in one batch, whose three answers are then held
        try (Connection c = java.sql.DriverManager.getConnection(db.jdbcUrl(), "app_role", appPassword)) {
            c.setAutoCommit(false);
            List<OutboxMessage> messages = new ArrayList<>();
            for (int n = 0; n < 3; n++) {
                messages.add(OutboxMessage.builder("order", "fenced-1", "Step").payloadJson("{\"n\":" + n + "}").build());
            }
            ids = OutboxWriter.builder().schema("public").build().write(c, messages);
            c.commit();
        }
        for (int n = 0; n < ids.size(); n++) {
            history.committed(ids.get(n), "fenced-1", n);
        }
        await("three acknowledgements held back").atMost(Duration.ofSeconds(60)).until(() -> gate.held() == 3);
        long superseding;
        try (Connection admin = db.connect(); Statement s = admin.createStatement()) {
            s.executeUpdate("UPDATE outbox_relay_lease SET holder = 'newer-holder', fence = nextval('outbox_fence_seq')");
            try (ResultSet rs = s.executeQuery("SELECT min(fence) FROM outbox_relay_lease")) {
                rs.next();
                superseding = rs.getLong(1);
            }
        }
        gate.release();
        await("the stale holder's commit refused").atMost(Duration.ofSeconds(30))
                .until(() -> registry.get("outbox.relay.fence.rejections").counter().count() >= 1);
        try (Connection admin = db.connect(); Statement s = admin.createStatement()) {
            // the newer holder stops gracefully: it gives its leases back and announces it, as a relay does
            s.executeUpdate("DELETE FROM outbox_relay_lease WHERE holder = 'newer-holder'");
            s.execute("SELECT pg_notify('" + LeaseTable.RELEASED_CHANNEL + "', 'public')");
        }
        await("republished by the new holder").atMost(Duration.ofSeconds(60))
                .until(() -> db.count("SELECT count(*) FROM outbox_event") == 0);
        assertThat(db.count("SELECT min(fence) FROM outbox_relay_lease WHERE holder = 'instance-of-relay'"))
                .as("the relay holds its leases under tokens newer than the superseding ones").isGreaterThan(superseding);
        System.out.println("SECURE polling relay, stale holder: commit refused after its leases were superseded (token "
                + superseding + "), " + (long) registry.get("outbox.relay.fence.rejections").counter().count()
                + " fence rejection(s); the rows published again by the new holder");
        return ids;
    }

    @Test
    void aConsumerWithoutWriteOnItsDeadLetterTopicWaitsNamingItAndForwardsOnceGranted() throws Exception {
        String topic = TestKafka.uniqueTopic("secure-dlq");
        kafka.createTopic(topic, 1);
        kafka.createTopic(topic + ".dlq", 1);
        Map<String, Object> relayKafka = kafka.createScramUser("relay-dlq", RELAY_KAFKA_PASSWORD);
        grantRelay("relay-dlq", topic);
        String group = "secure-dlq-" + UUID.randomUUID();
        kafka.grant("consumer", AclOperation.READ, ResourceType.TOPIC, topic);
        kafka.grant("consumer", AclOperation.READ, ResourceType.GROUP, group);   // WRITE on the .dlq missing
        TestDatabase db = database();
        List<UUID> poison = write(db, "poison", 1);
        try (Pipeline pipeline = pipeline(db, "relay-dlq", relayKafka, group, topic)) {
            DedupeConsumer consumer = pipeline.consumer();
            String detail = awaitOperatorNeeded(consumer::health, Duration.ofSeconds(60),
                    "User:consumer may not WRITE topic " + topic + ".dlq");
            assertThat(kafka.readAll(List.of(topic + ".dlq"))).isEmpty();
            long granted = System.nanoTime();
            kafka.grant("consumer", AclOperation.WRITE, ResourceType.TOPIC, topic + ".dlq");
            await("dead-lettered once granted").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100))
                    .until(() -> ids(kafka.readAll(List.of(topic + ".dlq"))).equals(Set.copyOf(poison)));
            long resumedMs = (System.nanoTime() - granted) / 1_000_000;
            System.out.println("SECURE consumer without WRITE on its dead-letter topic: \"" + detail + "\"; forwarded "
                    + resumedMs + " ms after the grant");
        }
    }

    /**
     * The CDC relay and the consumer, each its own principal and role: G1, G3 (first publications and first
     * applications of each aggregate in commit order), G4, G5 (a rolled-back transaction's rows are in the WAL but
     * never published) and G7 (the oversized record parked with Kafka's reason, the events behind it published).
     */
    @Test
    void cdcRelayAndConsumerKeepTheGuaranteesWithExactlyTheDocumentedRights() throws Exception {
        String topic = TestKafka.uniqueTopic("secure-cdc");
        kafka.createTopic(topic, 2);
        String small = smallTopic(topic);
        Map<String, Object> relayKafka = kafka.createScramUser("cdc-relay", RELAY_KAFKA_PASSWORD);
        grantRelay("cdc-relay", topic);
        grantRelay("cdc-relay", small);
        String group = "secure-cdc-consumer-" + UUID.randomUUID();
        grantConsumer("consumer", topic, group);
        TestDatabase db = database();
        History history = new History();
        try (CdcRelay relay = cdcRelay(db, "secure_slot", relayKafka, topic);
             HikariDataSource pool = Harness.pool(db.jdbcUrl(), "consumer_role", consumerPassword, 2, "secure-cdc");
             DedupeConsumer consumer = consumer(pool, group, topic)) {
            consumer.start();
            Written written = writeScenario(db, history, small);
            await("every event applied once").atMost(Duration.ofSeconds(60))
                    .until(() -> db.count("SELECT count(*) FROM effect") == written.committed().size());
            await("the oversized record parked").atMost(Duration.ofSeconds(60))
                    .until(() -> db.count("SELECT count(*) FROM outbox_dead_letter") == 1);
            assertParkedOversized(db, written);
            checkScenario(db, history, topic, written, "CDC relay");
            // its status can still say "starting Debezium" for a moment after the first events went out
            await("ready").atMost(Duration.ofSeconds(10)).until(() -> relay.health().ready());
            assertReady(consumer.health());
        } finally {
            db.dropReplicationSlot("secure_slot");
        }
    }

    @Test
    void withoutWriteTheRelayPublishesNothingParksNothingAndResumesOnceGranted() throws Exception {
        String topic = TestKafka.uniqueTopic("secure-acl");
        Map<String, Object> relayKafka = principalWithoutWrite("relay-nowrite", topic);
        TestDatabase db = database();
        List<UUID> ids = write(db, "order", 5);
        try (PollingRelay relay = pollingRelay(db, "relay-nowrite", relayKafka, topic)) {
            relay.start();
            String detail = awaitOperatorNeeded(relay::health, Duration.ofSeconds(20),
                    "User:relay-nowrite may not WRITE topic " + topic);
            assertThat(kafka.readAll(List.of(topic))).isEmpty();
            assertThat(db.count("SELECT count(*) FROM outbox_dead_letter")).isZero();
            assertThat(db.count("SELECT count(*) FROM outbox_event")).isEqualTo(ids.size());

            long granted = System.nanoTime();
            kafka.grant("relay-nowrite", AclOperation.WRITE, ResourceType.TOPIC, topic);
            await("published once granted").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50))
                    .until(() -> db.count("SELECT count(*) FROM outbox_event") == 0);
            long resumedMs = (System.nanoTime() - granted) / 1_000_000;
            assertThat(ids(kafka.readAll(List.of(topic)))).isEqualTo(Set.copyOf(ids));
            assertThat(db.count("SELECT count(*) FROM outbox_dead_letter")).isZero();
            await("ready again").atMost(Duration.ofSeconds(10)).until(() -> relay.health().ready());
            System.out.println("SECURE polling relay without WRITE: \"" + detail + "\"; published " + resumedMs
                    + " ms after the grant");
        } finally {
            kafka.revoke("relay-nowrite", AclOperation.WRITE, ResourceType.TOPIC, topic, PatternType.LITERAL);
        }
    }

    @Test
    void withoutWriteTheCdcRelayPublishesNothingParksNothingAndResumesOnceGranted() throws Exception {
        String topic = TestKafka.uniqueTopic("secure-cdc-acl");
        Map<String, Object> relayKafka = principalWithoutWrite("cdc-nowrite", topic);
        TestDatabase db = database();
        try (CdcRelay relay = cdcRelay(db, "secure_slot_acl", relayKafka, topic)) {
            List<UUID> ids = write(db, "order", 5);
            String detail = awaitOperatorNeeded(relay::health, Duration.ofSeconds(30),
                    "User:cdc-nowrite may not WRITE topic " + topic);
            assertThat(kafka.readAll(List.of(topic))).isEmpty();
            assertThat(db.count("SELECT count(*) FROM outbox_dead_letter")).isZero();

            long granted = System.nanoTime();
            kafka.grant("cdc-nowrite", AclOperation.WRITE, ResourceType.TOPIC, topic);
            await("published once granted").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100))
                    .until(() -> ids(kafka.readAll(List.of(topic))).equals(Set.copyOf(ids)));
            long resumedMs = (System.nanoTime() - granted) / 1_000_000;
            assertThat(db.count("SELECT count(*) FROM outbox_dead_letter")).isZero();
            await("ready again").atMost(Duration.ofSeconds(10)).until(() -> relay.health().ready());
            System.out.println("SECURE CDC relay without WRITE: \"" + detail + "\"; published " + resumedMs
                    + " ms after the grant");
        } finally {
            db.dropReplicationSlot("secure_slot_acl");
        }
    }

    @Test
    void aWrongSaslPasswordIsNotReadyAndLosesNothing() throws Exception {
        String detail = notReadyLosingNothing("relay-auth",
                security -> security.putAll(kafka.clientSecurity("relay-auth", "not-the-password", SecureKafka.SCRAM_SHA_512)),
                "User:relay-auth could not authenticate with SASL SCRAM-SHA-512").detail;
        System.out.println("SECURE polling relay with a wrong SASL password: \"" + detail + "\"");
    }

    /**
     * A broker certificate the client's truststore does not trust is a configuration error, not an outage: both relays
     * and the consumer refuse to start naming the bootstrap servers and the CA file, and touch nothing. (A host name
     * the certificate does not name fails the same handshake the same way; the ground has no second name for the
     * broker's address that every build machine resolves, so only the CA is exercised here.)
     */
    @Test
    void anUntrustedBrokerCertificateRefusesToStartNamingHostAndCa() throws Exception {
        String otherCa = dev.outboxkit.testkit.TestCertificates.create().caCertificate().toString();
        String topic = TestKafka.uniqueTopic("secure-untrusted");
        kafka.createTopic(topic, 1);
        Map<String, Object> security = new java.util.HashMap<>(kafka.createScramUser("relay-tls", RELAY_KAFKA_PASSWORD));
        grantRelay("relay-tls", topic);
        security.put("ssl.truststore.location", otherCa);
        TestDatabase db = database();
        List<UUID> ids = write(db, "order", 3);
        String[] named = {"cannot start: the TLS handshake with " + kafka.bootstrapServers() + " failed",
                "not signed by a CA in " + otherCa, "or does not name that host"};
        try (PollingRelay relay = pollingRelay(db, "relay-tls", security, topic)) {
            assertThatThrownBy(relay::start).hasMessageContaining("poll relay instance-of-relay-tls")
                    .hasMessageContainingAll(named)
                    .satisfies(e -> System.out.println("SECURE polling relay, broker certificate from an untrusted CA: "
                            + e.getMessage()));
        }
        try (CdcRelay relay = CdcRelay.builder().jdbcUrl(db.jdbcUrl()).user("cdc_relay").password(Secret.of(cdcPassword))
                .bootstrapServers(kafka.bootstrapServers()).producerOverrides(security).route(TopicRoute.of(topic))
                .slotName("secure_slot_tls").deleteAfterPublish(false).build()) {
            assertThatThrownBy(relay::start).hasMessageContaining("the CDC relay on slot secure_slot_tls")
                    .hasMessageContainingAll(named);
        }
        Map<String, Object> consumerSecurity = new java.util.HashMap<>(
                kafka.clientSecurity("consumer", CONSUMER_KAFKA_PASSWORD, SecureKafka.PLAIN));
        consumerSecurity.put("ssl.truststore.location", otherCa);
        try (HikariDataSource pool = Harness.pool(db.jdbcUrl(), "consumer_role", consumerPassword, 2, "secure-tls");
             DedupeConsumer consumer = DedupeConsumer.builder().bootstrapServers(kafka.bootstrapServers())
                     .kafkaProperties(consumerSecurity).group("secure-tls").topics(List.of(topic)).dataSource(pool)
                     .handler((connection, event) -> { }).build()) {
            assertThatThrownBy(consumer::start).hasMessageContaining("consumer").hasMessageContaining("of group secure-tls")
                    .hasMessageContainingAll(named);
        }
        assertThat(db.count("SELECT count(*) FROM outbox_event")).isEqualTo(ids.size());
        assertThat(db.count("SELECT count(*) FROM outbox_dead_letter")).isZero();
        assertThat(db.count("SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'secure_slot_tls'")).isZero();
        assertThat(kafka.readAll(List.of(topic))).isEmpty();
        // PostgreSQL's certificate from an untrusted CA: the relay refuses to start, naming host and CA file
        String badUrl = db.jdbcUrl().replace(ground.certificates().caCertificate().toString(), otherCa);
        try (PollingRelay relay = PollingRelay.builder().jdbcUrl(badUrl).user("poll_relay").password(Secret.of(pollPassword))
                .bootstrapServers(kafka.bootstrapServers()).route(TopicRoute.of(topic)).build()) {
            assertThatThrownBy(relay::start).hasMessageContaining("the TLS handshake with PostgreSQL at 127.0.0.1:"
                    + pg.port() + " failed").hasMessageContaining("sslrootcert=" + otherCa)
                    .satisfies(e -> System.out.println("SECURE polling relay, PostgreSQL certificate from an untrusted CA: "
                            + e.getMessage()));
        }
    }

    // ------------------------------------------------------------------ the principals' documented ACLs

    /** docs/managed-services.md, the relays: WRITE and DESCRIBE on their topics (no IDEMPOTENT_WRITE on Kafka 3.2+). */
    private void grantRelay(String user, String topic) {
        kafka.grant(user, AclOperation.WRITE, ResourceType.TOPIC, topic);
        kafka.grant(user, AclOperation.DESCRIBE, ResourceType.TOPIC, topic);
    }

    /**
     * docs/managed-services.md, consumer-dedupe: READ on its topics and its group, DESCRIBE on the group (retention),
     * WRITE on the dead-letter and review topics (created beforehand).
     */
    private void grantConsumer(String user, String topic, String group) {
        kafka.grant(user, AclOperation.READ, ResourceType.TOPIC, topic);
        kafka.grant(user, AclOperation.READ, ResourceType.GROUP, group);
        kafka.grant(user, AclOperation.DESCRIBE, ResourceType.GROUP, group);
        kafka.grant(user, AclOperation.WRITE, ResourceType.TOPIC, topic + ".dlq");
        kafka.grant(user, AclOperation.WRITE, ResourceType.TOPIC, topic + ".review");
    }

    private record Refused(TestDatabase db, String topic, String detail) {
    }

    /**
     * A polling relay of principal {@code user} (WRITE and DESCRIBE granted) whose Kafka settings {@code breakage}
     * spoils: it must turn not ready naming {@code texts}, keep every row and park none, and publish nothing.
     */
    private Refused notReadyLosingNothing(String user, java.util.function.Consumer<Map<String, Object>> breakage,
            String... texts) throws Exception {
        String topic = TestKafka.uniqueTopic("secure-" + user);
        kafka.createTopic(topic, 1);
        Map<String, Object> security = new java.util.HashMap<>(kafka.createScramUser(user, RELAY_KAFKA_PASSWORD));
        grantRelay(user, topic);
        breakage.accept(security);
        TestDatabase db = database();
        List<UUID> ids = write(db, "order", 3);
        try (PollingRelay relay = pollingRelay(db, user, security, topic)) {
            relay.start();
            String detail = awaitOperatorNeeded(relay::health, Duration.ofSeconds(20), texts);
            assertThat(db.count("SELECT count(*) FROM outbox_event")).isEqualTo(ids.size());
            assertThat(db.count("SELECT count(*) FROM outbox_dead_letter")).isZero();
            assertThat(kafka.readAll(List.of(topic))).isEmpty();
            return new Refused(db, topic, detail);
        }
    }

    /** A SCRAM principal with DESCRIBE on {@code topic} (created here) but no WRITE; its client settings. */
    private Map<String, Object> principalWithoutWrite(String user, String topic) {
        kafka.createTopic(topic, 2);
        Map<String, Object> security = kafka.createScramUser(user, RELAY_KAFKA_PASSWORD);
        kafka.grant(user, AclOperation.DESCRIBE, ResourceType.TOPIC, topic);
        return security;
    }

    /** Waits until {@code health} is not ready with "needs an operator" and {@code texts} in its detail; returns it. */
    private static String awaitOperatorNeeded(java.util.function.Supplier<Relay.Health> health, Duration within,
            String... texts) {
        await("not ready: needs an operator, " + String.join(", ", texts)).atMost(within).untilAsserted(() -> {
            Relay.Health h = health.get();
            assertThat(h.ready()).isFalse();
            assertThat(h.detail()).contains("needs an operator").contains(texts);
        });
        return health.get().detail();
    }

    // ------------------------------------------------------------------ parts

    private PollingRelay pollingRelay(TestDatabase db, String instance, Map<String, Object> kafkaSecurity, String topic) {
        return pollingRelayBuilder(db, instance, kafkaSecurity, topic).build();
    }

    private PollingRelay.Builder pollingRelayBuilder(TestDatabase db, String instance, Map<String, Object> kafkaSecurity,
            String topic) {
        return PollingRelay.builder().jdbcUrl(db.jdbcUrl()).user("poll_relay").password(Secret.of(pollPassword))
                .bootstrapServers(kafka.bootstrapServers()).producerOverrides(kafkaSecurity).route(TopicRoute.of(topic))
                .instanceId("instance-of-" + instance);
    }

    /** A CDC relay as role cdc_relay, started; returns once its slot exists (events written from then on are seen). */
    private CdcRelay cdcRelay(TestDatabase db, String slot, Map<String, Object> kafkaSecurity, String topic) {
        CdcRelay relay = CdcRelay.builder().jdbcUrl(db.jdbcUrl()).user("cdc_relay").password(Secret.of(cdcPassword))
                .bootstrapServers(kafka.bootstrapServers()).producerOverrides(kafkaSecurity).route(TopicRoute.of(topic))
                .slotName(slot).deleteAfterPublish(false).heartbeatInterval(Duration.ofSeconds(1))
                .offsetFlushInterval(Duration.ofMillis(200)).shutdownTimeout(Duration.ofSeconds(15)).build();
        relay.start();
        await("slot " + slot + " created over TLS").atMost(Duration.ofSeconds(60))
                .until(() -> db.count("SELECT count(*) FROM pg_replication_slots WHERE slot_name = ?", slot) == 1);
        return relay;
    }

    /** A polling relay and a consumer (as consumer_role, principal consumer over PLAIN) on {@code topic}, started. */
    private record Pipeline(PollingRelay relay, HikariDataSource pool, DedupeConsumer consumer) implements AutoCloseable {
        @Override
        public void close() {
            try (relay; pool; consumer) {
                // closed in reverse order: consumer, pool, relay
            }
        }
    }

    private Pipeline pipeline(TestDatabase db, String relayUser, Map<String, Object> relayKafka, String group,
            String topic) {
        return pipeline(pollingRelay(db, relayUser, relayKafka, topic), db, relayUser, group, topic);
    }

    private Pipeline pipeline(PollingRelay relay, TestDatabase db, String relayUser, String group, String topic) {
        HikariDataSource pool = Harness.pool(db.jdbcUrl(), "consumer_role", consumerPassword, 2, "secure-" + relayUser);
        DedupeConsumer consumer = consumer(pool, group, topic);
        relay.start();
        consumer.start();
        return new Pipeline(relay, pool, consumer);
    }

    private DedupeConsumer consumer(HikariDataSource pool, String group, String topic) {
        return DedupeConsumer.builder().bootstrapServers(kafka.bootstrapServers())
                .kafkaProperties(kafka.clientSecurity("consumer", CONSUMER_KAFKA_PASSWORD, SecureKafka.PLAIN))
                .group(group).topics(List.of(topic)).dataSource(pool)
                .handler((connection, event) -> {
                    if (event.aggregateType().equals("poison")) {
                        throw new InvalidEventException("the handler refuses aggregate type poison");
                    }
                    try (PreparedStatement ps = connection.prepareStatement(
                            "INSERT INTO effect (event_id, aggregate_id) VALUES (?, ?)")) {
                        ps.setObject(1, event.id());
                        ps.setString(2, event.aggregateId());
                        ps.executeUpdate();
                    }
                })
                .build();
    }

    // ------------------------------------------------------------------ the scenario both relays carry

    private static final int AGGREGATES = 4;
    private static final int EVENTS_EACH = 12;

    /** What {@link #writeScenario} wrote: the committed events, the rolled-back ones and the oversized one. */
    private record Written(List<UUID> committed, List<UUID> rolledBack, UUID oversized) {
    }

    /** A topic of the relay's that takes at most 10 kB per batch (the producer allows 1 MB: only the broker refuses). */
    private String smallTopic(String topic) {
        String small = topic + ".small";
        kafka.createTopic(small, 1, (short) -1, Map.of("max.message.bytes", "10000"));
        return small;
    }

    /**
     * As the application's role, over TLS: {@value #EVENTS_EACH} events for each of {@value #AGGREGATES} aggregates,
     * one transaction each, round robin (each aggregate's commits are numbered in {@code history}); in the middle a
     * transaction that writes two events and rolls back, and one that writes an event to {@code smallTopic} too large
     * for it (random hex: compression cannot shrink it), with more events after both.
     */
    private Written writeScenario(TestDatabase db, History history, String smallTopic) throws Exception {
        List<UUID> committed = new ArrayList<>();
        List<UUID> rolledBack = new ArrayList<>();
        UUID oversized = null;
        try (Connection c = java.sql.DriverManager.getConnection(db.jdbcUrl(), "app_role", appPassword)) {
            c.setAutoCommit(false);
            OutboxWriter writer = OutboxWriter.builder().schema("public").build();
            for (int n = 0; n < EVENTS_EACH; n++) {
                for (int a = 0; a < AGGREGATES; a++) {
                    String aggregate = "order-" + a;
                    committed.add(writeOne(c, history, aggregate, n, OutboxMessage.builder("order", aggregate, "Step")));
                }
                if (n == EVENTS_EACH / 2) {
                    List<UUID> ids = writer.write(c,
                            OutboxMessage.builder("order", "order-0", "Step").payloadJson("{\"rolledBack\":1}").build(),
                            OutboxMessage.builder("order", "order-1", "Step").payloadJson("{\"rolledBack\":2}").build());
                    c.rollback();
                    ids.forEach(history::rolledBack);
                    rolledBack.addAll(ids);
                    byte[] noise = new byte[20_000];
                    new SecureRandom().nextBytes(noise);
                    oversized = writer.write(c, OutboxMessage.builder("oversized", "big-1", "Huge").topic(smallTopic)
                            .payloadJson("{\"blob\":\"" + HexFormat.of().formatHex(noise) + "\"}").build()).get(0);
                    c.commit();
                }
            }
        }
        return new Written(committed, rolledBack, oversized);
    }

    /** One event of {@code aggregate}, its commit number {@code n}, committed in a transaction of its own. */
    private static UUID writeOne(Connection c, History history, String aggregate, int n, OutboxMessage.Builder message)
            throws Exception {
        UUID id = OutboxWriter.builder().schema("public").build().write(c, message.payloadJson("{\"n\":" + n + "}").build())
                .get(0);
        c.commit();
        history.committed(id, aggregate, n);
        return id;
    }

    /** G7: the one parked row is the oversized event, with the reason Kafka gave (the same for both relays). */
    private static void assertParkedOversized(TestDatabase db, Written written) throws Exception {
        Map<UUID, String> parked = new java.util.HashMap<>();
        try (Connection c = db.connect(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT id, error_class FROM outbox_dead_letter")) {
            while (rs.next()) {
                parked.put(rs.getObject(1, UUID.class), rs.getString(2));
            }
        }
        assertThat(parked).containsExactly(Map.entry(written.oversized(), "org.apache.kafka.common.errors.RecordTooLargeException"));
    }

    /**
     * G1, G3, G4, G5 from what is in Kafka and in the consumer's effect table: every committed event delivered and
     * applied once, each aggregate's first publications (in partition order) and first applications in commit order, no
     * rolled-back event published or applied. Prints the checker's figures.
     */
    private void checkScenario(TestDatabase db, History history, String topic, Written written, String relay)
            throws Exception {
        Set<UUID> published = new HashSet<>();
        for (ConsumerRecord<byte[], byte[]> r : kafka.readAll(List.of(topic))) {
            UUID id = id(r);
            published.add(id);
            history.delivered(id, new String(r.key(), StandardCharsets.UTF_8));
        }
        Set<UUID> applied = new HashSet<>();
        try (Connection c = db.connect(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT event_id, aggregate_id FROM effect ORDER BY applied")) {
            while (rs.next()) {
                UUID id = rs.getObject(1, UUID.class);
                applied.add(id);
                history.applied(id, rs.getString(2));
            }
        }
        assertThat(published).as("rolled back, never published").doesNotContainAnyElementsOf(written.rolledBack());
        assertThat(applied).doesNotContainAnyElementsOf(written.rolledBack());
        assertThat(published).doesNotContain(written.oversized());
        History.Report report = history.check();
        System.out.println("SECURE " + relay + " and consumer, " + AGGREGATES + " aggregates x " + EVENTS_EACH
                + " transactions, a rollback and an oversized record: " + report.summary());
        assertThat(report.ok()).as(report.summary()).isTrue();
        assertThat(report.lost()).isZero();
        assertThat(report.orderViolations()).isZero();
        assertThat(report.publicationOrderViolations()).isZero();
        assertThat(report.applied()).isEqualTo(report.intents());
    }

    /**
     * A real producer whose acknowledgements the test can hold back: the records go to the broker as usual, but while
     * {@link AckGate#hold() held} each answer waits and reaches the relay only at {@link AckGate#release()}.
     */
    private static final class GatedProducer extends KafkaProducer<byte[], byte[]> {
        private final AckGate gate;

        GatedProducer(Map<String, Object> config, AckGate gate) {
            super(config);
            this.gate = gate;
        }

        @Override
        public Future<RecordMetadata> send(ProducerRecord<byte[], byte[]> record, Callback callback) {
            return super.send(record, callback == null ? null : gate.wrap(callback));
        }
    }

    /** Holds producer answers back on demand (thread-safe). */
    private static final class AckGate {
        private final List<Runnable> held = new ArrayList<>();
        private boolean holding;

        synchronized void hold() {
            holding = true;
        }

        synchronized int held() {
            return held.size();
        }

        /** Hands every held answer to the relay, on this thread, and stops holding. */
        void release() {
            List<Runnable> answers;
            synchronized (this) {
                holding = false;
                answers = new ArrayList<>(held);
                held.clear();
            }
            answers.forEach(Runnable::run);
        }

        Callback wrap(Callback callback) {
            return (metadata, exception) -> {
                Runnable answer = () -> callback.onCompletion(metadata, exception);
                synchronized (this) {
                    if (holding) {
                        held.add(answer);
                        return;
                    }
                }
                answer.run();
            };
        }
    }

    /** Writes {@code n} events in one transaction as the application's role, over TLS. */
    private List<UUID> write(TestDatabase db, String aggregateType, int n) throws Exception {
        OutboxWriter writer = OutboxWriter.builder().schema("public").build();
        List<OutboxMessage> messages = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            messages.add(OutboxMessage.builder(aggregateType, "a" + (i % 4), "Placed").payloadJson("{\"n\":" + i + "}").build());
        }
        try (Connection c = java.sql.DriverManager.getConnection(db.jdbcUrl(), "app_role", appPassword)) {
            c.setAutoCommit(false);
            List<UUID> ids = writer.write(c, messages);
            c.commit();
            return ids;
        }
    }

    private static Set<UUID> ids(List<ConsumerRecord<byte[], byte[]>> records) {
        Set<UUID> ids = new HashSet<>();
        for (ConsumerRecord<byte[], byte[]> r : records) {
            ids.add(id(r));
        }
        return ids;
    }

    /** How many records of each event id. */
    private static Map<UUID, Integer> copies(List<ConsumerRecord<byte[], byte[]>> records) {
        Map<UUID, Integer> copies = new java.util.HashMap<>();
        for (ConsumerRecord<byte[], byte[]> r : records) {
            copies.merge(id(r), 1, Integer::sum);
        }
        return copies;
    }

    private static UUID id(ConsumerRecord<byte[], byte[]> r) {
        return UUID.fromString(new String(r.headers().lastHeader("id").value(), StandardCharsets.UTF_8));
    }

    private static void assertReady(Relay.Health health) {
        assertThat(health.ready()).as(health.detail()).isTrue();
    }
}
