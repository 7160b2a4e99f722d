package dev.outboxkit.core.internal;

import dev.outboxkit.core.Identifiers;
import dev.outboxkit.core.ProducerSafety;
import dev.outboxkit.core.Secret;
import dev.outboxkit.core.TopicRoute;
import java.net.InetAddress;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;

/**
 * The settings both relays take the same way — the database and who connects to it, Kafka and the producer
 * overrides, the topic route, the instance's name, its lease and its clock — with one set of defaults and
 * checks. Not an API of its own: {@code PollingRelay.Builder} and {@code CdcRelay.Builder} extend it, and every
 * setter returns the relay's own builder, so {@code PollingRelay.builder().jdbcUrl(…).batchSize(…)} reads as
 * before. Each relay adds its settings, its required-setting rules and its connection pool.
 *
 * @param <B> the relay's builder
 */
public abstract class RelayBuilder<B extends RelayBuilder<B>> {

    protected String jdbcUrl;
    protected String user;
    protected Secret password;
    protected String schema = "public";
    protected String bootstrapServers;
    protected Map<String, ?> producerOverrides = Map.of();
    protected TopicRoute route = TopicRoute.defaultRoute();
    protected String instanceId;
    protected Duration leaseDuration = Duration.ofSeconds(15);
    protected Clock clock = Clock.systemUTC();

    protected RelayBuilder() {
    }

    @SuppressWarnings("unchecked")
    private B self() {
        return (B) this;
    }

    /**
     * The database with the outbox: {@code jdbc:postgresql://host:port/db} and anything the PostgreSQL driver
     * accepts after it (SSL options included). Passwords in it are never printed.
     */
    public B jdbcUrl(String jdbcUrl) {
        this.jdbcUrl = jdbcUrl;
        return self();
    }

    /** Database role to connect as (relay-poller/README.md and relay-debezium/README.md list each one's grants). */
    public B user(String user) {
        this.user = user;
        return self();
    }

    /** Database password; never logged. */
    public B password(Secret password) {
        this.password = password;
        return self();
    }

    /** PostgreSQL schema holding the outboxkit tables (a validated identifier). Default {@code public}. */
    public B schema(String schema) {
        this.schema = schema;
        return self();
    }

    /** Kafka bootstrap servers, for example {@code broker1:9092,broker2:9092}. Required. */
    public B bootstrapServers(String bootstrapServers) {
        this.bootstrapServers = bootstrapServers;
        return self();
    }

    /**
     * Kafka producer settings on top of {@link ProducerSafety#defaults()} and the relay's own defaults (SASL,
     * SSL, timeouts, tuning). Settings that would lose or reorder events ({@code acks} other than all,
     * idempotence off, more than 5 requests in flight, {@code retries=0}, a transactional id) are refused with an
     * {@link dev.outboxkit.core.UnsafeConfigurationException} naming the key. Default none.
     */
    public B producerOverrides(Map<String, ?> producerOverrides) {
        this.producerOverrides = producerOverrides == null ? Map.of() : producerOverrides;
        return self();
    }

    /** Topic for rows without their own {@code topic}. Default {@code outbox.event.${aggregateType}}. */
    public B route(TopicRoute route) {
        this.route = route;
        return self();
    }

    /**
     * This instance's name in the lease table and in {@code outbox_dead_letter.parked_by}. Default: host name,
     * process id and a random suffix.
     */
    public B instanceId(String instanceId) {
        this.instanceId = instanceId;
        return self();
    }

    /**
     * How long a lease lasts without renewal (renewed every third of it). After a crash or a pause other
     * instances take over after about this long, and a paused instance can no longer complete anything once it
     * passed. Default 15 s, from 2 s to 10 min.
     */
    public B leaseDuration(Duration leaseDuration) {
        this.leaseDuration = leaseDuration;
        return self();
    }

    /** Clock of the commit-to-ack metric. Default UTC system clock (leases use the database's clock). */
    public B clock(Clock clock) {
        this.clock = clock;
        return self();
    }

    /**
     * The checks every relay makes: a {@code jdbc:postgresql:} URL (when one is set), a legal schema, a route,
     * the lease within its range, a clock. Required settings are each relay's own business.
     *
     * @throws IllegalArgumentException naming the first bad setting
     */
    protected final void checkShared() {
        if (jdbcUrl != null && !jdbcUrl.startsWith("jdbc:postgresql:")) {
            throw new IllegalArgumentException("jdbcUrl must start with jdbc:postgresql:, got '" + Secret.maskUrl(jdbcUrl) + "'");
        }
        Identifiers.requireValid("schema", schema);
        Objects.requireNonNull(route, "route must not be null");
        between("leaseDuration", leaseDuration, Duration.ofSeconds(2), Duration.ofMinutes(10));
        Objects.requireNonNull(clock, "clock must not be null");
    }

    /** {@link #instanceId} or, when unset, host name (as {@code [A-Za-z0-9._-]}), process id and 6 random hex digits. */
    protected final String instanceIdOrDefault() {
        if (instanceId != null) {
            return instanceId;
        }
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        } catch (Exception e) {
            host = System.getenv().getOrDefault("HOSTNAME", "host");
        }
        host = host.replaceAll("[^A-Za-z0-9._-]", "_");
        return host + "-" + ProcessHandle.current().pid() + "-" + UUID.randomUUID().toString().substring(0, 6).toLowerCase(Locale.ROOT);
    }

    /**
     * The checked producer configuration: {@link ProducerSafety#defaults()}, then {@code relayDefaults}, then the
     * user's {@link #producerOverrides}, with {@link #bootstrapServers}.
     *
     * @throws dev.outboxkit.core.UnsafeConfigurationException for an override that weakens a guarantee
     */
    protected final Map<String, Object> producerConfig(Map<String, ?> relayDefaults) {
        Map<String, Object> producer = new LinkedHashMap<>(relayDefaults);
        producer.putAll(producerOverrides);
        return ProducerSafety.producerConfig(bootstrapServers, producer);
    }

    /** @throws IllegalArgumentException "{@code name} must be between min and max, got value" */
    protected static void between(String name, Duration value, Duration min, Duration max) {
        if (value == null || value.compareTo(min) < 0 || value.compareTo(max) > 0) {
            throw new IllegalArgumentException(name + " must be between " + min + " and " + max + ", got " + value);
        }
    }

    /** @throws IllegalArgumentException "{@code name} must be between min and max, got value" */
    protected static void between(String name, int value, int min, int max) {
        if (value < min || value > max) {
            throw new IllegalArgumentException(name + " must be between " + min + " and " + max + ", got " + value);
        }
    }
}
