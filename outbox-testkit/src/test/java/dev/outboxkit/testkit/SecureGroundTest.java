package dev.outboxkit.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.errors.SslAuthenticationException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The secure ground itself: a SASL_SSL broker with ACLs and a TLS + SCRAM PostgreSQL refuse what managed services
 * refuse, and accept a principal that holds its password, trusts the run's CA and has its ACLs. One broker and one
 * server for the class.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SecureGroundTest {

    private SecureGround ground;
    private TestCertificates certs;
    private SecureKafka kafka;
    private LocalPostgres pg;

    @BeforeAll
    void start() {
        ground = SecureGround.start(Map.of("plain-user", "plain-secret"));
        certs = ground.certificates();
        kafka = ground.kafka();
        pg = ground.postgres();
    }

    @AfterAll
    void stop() {
        if (ground != null) {
            ground.close();
        }
    }

    @Test
    void aPrincipalPublishesOnlyWhereItsAclsAllow() throws Exception {
        String topic = TestKafka.uniqueTopic("secure");
        kafka.createTopic(topic, 1);
        Map<String, Object> scram = kafka.createScramUser("writer", "writer-secret");

        // No WRITE anywhere: the idempotent producer may not even get a producer id (KIP-679: WRITE on any topic
        // implies IDEMPOTENT_WRITE), so the refusal names the cluster or the topic, whichever request comes first.
        assertThat(sendFails(scram, topic)).isInstanceOfAny(ClusterAuthorizationException.class,
                TopicAuthorizationException.class);
        String other = TestKafka.uniqueTopic("secure-other");
        kafka.createTopic(other, 1);
        kafka.grant("writer", AclOperation.WRITE, ResourceType.TOPIC, other);
        assertThatThrownBy(() -> send(scram, topic)).hasCauseInstanceOf(TopicAuthorizationException.class);
        kafka.revoke("writer", AclOperation.WRITE, ResourceType.TOPIC, other, PatternType.LITERAL);

        kafka.grant("writer", AclOperation.WRITE, ResourceType.TOPIC, topic);
        kafka.grant("writer", AclOperation.DESCRIBE, ResourceType.TOPIC, topic);
        assertThat(kafka.acls("writer")).containsExactly("DESCRIBE TOPIC " + topic + " (LITERAL)",
                "WRITE TOPIC " + topic + " (LITERAL)");
        send(scram, topic);
        assertThat(kafka.readAll(List.of(topic))).hasSize(1);

        kafka.revoke("writer", AclOperation.WRITE, ResourceType.TOPIC, topic, PatternType.LITERAL);
        assertThat(sendFails(scram, topic)).isInstanceOfAny(ClusterAuthorizationException.class,
                TopicAuthorizationException.class);
    }

    @Test
    void plainUsersFromTheJaasConfigurationAuthenticate() throws Exception {
        String topic = TestKafka.uniqueTopic("secure-plain");
        kafka.createTopic(topic, 1);
        kafka.grant("plain-user", AclOperation.WRITE, ResourceType.TOPIC, topic);
        send(kafka.clientSecurity("plain-user", "plain-secret", SecureKafka.PLAIN), topic);
        assertThat(kafka.readAll(List.of(topic))).hasSize(1);
    }

    @Test
    void theBrokerRefusesWrongPasswordsPlaintextAndAnUntrustedAuthority() {
        kafka.createScramUser("someone", "right-secret");
        assertThat(describeClusterFails(kafka.clientSecurity("someone", "wrong-secret", SecureKafka.SCRAM_SHA_512)))
                .isInstanceOf(SaslAuthenticationException.class);
        assertThat(describeClusterFails(kafka.clientSecurity("plain-user", "wrong", SecureKafka.PLAIN)))
                .isInstanceOf(SaslAuthenticationException.class);

        TestCertificates other = TestCertificates.create();
        Map<String, Object> untrusted = new HashMap<>(kafka.clientSecurity("someone", "right-secret", SecureKafka.SCRAM_SHA_512));
        untrusted.put("ssl.truststore.location", other.caCertificate().toString());
        assertThat(describeClusterFails(untrusted)).isInstanceOf(SslAuthenticationException.class);

        // no TLS at all: the client never gets an answer it understands
        assertThat(describeClusterFails(Map.of("security.protocol", "PLAINTEXT")))
                .isInstanceOf(org.apache.kafka.common.errors.TimeoutException.class);
    }

    @Test
    void postgresTakesOnlyTlsWithAVerifiedCertificateAndAPassword() throws Exception {
        assertThat(pg.jdbcUrl("postgres")).contains("sslmode=verify-full", "sslrootcert=" + certs.caCertificate());
        try (Connection c = pg.connectAdmin("postgres"); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")) {
            assertThat(rs.next()).isTrue();
            assertThat(rs.getBoolean(1)).isTrue();
        }
        pg.createPasswordRole("app_role", "app-secret", "");
        try (Connection c = connect(pg.jdbcUrl("postgres"), "app_role", "app-secret")) {
            assertThat(c.isValid(5)).isTrue();
        }
        assertThat(sqlState(() -> connect(pg.jdbcUrl("postgres"), "app_role", "wrong"))).isEqualTo("28P01");
        String plain = "jdbc:postgresql://127.0.0.1:" + pg.port() + "/postgres?sslmode=disable";
        assertThat(sqlState(() -> connect(plain, "postgres", pg.adminPassword()))).isEqualTo("28000"); // no pg_hba line
        TestCertificates other = TestCertificates.create();
        String untrusted = "jdbc:postgresql://127.0.0.1:" + pg.port() + "/postgres?sslmode=verify-full&sslrootcert="
                + other.caCertificate();
        assertThatThrownBy(() -> connect(untrusted, "postgres", pg.adminPassword()))
                .hasMessageContaining("SSL");
        String wrongHost = "jdbc:postgresql://127.0.0.2:" + pg.port() + "/postgres?sslmode=verify-full&sslrootcert="
                + certs.caCertificate();
        assertThatThrownBy(() -> connect(wrongHost, "postgres", pg.adminPassword())).isInstanceOf(SQLException.class);
        TestDatabase db = pg.newDatabase();
        assertThat(db.count("SELECT count(*) FROM outbox_event")).isZero();
    }

    private static Connection connect(String url, String user, String password) throws SQLException {
        Properties p = new Properties();
        p.setProperty("user", user);
        p.setProperty("password", password);
        p.setProperty("connectTimeout", "5");
        return DriverManager.getConnection(url, p);
    }

    private interface SqlCall {
        Connection call() throws SQLException;
    }

    private static String sqlState(SqlCall call) {
        try (Connection c = call.call()) {
            throw new AssertionError("connected, but should have been refused");
        } catch (SQLException e) {
            return e.getSQLState();
        }
    }

    private void send(Map<String, Object> security, String topic) throws Exception {
        Map<String, Object> p = new HashMap<>(security);
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 10_000);
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 10_000);
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 5_000);
        p.put(ProducerConfig.LINGER_MS_CONFIG, 0);
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
            producer.send(new ProducerRecord<>(topic, "k".getBytes(StandardCharsets.UTF_8),
                    "v".getBytes(StandardCharsets.UTF_8))).get(20, TimeUnit.SECONDS);
        }
    }

    /**
     * The refusal of a send without the ACL. Where it surfaces depends on timing: the idempotent producer's
     * InitProducerId may be refused in the background first, and then send() throws "Cannot execute transactional
     * method because we are in an error state" with that refusal as its cause — so the refusal is looked up in the
     * cause chain, and anything else is returned as it is (and fails the caller's assertion).
     */
    private Throwable sendFails(Map<String, Object> security, String topic) {
        Throwable thrown;
        try {
            send(security, topic);
            throw new AssertionError("published to " + topic + " without the ACL");
        } catch (ExecutionException e) {
            thrown = e.getCause();
        } catch (Exception e) {
            thrown = e;
        }
        for (Throwable t = thrown; t != null; t = t.getCause()) {
            if (t instanceof AuthorizationException) {
                return t;
            }
        }
        return thrown;
    }

    private Throwable describeClusterFails(Map<String, Object> security) {
        Properties p = new Properties();
        p.putAll(security);
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 4000);
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 3000);
        try (Admin admin = Admin.create(p)) {
            admin.describeCluster().clusterId().get(10, TimeUnit.SECONDS);
            throw new AssertionError("the broker answered a client it should refuse: " + security.keySet());
        } catch (ExecutionException e) {
            return e.getCause();
        } catch (Exception e) {
            return e;
        }
    }
}
