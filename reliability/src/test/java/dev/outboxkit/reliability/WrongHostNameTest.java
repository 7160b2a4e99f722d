package dev.outboxkit.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxkit.core.Secret;
import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.relay.cdc.CdcRelay;
import dev.outboxkit.relay.poller.PollingRelay;
import dev.outboxkit.testkit.LocalPostgres;
import dev.outboxkit.testkit.SecureKafka;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import dev.outboxkit.testkit.fault.TcpFaultProxy;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.resource.ResourceType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * A server reached by a name its certificate does not carry is a configuration error, not an
 * outage. The ground's certificates name {@code localhost} and {@code 127.0.0.1}; on Linux every {@code 127.x.y.z}
 * reaches this machine, so a plain TCP proxy on {@code 127.0.0.2} gives the broker and PostgreSQL
 * ({@code sslmode=verify-full}) an address their certificates do not name. Both relays refuse to start at once,
 * naming the host and the CA, however long their {@code startTimeout}; a wrong database password fails at once too.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class WrongHostNameTest {

    private static final String RELAY_KAFKA_PASSWORD = "relay-kafka-pw";
    /** Long enough that a start which retried instead of refusing would fail the time bound below. */
    private static final Duration START_TIMEOUT = Duration.ofMinutes(10);
    /** One connection attempt (the driver's answer, milliseconds; the pool's 10 s wait before), on a loaded machine. */
    private static final Duration AT_ONCE = Duration.ofSeconds(45);

    private ManagedRoles ground;
    private SecureKafka kafka;
    private LocalPostgres pg;
    private InetAddress otherName;
    private String pollPassword;
    private String cdcPassword;

    @BeforeAll
    void start() throws Exception {
        otherName = InetAddress.getByName("127.0.0.2");
        try (java.net.ServerSocket probe = new java.net.ServerSocket(0, 1, otherName); Socket s = new Socket()) {
            s.connect(new InetSocketAddress(otherName, probe.getLocalPort()), 5_000); // fails loudly where it does not route
        }
        ground = ManagedRoles.start(Map.of(), List.of(ManagedRoles.Role.POLLING_RELAY, ManagedRoles.Role.CDC_RELAY));
        kafka = ground.kafka();
        pg = ground.postgres();
        pollPassword = ground.password(ManagedRoles.Role.POLLING_RELAY);
        cdcPassword = ground.password(ManagedRoles.Role.CDC_RELAY);
    }

    @AfterAll
    void stop() {
        if (ground != null) {
            ground.close();
        }
    }

    private TestDatabase database() throws Exception {
        return ground.newDatabase();
    }

    @Test
    void aBrokerReachedByANameItsCertificateDoesNotCarryRefusesTheStartNamingHostAndCa() throws Exception {
        String topic = TestKafka.uniqueTopic("wrong-host");
        kafka.createTopic(topic, 1);
        Map<String, Object> security = kafka.createScramUser("relay-host", RELAY_KAFKA_PASSWORD);
        kafka.grant("relay-host", AclOperation.WRITE, ResourceType.TOPIC, topic);
        kafka.grant("relay-host", AclOperation.DESCRIBE, ResourceType.TOPIC, topic);
        String broker = kafka.bootstrapServers().split(",")[0];
        int colon = broker.lastIndexOf(':');
        TestDatabase db = database();
        try (TcpFaultProxy byOtherName = TcpFaultProxy.start("kafka-by-127.0.0.2", otherName, 0,
                broker.substring(0, colon), Integer.parseInt(broker.substring(colon + 1)))) {
            String ca = String.valueOf(security.get("ssl.truststore.location"));
            String[] named = {"the TLS handshake with " + byOtherName.address() + " failed",
                    "does not name that host", "checked against the CA in " + ca};
            try (PollingRelay relay = PollingRelay.builder().jdbcUrl(db.jdbcUrl()).user("poll_relay")
                    .password(Secret.of(pollPassword)).bootstrapServers(byOtherName.address()).producerOverrides(security)
                    .route(TopicRoute.of(topic)).instanceId("wrong-broker-host").startTimeout(START_TIMEOUT).build()) {
                assertThatThrownBy(relay::start).hasMessageContaining("poll relay wrong-broker-host cannot start")
                        .hasMessageContainingAll(named)
                        .satisfies(e -> System.out.println("polling relay, broker by a name not in its certificate: "
                                + e.getMessage()));
            }
            try (CdcRelay relay = CdcRelay.builder().jdbcUrl(db.jdbcUrl()).user("cdc_relay").password(Secret.of(cdcPassword))
                    .bootstrapServers(byOtherName.address()).producerOverrides(security).route(TopicRoute.of(topic))
                    .slotName("wrong_host_slot").deleteAfterPublish(false).startTimeout(START_TIMEOUT).build()) {
                assertThatThrownBy(relay::start).hasMessageContaining("the CDC relay on slot wrong_host_slot cannot start")
                        .hasMessageContainingAll(named)
                        .satisfies(e -> System.out.println("CDC relay, broker by a name not in its certificate: "
                                + e.getMessage()));
            }
        }
        assertThat(db.count("SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'wrong_host_slot'")).isZero();
        assertThat(kafka.readAll(List.of(topic))).isEmpty();
    }

    @Test
    void aDatabaseReachedByANameItsCertificateDoesNotCarryRefusesTheStartAtOnceNamingHostAndCa() throws Exception {
        TestDatabase db = database();
        String ca = ground.certificates().caCertificate().toString();
        assertThat(db.jdbcUrl()).contains("sslmode=verify-full").contains("127.0.0.1:" + pg.port());
        try (TcpFaultProxy byOtherName = TcpFaultProxy.start("pg-by-127.0.0.2", otherName, 0, "127.0.0.1", pg.port())) {
            String url = db.jdbcUrl().replace("127.0.0.1:" + pg.port(), byOtherName.address());
            String[] named = {"the TLS handshake with PostgreSQL at " + byOtherName.address() + " failed",
                    "does not name that host", "checked against the CA in sslrootcert=" + ca, "not retried"};
            try (PollingRelay relay = PollingRelay.builder().jdbcUrl(url).user("poll_relay").password(Secret.of(pollPassword))
                    .bootstrapServers(kafka.bootstrapServers()).instanceId("wrong-db-host").startTimeout(START_TIMEOUT)
                    .build()) {
                long began = System.nanoTime();
                assertThatThrownBy(relay::start).hasMessageContaining("poll relay wrong-db-host cannot start")
                        .hasMessageContainingAll(named).hasMessageNotContaining(pollPassword)
                        .satisfies(e -> System.out.println("polling relay, PostgreSQL by a name not in its certificate, "
                                + "after " + (System.nanoTime() - began) / 1_000_000 + " ms: " + e.getMessage()));
                assertThat(Duration.ofNanos(System.nanoTime() - began)).isLessThan(AT_ONCE);
            }
            try (CdcRelay relay = CdcRelay.builder().jdbcUrl(url).user("cdc_relay").password(Secret.of(cdcPassword))
                    .bootstrapServers(kafka.bootstrapServers()).slotName("wrong_db_host_slot").startTimeout(START_TIMEOUT)
                    .build()) {
                long began = System.nanoTime();
                assertThatThrownBy(relay::start).hasMessageContaining("the CDC relay on slot wrong_db_host_slot cannot start")
                        .hasMessageContainingAll(named).hasMessageNotContaining(cdcPassword);
                assertThat(Duration.ofNanos(System.nanoTime() - began)).isLessThan(AT_ONCE);
            }
        }
    }

    @Test
    void aWrongDatabasePasswordFailsTheStartAtOnce() throws Exception {
        TestDatabase db = database();
        try (PollingRelay relay = PollingRelay.builder().jdbcUrl(db.jdbcUrl()).user("poll_relay")
                .password(Secret.of("not-the-password")).bootstrapServers(kafka.bootstrapServers())
                .instanceId("wrong-password").startTimeout(START_TIMEOUT).build()) {
            long began = System.nanoTime();
            assertThatThrownBy(relay::start)
                    .hasMessageContaining("poll relay wrong-password: the database at 127.0.0.1:" + pg.port() + "/"
                            + db.name() + " refused the connection, which is not retried")
                    .hasMessageContaining("SQLSTATE 28P01").hasMessageContaining("check the user and password")
                    .hasMessageNotContaining("not-the-password")
                    .satisfies(e -> System.out.println("polling relay, wrong database password, after "
                            + (System.nanoTime() - began) / 1_000_000 + " ms: " + e.getMessage()));
            assertThat(Duration.ofNanos(System.nanoTime() - began)).isLessThan(AT_ONCE);
        }
        try (CdcRelay relay = CdcRelay.builder().jdbcUrl(db.jdbcUrl()).user("cdc_relay")
                .password(Secret.of("not-the-password")).bootstrapServers(kafka.bootstrapServers())
                .slotName("wrong_password_slot").startTimeout(START_TIMEOUT).build()) {
            long began = System.nanoTime();
            assertThatThrownBy(relay::start).hasMessageContaining("the CDC relay on slot wrong_password_slot: the database")
                    .hasMessageContaining("SQLSTATE 28P01");
            assertThat(Duration.ofNanos(System.nanoTime() - began)).isLessThan(AT_ONCE);
        }
    }
}
