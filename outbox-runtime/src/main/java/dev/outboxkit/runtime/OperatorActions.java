package dev.outboxkit.runtime;

import java.util.Collection;
import java.util.Map;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.config.SslConfigs;
import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.errors.SslAuthenticationException;
import org.apache.kafka.common.errors.TopicAuthorizationException;

/**
 * Not API: shared by both relays and the consumer's dead-letter forwarding.
 *
 * <p>What an operator must do about a Kafka authentication or authorization failure, in the words of the fix:
 * {@code "User:relay may not WRITE topic orders"}. The broker's own messages name neither the principal
 * ("Cluster authorization failed.") nor, for the idempotent producer's refused producer id, the topic; the client
 * knows both. Never a secret: the principal is the {@code username} of {@code sasl.jaas.config}, nothing else of it.
 */
public final class OperatorActions {

    private static final Pattern USERNAME = Pattern.compile("username\\s*=\\s*\"([^\"]*)\"");

    private OperatorActions() {
    }

    /**
     * The sentence for {@code decisive} (the exception {@link PublishFailures#classify} found), or null when it is
     * no authentication or authorization failure.
     *
     * @param clientConfig the client's settings (security protocol, SASL mechanism, JAAS, truststore, servers)
     * @param operation    what the client was refused, e.g. {@code WRITE}
     * @param topics       the topics of the refused records (null or empty when unknown)
     */
    public static String of(Throwable decisive, Map<String, ?> clientConfig, String operation, Collection<String> topics) {
        String principal = principal(clientConfig);
        if (decisive instanceof TopicAuthorizationException t) {
            Collection<String> named = t.unauthorizedTopics() == null || t.unauthorizedTopics().isEmpty()
                    ? topics : t.unauthorizedTopics();
            return principal + " may not " + operation + " " + topics(named) + " (an ACL is missing: grant " + operation
                    + " on it; " + operation + " implies DESCRIBE)";
        }
        if (decisive instanceof ClusterAuthorizationException) {
            return principal + " may not " + operation + " " + topics(topics) + " (the broker refused the idempotent "
                    + "producer an id, so the principal holds " + operation + " on no topic; brokers before Kafka 3.2 also "
                    + "need IDEMPOTENT_WRITE on the cluster)";
        }
        if (decisive instanceof SaslAuthenticationException) {
            return principal + " could not authenticate with SASL " + setting(clientConfig, SaslConfigs.SASL_MECHANISM,
                    "GSSAPI") + " at " + setting(clientConfig, CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, "?")
                    + " (wrong user or password in sasl.jaas.config, or the mechanism is not enabled on the broker)";
        }
        if (decisive instanceof SslAuthenticationException && hostNameMismatch(decisive)) {
            return "the TLS handshake with " + setting(clientConfig, CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, "?")
                    + " failed: the broker's certificate does not name that host (it is checked against the CA in "
                    + setting(clientConfig, SslConfigs.SSL_TRUSTSTORE_LOCATION_CONFIG, "the JVM's default truststore")
                    + "); connect by a name the certificate carries";
        }
        if (decisive instanceof SslAuthenticationException) {
            return "the TLS handshake with " + setting(clientConfig, CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, "?")
                    + " failed: the broker's certificate is not signed by a CA in "
                    + setting(clientConfig, SslConfigs.SSL_TRUSTSTORE_LOCATION_CONFIG, "the JVM's default truststore")
                    + ", or does not name that host";
        }
        return null;
    }

    private static final Pattern JDBC_HOST = Pattern.compile("^jdbc:postgresql://([^/?]*)");
    private static final Pattern ROOT_CERT = Pattern.compile("[?&]sslrootcert=([^&]*)");

    /**
     * Why a database connection failed, for a start-up refusal: the innermost cause's message (a pool's "connection
     * is not available" says nothing), and for a TLS failure the host and the CA file, in the words of the fix.
     *
     * @param jdbcUrl the URL the client used (only its host, port and {@code sslrootcert} are named; no password)
     */
    public static String database(Throwable failure, String jdbcUrl) {
        Throwable root = failure;
        boolean tls = false;
        for (int depth = 0; root != null && depth < 32; depth++) {
            tls |= root instanceof javax.net.ssl.SSLException || root instanceof java.security.cert.CertificateException
                    || String.valueOf(root.getMessage()).contains("SSL");
            if (root.getCause() == null || root.getCause() == root) {
                break;
            }
            root = root.getCause();
        }
        String why = root == null ? String.valueOf(failure) : root.getClass().getSimpleName() + ": " + root.getMessage();
        boolean misnamed = hostNameMismatch(failure);
        if (!tls && !misnamed) {
            return why;
        }
        Matcher host = JDBC_HOST.matcher(jdbcUrl == null ? "" : jdbcUrl);
        Matcher ca = ROOT_CERT.matcher(jdbcUrl == null ? "" : jdbcUrl);
        if (misnamed) {
            return "the TLS handshake with PostgreSQL at " + (host.find() ? host.group(1) : "?") + " failed: its "
                    + "certificate does not name that host (it is checked against the CA in "
                    + (ca.find() ? "sslrootcert=" + ca.group(1) : "the default sslrootcert") + "); connect by a name the "
                    + "certificate carries (" + why + ")";
        }
        return "the TLS handshake with PostgreSQL at " + (host.find() ? host.group(1) : "?") + " failed: its certificate"
                + " is not signed by the CA in " + (ca.find() ? "sslrootcert=" + ca.group(1) : "the default sslrootcert")
                + ", or does not name that host (" + why + ")";
    }

    /**
     * Whether a TLS failure is a certificate that does not name the host the client connected to (the JDK's "No
     * subject alternative names matching …", pgjdbc's "The hostname … could not be verified"), as opposed to one
     * signed by a CA the client does not trust.
     */
    public static boolean hostNameMismatch(Throwable failure) {
        Throwable t = failure;
        for (int depth = 0; t != null && depth < 32; depth++) {
            String message = String.valueOf(t.getMessage());
            if (t instanceof javax.net.ssl.SSLPeerUnverifiedException || message.contains("No subject alternative")
                    || message.contains("No name matching") || message.contains("could not be verified by hostnameverifier")) {
                return true;
            }
            t = t.getCause() == t ? null : t.getCause();
        }
        return false;
    }

    /** {@code User:<name>} from {@code sasl.jaas.config}; a description when the client uses no SASL user name. */
    public static String principal(Map<String, ?> clientConfig) {
        Object jaas = clientConfig.get(SaslConfigs.SASL_JAAS_CONFIG);
        if (jaas != null) {
            Matcher m = USERNAME.matcher(String.valueOf(jaas));
            if (m.find()) {
                return "User:" + m.group(1);
            }
        }
        String protocol = setting(clientConfig, CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "PLAINTEXT");
        return switch (protocol.toUpperCase(java.util.Locale.ROOT)) {
            case "PLAINTEXT" -> "User:ANONYMOUS (security.protocol=PLAINTEXT)";
            case "SSL" -> "the principal of this client's TLS certificate";
            default -> "the principal of sasl.mechanism " + setting(clientConfig, SaslConfigs.SASL_MECHANISM, "GSSAPI");
        };
    }

    private static String topics(Collection<String> topics) {
        if (topics == null || topics.isEmpty()) {
            return "its topics";
        }
        TreeSet<String> sorted = new TreeSet<>(topics);
        return (sorted.size() == 1 ? "topic " : "topics ") + String.join(", ", sorted);
    }

    private static String setting(Map<String, ?> config, String key, String otherwise) {
        Object v = config.get(key);
        return v == null || String.valueOf(v).isBlank() ? otherwise : String.valueOf(v);
    }
}
