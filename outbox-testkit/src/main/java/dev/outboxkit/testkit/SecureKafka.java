package dev.outboxkit.testkit;

import java.time.Duration;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AccessControlEntryFilter;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.config.SslConfigs;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourcePatternFilter;
import org.apache.kafka.common.resource.ResourceType;
import org.awaitility.Awaitility;

/**
 * A Kafka broker (in this JVM, one KRaft node) that refuses anything but authenticated TLS, with ACLs enforced:
 * what managed Kafka (MSK, Confluent Cloud, Aiven, Strimzi with auth) looks like to a client.
 *
 * <ul>
 *   <li>Clients reach one listener, {@code SASL_SSL} on {@code localhost}, offering {@code SCRAM-SHA-512} and
 *       {@code PLAIN}; its certificate comes from {@link TestCertificates} (PEM keystore), so clients trust the
 *       run's CA ({@code ssl.truststore.type=PEM}) and verify the host name.</li>
 *   <li>The KRaft {@code StandardAuthorizer} with {@code allow.everyone.if.no.acl.found=false}: a principal may
 *       do only what an ACL allows. {@link #SUPER_USER} (PLAIN) is the test kit's own: {@link #admin()},
 *       {@link #createTopic}, {@link #readAll} and the broker's own connections use it.</li>
 *   <li>The KRaft controller listener is {@code SASL_PLAINTEXT} (PLAIN, the super user only): not advertised to
 *       clients, and no anonymous principal anywhere.</li>
 * </ul>
 *
 * <pre>{@code
 * TestCertificates certs = TestCertificates.create();
 * try (SecureKafka kafka = new SecureKafka(certs, Map.of("confluent-like", "plain-secret"))) {   // PLAIN users
 *     Map<String, Object> relay = kafka.createScramUser("relay", "relay-secret");   // SCRAM-SHA-512
 *     kafka.grant("relay", AclOperation.WRITE, ResourceType.TOPIC, "orders");
 *     kafka.grant("relay", AclOperation.DESCRIBE, ResourceType.TOPIC, "orders");
 *     producerOverrides.putAll(relay);   // security.protocol, sasl.*, ssl.truststore.*
 * }
 * }</pre>
 *
 * <p>PLAIN users are fixed when the broker starts (they live in its JAAS configuration, as on a self-managed
 * broker); SCRAM users are added at run time through the Admin API, as on MSK. User names and passwords are
 * letters, digits, {@code . _ -} (they go into JAAS text unquoted-safe).
 */
public final class SecureKafka extends TestKafka {

    /** The test kit's own principal (PLAIN): a super user. */
    public static final String SUPER_USER = "outboxkit-admin";
    public static final String SCRAM_SHA_512 = "SCRAM-SHA-512";
    public static final String PLAIN = "PLAIN";

    private static final Pattern SAFE = Pattern.compile("[A-Za-z0-9._-]+");

    private final TestCertificates certificates;
    private final String superUserPassword = "admin-" + Long.toHexString(System.nanoTime());
    private final EmbeddedKafka broker;

    /** A broker with SCRAM users only (add them with {@link #createScramUser}). */
    public SecureKafka(TestCertificates certificates) {
        this(certificates, Map.of());
    }

    /**
     * @param plainUsers PLAIN users and their passwords (the broker's JAAS configuration: fixed from now on)
     */
    public SecureKafka(TestCertificates certificates, Map<String, String> plainUsers) {
        this.certificates = Objects.requireNonNull(certificates, "certificates");
        plainUsers.forEach((user, password) -> {
            requireSafe("user", user);
            requireSafe("password", password);
        });
        Map<String, String> config = new LinkedHashMap<>();
        config.put("listener.security.protocol.map", "EXTERNAL:SASL_SSL,CONTROLLER:SASL_PLAINTEXT");
        config.put("sasl.enabled.mechanisms", SCRAM_SHA_512 + "," + PLAIN);
        config.put("listener.name.external.sasl.enabled.mechanisms", SCRAM_SHA_512 + "," + PLAIN);
        config.put("listener.name.controller.sasl.enabled.mechanisms", PLAIN);
        config.put("sasl.mechanism.inter.broker.protocol", PLAIN);
        config.put("sasl.mechanism.controller.protocol", PLAIN);
        StringBuilder users = new StringBuilder(" user_" + SUPER_USER + "=\"" + superUserPassword + "\"");
        plainUsers.forEach((user, password) -> users.append(" user_").append(user).append("=\"").append(password).append('"'));
        String self = "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"" + SUPER_USER
                + "\" password=\"" + superUserPassword + "\"";
        config.put("listener.name.external.plain.sasl.jaas.config", self + users + ";");
        config.put("listener.name.external.scram-sha-512.sasl.jaas.config",
                "org.apache.kafka.common.security.scram.ScramLoginModule required;");
        config.put("listener.name.controller.plain.sasl.jaas.config",
                self + " user_" + SUPER_USER + "=\"" + superUserPassword + "\";");
        config.put("listener.name.external.ssl.keystore.type", "PEM");
        config.put("listener.name.external.ssl.keystore.location", certificates.serverKeyAndCertificate().toString());
        config.put("listener.name.external.ssl.truststore.type", "PEM");
        config.put("listener.name.external.ssl.truststore.location", certificates.caCertificate().toString());
        config.put("authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer");
        config.put("allow.everyone.if.no.acl.found", "false");
        config.put("super.users", "User:" + SUPER_USER);
        broker = new EmbeddedKafka(1, config);
    }

    @Override
    public String bootstrapServers() {
        return broker.bootstrapServers();
    }

    @Override
    public String describe() {
        return "in-JVM Kafka (SASL_SSL: SCRAM-SHA-512, PLAIN; StandardAuthorizer) at " + bootstrapServers();
    }

    @Override
    protected Map<String, Object> testkitClientSecurity() {
        return clientSecurity(SUPER_USER, superUserPassword, PLAIN);
    }

    public TestCertificates certificates() {
        return certificates;
    }

    /**
     * Client settings for {@code user} over this broker's listener, to add to a producer's, consumer's or admin
     * client's: {@code security.protocol=SASL_SSL}, {@code sasl.mechanism}, {@code sasl.jaas.config},
     * {@code ssl.truststore.type=PEM}, {@code ssl.truststore.location} (the run's CA). No bootstrap servers.
     *
     * @param mechanism {@link #SCRAM_SHA_512} or {@link #PLAIN}
     */
    public Map<String, Object> clientSecurity(String user, String password, String mechanism) {
        requireSafe("user", user);
        requireSafe("password", password);
        String module = switch (mechanism) {
            case SCRAM_SHA_512 -> "org.apache.kafka.common.security.scram.ScramLoginModule";
            case PLAIN -> "org.apache.kafka.common.security.plain.PlainLoginModule";
            default -> throw new IllegalArgumentException("mechanism must be " + SCRAM_SHA_512 + " or " + PLAIN
                    + ", got " + mechanism);
        };
        Map<String, Object> p = new LinkedHashMap<>();
        p.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SASL_SSL");
        p.put(SaslConfigs.SASL_MECHANISM, mechanism);
        p.put(SaslConfigs.SASL_JAAS_CONFIG, module + " required username=\"" + user + "\" password=\"" + password + "\";");
        p.put(SslConfigs.SSL_TRUSTSTORE_TYPE_CONFIG, "PEM");
        p.put(SslConfigs.SSL_TRUSTSTORE_LOCATION_CONFIG, certificates.caCertificate().toString());
        return p;
    }

    /**
     * Creates (or changes the password of) SCRAM-SHA-512 user {@code user} and returns once the broker accepts
     * it; returns its {@link #clientSecurity client settings}. The user may do nothing until {@link #grant granted}.
     */
    public Map<String, Object> createScramUser(String user, String password) {
        requireSafe("user", user);
        requireSafe("password", password);
        try (Admin admin = admin()) {
            admin.alterUserScramCredentials(List.of(new UserScramCredentialUpsertion(user,
                    new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096), password))).all().get(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException("cannot create SCRAM user " + user + " on " + describe() + ": " + e, e);
        }
        Map<String, Object> security = clientSecurity(user, password, SCRAM_SHA_512);
        awaitAuthenticates(user, security, Duration.ofSeconds(30));
        return security;
    }

    /** Waits until {@code user} authenticates (describeCluster needs no ACL). */
    private void awaitAuthenticates(String user, Map<String, Object> security, Duration timeout) {
        Properties p = new Properties();
        p.putAll(security);
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 5000);
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 5000);
        long deadline = System.nanoTime() + timeout.toNanos();
        Exception last = null;
        while (System.nanoTime() < deadline) {
            try (Admin admin = Admin.create(p)) {
                admin.describeCluster().clusterId().get(10, TimeUnit.SECONDS);
                return;
            } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
                last = e; // the credential has not reached the broker yet
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
            }
        }
        throw new IllegalStateException("SCRAM user " + user + " still cannot authenticate to " + describe() + " after "
                + timeout + ": " + last, last);
    }

    /** Allows {@code user} {@code operation} on the resource named {@code name} (LITERAL pattern). */
    public void grant(String user, AclOperation operation, ResourceType type, String name) {
        grant(user, operation, type, name, PatternType.LITERAL);
    }

    /**
     * Allows {@code user} {@code operation} on {@code type} resources matching {@code name} ({@code pattern} LITERAL
     * or PREFIXED; {@code ResourceType.CLUSTER} takes the name {@code kafka-cluster}). Returns once the broker lists
     * the ACL.
     */
    public void grant(String user, AclOperation operation, ResourceType type, String name, PatternType pattern) {
        AclBinding binding = binding(user, operation, type, name, pattern);
        try (Admin admin = admin()) {
            admin.createAcls(List.of(binding)).all().get(30, TimeUnit.SECONDS);
            awaitAcls(admin, binding.toFilter(), true);
        } catch (Exception e) {
            throw new IllegalStateException("cannot grant " + binding + ": " + e, e);
        }
    }

    /** Removes what {@link #grant(String, AclOperation, ResourceType, String, PatternType)} added. */
    public void revoke(String user, AclOperation operation, ResourceType type, String name, PatternType pattern) {
        AclBinding binding = binding(user, operation, type, name, pattern);
        try (Admin admin = admin()) {
            admin.deleteAcls(List.of(binding.toFilter())).all().get(30, TimeUnit.SECONDS);
            awaitAcls(admin, binding.toFilter(), false);
        } catch (Exception e) {
            throw new IllegalStateException("cannot revoke " + binding + ": " + e, e);
        }
    }

    /** Every ACL of {@code user}, in words ({@code "WRITE TOPIC orders (LITERAL)"}), for assertions and reports. */
    public List<String> acls(String user) {
        AclBindingFilter filter = new AclBindingFilter(ResourcePatternFilter.ANY, new AccessControlEntryFilter(
                "User:" + user, null, AclOperation.ANY, AclPermissionType.ANY));
        try (Admin admin = admin()) {
            Collection<AclBinding> acls = admin.describeAcls(filter).values().get(30, TimeUnit.SECONDS);
            return acls.stream().map(b -> b.entry().operation() + " " + b.pattern().resourceType() + " "
                    + b.pattern().name() + " (" + b.pattern().patternType() + ")").sorted().toList();
        } catch (Exception e) {
            throw new IllegalStateException("cannot list the ACLs of " + user + ": " + e, e);
        }
    }

    private static AclBinding binding(String user, AclOperation operation, ResourceType type, String name,
            PatternType pattern) {
        requireSafe("user", user);
        return new AclBinding(new ResourcePattern(type, name, pattern),
                new AccessControlEntry("User:" + user, "*", operation, AclPermissionType.ALLOW));
    }

    private static void awaitAcls(Admin admin, AclBindingFilter filter, boolean present) {
        Awaitility.await("the broker " + (present ? "lists " : "drops ") + filter).atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(20))
                .until(() -> admin.describeAcls(filter).values().get(30, TimeUnit.SECONDS).isEmpty() != present);
    }

    private static void requireSafe(String what, String value) {
        if (value == null || !SAFE.matcher(value).matches()) {
            throw new IllegalArgumentException(what + " must be letters, digits, '.', '_' or '-', got " + value);
        }
    }

    @Override
    public void close() {
        broker.close();
    }
}
