package dev.outboxkit.relay;

import dev.outboxkit.core.RecordFormat;
import dev.outboxkit.core.Secret;
import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.runtime.JdbcUrls;
import dev.outboxkit.runtime.RelayReports;
import io.opentelemetry.api.OpenTelemetry;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.stream.Collectors;

/**
 * What both relay builders take the same way: the database and who connects to it, Kafka and the producer
 * overrides, and the {@link RelayOption}s — the shared ones ({@link RelayOptions}) and the relay's own. Every
 * setter returns the relay's own builder, so {@code PollingRelay.builder().jdbcUrl(…).batchSize(…)} reads as one
 * chain. Options can also be given by definition ({@link #set}) or as text ({@link #options(Map)}), which is how the
 * CLI and the Spring Boot properties configure a relay: one default and one check per setting, wherever it is set.
 *
 * <p>Builders are not thread-safe; what they build is immutable.
 *
 * @param <B> the relay's builder
 */
public abstract class RelayBuilder<B extends RelayBuilder<B>> {

    private final Map<RelayOption<?>, Object> values = new HashMap<>();
    protected String jdbcUrl;
    protected String user;
    protected Secret password;
    protected String bootstrapServers;
    protected Map<String, ?> producerOverrides = Map.of();
    protected Clock clock = Clock.systemUTC();
    /** What {@link #tracing} was given; null: no tracing. */
    protected OpenTelemetry openTelemetry;

    protected RelayBuilder() {
    }

    @SuppressWarnings("unchecked")
    private B self() {
        return (B) this;
    }

    /** The relay's own options (the shared ones, {@link RelayOptions#all()}, are added to them). */
    protected abstract List<RelayOption<?>> ownOptions();

    /** Every option this builder takes: the shared ones, then the relay's own. */
    public final List<RelayOption<?>> options() {
        List<RelayOption<?>> all = new java.util.ArrayList<>(RelayOptions.all());
        all.addAll(ownOptions());
        return List.copyOf(all);
    }

    /**
     * Sets an option by its definition; the value is checked now.
     *
     * @throws IllegalArgumentException when this relay has no such option, or the value is out of range
     */
    public final <T> B set(RelayOption<T> option, T value) {
        if (!options().contains(option)) {
            throw new IllegalArgumentException("this relay has no option " + option.name() + "; its options are "
                    + names());
        }
        values.put(option, option.check(value));
        return self();
    }

    /**
     * Sets options from text, by {@linkplain RelayOption#kebabName() kebab-case name} ({@code lease-duration=PT20S},
     * {@code batch-size=5000}), as the CLI's config file and the Spring Boot properties hold them.
     *
     * @throws IllegalArgumentException for an unknown name (the message lists the known ones) or a value the
     *                                  option refuses
     */
    public final B options(Map<String, String> text) {
        Map<String, RelayOption<?>> byName = options().stream()
                .collect(Collectors.toMap(RelayOption::kebabName, o -> o));
        text.forEach((name, value) -> {
            RelayOption<?> option = byName.get(name.toLowerCase(Locale.ROOT));
            if (option == null) {
                throw new IllegalArgumentException("unknown relay option '" + name + "'; known: " + names());
            }
            values.put(option, option.parse(value));
        });
        return self();
    }

    /** The value set for {@code option}, else its default (null for one without a default). */
    protected final <T> T get(RelayOption<T> option) {
        Object value = values.get(option);
        return value != null ? option.type().cast(value) : option.defaultValue();
    }

    private String names() {
        return options().stream().map(RelayOption::kebabName).collect(Collectors.joining(", "));
    }

    /**
     * The database with the outbox: {@code jdbc:postgresql://host:port/db} and anything the PostgreSQL driver
     * accepts after it (SSL options included). Passwords in it are never printed. Behind a failover pair name every
     * node with {@code targetServerType=primary} ({@code jdbc:postgresql://h1:5432,h2:5432/db?targetServerType=primary}),
     * or one endpoint that follows the primary; several hosts without it are refused.
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

    /** Sets {@link RelayOptions#SCHEMA}. */
    public B schema(String schema) {
        return set(RelayOptions.SCHEMA, schema);
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
     * {@link UnsafeConfigurationException} naming the key. Default none.
     */
    public B producerOverrides(Map<String, ?> producerOverrides) {
        this.producerOverrides = producerOverrides == null ? Map.of() : producerOverrides;
        return self();
    }

    /** Sets {@link RelayOptions#ROUTE}. */
    public B route(TopicRoute route) {
        return set(RelayOptions.ROUTE, route);
    }

    /** Sets {@link RelayOptions#RECORD_FORMAT}. */
    public B recordFormat(RecordFormat recordFormat) {
        return set(RelayOptions.RECORD_FORMAT, recordFormat);
    }

    /** Sets {@link RelayOptions#CLOUD_EVENTS_SOURCE}. */
    public B cloudEventsSource(String sourceTemplate) {
        return set(RelayOptions.CLOUD_EVENTS_SOURCE, sourceTemplate);
    }

    /**
     * The route the relay publishes with: {@link RelayOptions#ROUTE}, in CloudEvents format with
     * {@link RelayOptions#CLOUD_EVENTS_SOURCE} when {@link RelayOptions#RECORD_FORMAT} says so (a route given
     * already in CloudEvents format stays so).
     */
    protected final TopicRoute routeWithFormat() {
        TopicRoute route = get(RelayOptions.ROUTE);
        return get(RelayOptions.RECORD_FORMAT) == RecordFormat.CLOUDEVENTS
                ? route.withCloudEvents(get(RelayOptions.CLOUD_EVENTS_SOURCE)) : route;
    }

    /** Sets {@link RelayOptions#INSTANCE_ID}. */
    public B instanceId(String instanceId) {
        return set(RelayOptions.INSTANCE_ID, instanceId);
    }

    /** Sets {@link RelayOptions#LEASE_DURATION}. */
    public B leaseDuration(Duration leaseDuration) {
        return set(RelayOptions.LEASE_DURATION, leaseDuration);
    }

    /** Sets {@link RelayOptions#MAX_ATTEMPTS}. */
    public B maxAttempts(int maxAttempts) {
        return set(RelayOptions.MAX_ATTEMPTS, maxAttempts);
    }

    /**
     * {@link RelayOptions#START_TIMEOUT}: how long {@code start()} keeps trying a database that does not answer
     * (refused, timed out, starting up) before it throws; a database that answers no (wrong password, missing grants,
     * an untrusted certificate) fails at once. Default 60 s, from 0 (one attempt) to 30 min.
     */
    public B startTimeout(Duration startTimeout) {
        return set(RelayOptions.START_TIMEOUT, startTimeout);
    }

    /** Clock of the commit-to-ack metric. Default UTC system clock (leases use the database's clock). */
    public B clock(Clock clock) {
        this.clock = clock;
        return self();
    }

    /**
     * Traces every publication through {@code openTelemetry}: one PRODUCER span per event, child of the context the
     * writer stored with it, whose own context the Kafka record carries. Null (the default) traces nothing. Needs
     * {@code io.opentelemetry:opentelemetry-api} on the class path; without a call to this method nothing of it is
     * loaded.
     */
    public B tracing(OpenTelemetry openTelemetry) {
        this.openTelemetry = openTelemetry;
        return self();
    }

    /**
     * The checks every relay makes on what is not an option: a {@code jdbc:postgresql:} URL (when one is set) and a
     * clock. Options were checked when set. Required settings are each relay's own business.
     *
     * @throws IllegalArgumentException naming the first bad setting
     */
    protected final void checkShared() {
        if (jdbcUrl != null && !jdbcUrl.startsWith("jdbc:postgresql:")) {
            throw new IllegalArgumentException("jdbcUrl must start with jdbc:postgresql:, got '" + Secret.maskUrl(jdbcUrl) + "'");
        }
        if (jdbcUrl != null) {
            JdbcUrls.requirePrimaryTarget(jdbcUrl, "jdbcUrl");
        }
        Objects.requireNonNull(clock, "clock must not be null");
    }

    /** {@link #instanceId} or, when unset, host name (as {@code [A-Za-z0-9._-]}), process id and 6 random hex digits. */
    protected final String instanceIdOrDefault() {
        String instanceId = get(RelayOptions.INSTANCE_ID);
        if (instanceId != null) {
            return instanceId;
        }
        String host = RelayReports.hostName().replaceAll("[^A-Za-z0-9._-]", "_");
        if (host.length() > 150) {
            host = host.substring(0, 150);
        }
        return host + "-" + ProcessHandle.current().pid() + "-" + UUID.randomUUID().toString().substring(0, 6).toLowerCase(Locale.ROOT);
    }

    /**
     * The checked producer configuration: {@link ProducerSafety#defaults()}, then {@code relayDefaults}, then the
     * user's {@link #producerOverrides}, with {@link #bootstrapServers}.
     *
     * @throws UnsafeConfigurationException for an override that weakens a guarantee
     */
    protected final Map<String, Object> producerConfig(Map<String, ?> relayDefaults) {
        Map<String, Object> producer = new LinkedHashMap<>(relayDefaults);
        producer.putAll(producerOverrides);
        return ProducerSafety.producerConfig(bootstrapServers, producer);
    }
}
