package dev.outboxkit.runtime;

import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.relay.Relay;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.errors.SslAuthenticationException;
import org.apache.kafka.common.errors.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Not API: shared by both relays.
 *
 * <p>Whether Kafka can be reached now, busy or idle. A relay with nothing to publish never talks to Kafka, and a
 * producer with a wrong address only says so when a send times out: so readiness alone would stay up on a typo.
 * This asks the cluster itself, with an Admin client of the relay's own producer settings (security included):
 * {@code describeCluster}, which needs no topic ACL, every {@link #HEALTHY_INTERVAL} while it answers and every
 * {@link #UNHEALTHY_INTERVAL} while it does not, so recovery shows within about a second.
 *
 * <p>A cluster that answers may still refuse every write (below {@code min.insync.replicas}, a partition without a
 * leader): {@link #applyTo} also applies the relay's {@link KafkaWrites} rule, and while its records wait without an
 * acknowledgement the probe adds what the topics' partitions say ({@link TopicReplication#diagnose}) to the detail.
 * After each answer the probe also checks the durability of the route's topics and of each new topic the relay
 * writes to ({@link TopicReplication#checkDurability}), off the publishing path.
 */
public final class KafkaReachability implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(KafkaReachability.class);

    /** A probe waits this long for an answer: far above a healthy round trip, well within the 10 s readiness bound. */
    static final Duration PROBE_TIMEOUT = Duration.ofSeconds(3);
    static final Duration HEALTHY_INTERVAL = Duration.ofSeconds(2);
    static final Duration UNHEALTHY_INTERVAL = Duration.ofSeconds(1);
    /**
     * The start-up TLS check waits this long for a verdict: a cold JVM's first handshake on a loaded machine can take
     * longer than a probe may; while it waits the relay is not started, so not ready either.
     */
    static final Duration START_CHECK_TIMEOUT = Duration.ofSeconds(10);

    /** While records have waited this long without an acknowledgement, the probe reads why (before readiness drops). */
    static final Duration DIAGNOSE_AFTER = Duration.ofSeconds(1);

    private final String bootstrapServers;
    private final Map<String, Object> adminConfig;
    private final KafkaWrites writes;
    private final TopicRoute route;
    private final TopicReplication replication;
    /** Topics written to whose durability is not checked yet (probe thread only). */
    private final Set<String> toCheck = new TreeSet<>();
    private boolean routeChecked;
    /** Why the waiting records wait, as the last probe read it; null when nothing waits or nothing was found. */
    private volatile String diagnosis;
    private final ScheduledExecutorService scheduler;
    private volatile Admin admin;
    private static final String NOT_CHECKED = "Kafka not checked yet";
    /** Null: reachable. Else why not, for the health detail. */
    private volatile String problem = NOT_CHECKED;
    private volatile boolean closed;
    /** The {@code outbox.relay.kafka.reachable} gauge's value, held by the relay's meters. */
    private final AtomicLong gauge;

    /**
     * @param producerConfig the relay's checked producer configuration (bootstrap servers, security, client id)
     * @param who            the relay, for the log (e.g. {@code "poll relay relay-1"})
     * @param threadName     the probe thread's name (a daemon)
     * @param meters         the relay's meters: {@code kafkaReachable} is set to 1 while Kafka answers, else 0 (the
     *                       {@code KAFKA_REACHABLE} meter reads it); {@code kafkaWrites} is the relay's write rule
     * @param route          the relay's route: its existing topics are checked for durability at the first answer
     */
    public KafkaReachability(Map<String, Object> producerConfig, String who, String threadName, CommonMeters meters,
                             TopicRoute route) {
        this.gauge = meters.kafkaReachable;
        this.writes = meters.kafkaWrites;
        this.route = route;
        this.bootstrapServers = String.valueOf(producerConfig.get(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG));
        this.adminConfig = adminConfig(producerConfig);
        this.replication = new TopicReplication(who, producerConfig, PROBE_TIMEOUT.toMillis());
        this.scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, threadName);
            t.setDaemon(true);
            return t;
        });
    }

    /** The Admin client gets what it understands of the producer's settings, so it connects the way the producer does. */
    static Map<String, Object> adminConfig(Map<String, Object> producerConfig) {
        Map<String, Object> config = new HashMap<>();
        producerConfig.forEach((k, v) -> {
            if (AdminClientConfig.configNames().contains(k)) {
                config.put(k, v);
            }
        });
        Object clientId = producerConfig.get(ProducerConfig.CLIENT_ID_CONFIG);
        if (clientId != null && !String.valueOf(clientId).isEmpty()) {
            config.put(AdminClientConfig.CLIENT_ID_CONFIG, clientId + "-reachability");
        }
        // Reconnect quickly, so a broker that is back is seen within the probe in flight.
        config.put(AdminClientConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, 250);
        config.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) PROBE_TIMEOUT.toMillis());
        config.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) PROBE_TIMEOUT.toMillis());
        return config;
    }

    /**
     * Refuses to start a client whose TLS handshake with the broker fails (a certificate of a CA not in its truststore,
     * or one that does not name the host): that is a configuration error, unlike a broker that is down or a password
     * being rotated, which readiness reports while the client waits. Asks once, within {@link #START_CHECK_TIMEOUT},
     * only when {@code security.protocol} is {@code SSL} or {@code SASL_SSL}; any other outcome returns.
     *
     * @param clientConfig the client's settings (bootstrap servers, security); keys an Admin client does not know are left out
     * @param who          the client, for the message, e.g. {@code "poll relay relay-1"}
     * @throws IllegalStateException naming the bootstrap servers and the truststore
     */
    public static void refuseUntrustedBroker(Map<String, Object> clientConfig, String who) {
        String protocol = String.valueOf(clientConfig.get(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG));
        if (!protocol.equalsIgnoreCase("SSL") && !protocol.equalsIgnoreCase("SASL_SSL")) {
            return;
        }
        Map<String, Object> config = adminConfig(clientConfig);
        config.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) START_CHECK_TIMEOUT.toMillis());
        config.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) START_CHECK_TIMEOUT.toMillis());
        try (Admin admin = Admin.create(config)) {
            admin.describeCluster(new DescribeClusterOptions().timeoutMs((int) START_CHECK_TIMEOUT.toMillis()))
                    .clusterId().get(START_CHECK_TIMEOUT.toMillis() + 1000, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof SslAuthenticationException tls) {
                throw new IllegalStateException(who + " cannot start: " + OperatorActions.of(tls, config, "WRITE", null)
                        + "; fix ssl.truststore.location (the CA that signed the broker's certificate) or the bootstrap"
                        + " servers (a host name the certificate names) (" + rootCause(tls) + ")", tls);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (java.util.concurrent.TimeoutException | RuntimeException e) {
            // not a TLS verdict: the reachability probe reports it in readiness
        }
    }

    private static String rootCause(Throwable t) {
        Throwable root = t;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return root.getClass().getSimpleName() + ": " + root.getMessage();
    }

    /** Starts probing now, then on its schedule. */
    public void start() {
        scheduler.execute(this::probe);
    }

    private void probe() {
        if (closed) {
            return;
        }
        try {
            if (admin == null) {
                admin = Admin.create(adminConfig);
            }
            DescribeClusterResult cluster = admin.describeCluster(
                    new DescribeClusterOptions().timeoutMs((int) PROBE_TIMEOUT.toMillis()));
            cluster.clusterId().get(PROBE_TIMEOUT.toMillis() + 1000, TimeUnit.MILLISECONDS);
            int brokers = cluster.nodes().get(PROBE_TIMEOUT.toMillis() + 1000, TimeUnit.MILLISECONDS).size();
            reachable();
            try {
                topics(admin, brokers);
            } catch (RuntimeException e) {
                // reading the topics is advice, not reachability: Kafka answered
                log.debug("could not read the relay's topics' replicas: {}", e.toString());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        } catch (ExecutionException | java.util.concurrent.TimeoutException | RuntimeException e) {
            unreachable(e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e);
        }
        if (!closed) {
            boolean healthy = problem == null && writes.silence().compareTo(DIAGNOSE_AFTER) < 0;
            scheduler.schedule(this::probe, (healthy ? HEALTHY_INTERVAL : UNHEALTHY_INTERVAL).toMillis(),
                    TimeUnit.MILLISECONDS);
        }
    }

    /**
     * After an answer: durability of topics not checked yet (on more than one broker: a single broker is a
     * development cluster, replication factor 1 is all it has), and while writes wait, why.
     */
    private void topics(Admin admin, int brokers) {
        toCheck.addAll(writes.newTopics());
        if (brokers > 1) {
            checkDurability(admin, brokers);
        }
        diagnosis = writes.silence().compareTo(DIAGNOSE_AFTER) >= 0 ? replication.diagnose(admin, writes.topics()) : null;
    }

    private void checkDurability(Admin admin, int brokers) {
        if (!routeChecked) {
            try {
                toCheck.addAll(replication.routeTopics(admin, route));
                routeChecked = true;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (ExecutionException | java.util.concurrent.TimeoutException | RuntimeException e) {
                log.debug("could not list the topics of route {} to check their durability: {}", route, e.toString());
            }
        }
        if (!toCheck.isEmpty()) {
            replication.checkDurability(admin, brokers, List.copyOf(toCheck));
            toCheck.removeIf(replication::checked);
        }
    }

    private void reachable() {
        if (problem != null && problem != NOT_CHECKED) { // back after a failure, not the first answer
            log.info("Kafka at {} is reachable again", bootstrapServers);
        }
        problem = null;
        gauge.set(1);
    }

    private void unreachable(Throwable cause) {
        String why = cause instanceof TimeoutException || cause instanceof java.util.concurrent.TimeoutException
                ? "no broker answered within " + PROBE_TIMEOUT.toSeconds() + " s (wrong address, broker down or network)"
                : cause.getClass().getSimpleName() + ": " + cause.getMessage();
        if (cause instanceof org.apache.kafka.common.errors.AuthenticationException) {
            // a wrong password or an untrusted certificate: say who and what, not only Kafka's words
            why = PublishFailures.OPERATOR_HINT + ": " + OperatorActions.of(cause, adminConfig, "WRITE", null) + " (" + why + ")";
        }
        String next = "Kafka not reachable at " + bootstrapServers + ": " + why;
        if (!next.equals(problem)) {
            log.warn("{}; the relay reports not ready until it answers", next);
        }
        problem = next;
        gauge.set(0);
    }

    /** Null while Kafka answers, else the reason it does not (one line, no secrets). */
    public String problem() {
        return problem;
    }

    /**
     * {@code health} made not ready, with the reason added, while Kafka does not answer, or while the relay's records
     * wait and Kafka acknowledged none of them for {@link KafkaWrites#SILENCE_LIMIT} (with what the topics' partitions
     * say, when the probe could read it); liveness untouched. Reads only what the probe and the sends recorded.
     */
    public Relay.Health applyTo(Relay.Health health) {
        String p = problem;
        String w = writes.problem();
        if (p == null && w == null) {
            return health;
        }
        String d = diagnosis;
        return new Relay.Health(health.live(), false, health.detail() + (p == null ? "" : "; " + p)
                + (w == null ? "" : "; " + w + (d == null ? "" : "; " + d)));
    }

    @Override
    public void close() {
        closed = true;
        scheduler.shutdownNow();
        try {
            scheduler.awaitTermination(PROBE_TIMEOUT.toMillis() + 2000, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        Admin a = admin;
        if (a != null) {
            a.close(Duration.ofSeconds(2));
        }
    }
}
