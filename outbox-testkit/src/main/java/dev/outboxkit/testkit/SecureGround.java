package dev.outboxkit.testkit;

import java.util.Map;

/**
 * The ground managed services give, for one test class: a {@link TestCertificates per-run CA}, a
 * {@link SecureKafka} (SASL_SSL, ACLs enforced) and a {@link LocalPostgres.Builder#secure secure PostgreSQL}
 * (TLS with {@code sslmode=verify-full}, SCRAM passwords only), all presenting certificates of that CA.
 *
 * <pre>{@code
 * @TestInstance(TestInstance.Lifecycle.PER_CLASS)
 * class MyServiceOverTlsTest {
 *     SecureGround ground;
 *     @BeforeAll void start() { ground = SecureGround.start(Map.of("svc-plain", "secret")); }   // ~5-10 s
 *     @AfterAll void stop() { ground.close(); }
 * }
 * }</pre>
 */
public final class SecureGround implements AutoCloseable {

    private final TestCertificates certificates;
    private final SecureKafka kafka;
    private final LocalPostgres postgres;

    private SecureGround(TestCertificates certificates, SecureKafka kafka, LocalPostgres postgres) {
        this.certificates = certificates;
        this.kafka = kafka;
        this.postgres = postgres;
    }

    /** Starts both servers; {@code plainKafkaUsers}: the broker's PLAIN users and passwords (SCRAM users come later). */
    public static SecureGround start(Map<String, String> plainKafkaUsers) {
        TestCertificates certificates = TestCertificates.create();
        SecureKafka kafka = new SecureKafka(certificates, plainKafkaUsers);
        try {
            return new SecureGround(certificates, kafka, LocalPostgres.builder().secure(certificates).build());
        } catch (RuntimeException e) {
            kafka.close();
            throw e;
        }
    }

    public TestCertificates certificates() {
        return certificates;
    }

    public SecureKafka kafka() {
        return kafka;
    }

    public LocalPostgres postgres() {
        return postgres;
    }

    /** Stops both servers. */
    @Override
    public void close() {
        try {
            kafka.close();
        } finally {
            postgres.close();
        }
    }
}
