package dev.outboxkit.consumer;

import dev.outboxkit.consumer.internal.ApplyFailures;
import dev.outboxkit.consumer.internal.ConsumerLoop;
import dev.outboxkit.consumer.internal.ConsumerMetrics;
import dev.outboxkit.consumer.internal.ConsumerSettings;
import dev.outboxkit.core.MissingGrantsException;
import dev.outboxkit.core.OutboxTables;
import dev.outboxkit.core.spi.Grants;
import dev.outboxkit.core.spi.RoleGrants;
import dev.outboxkit.relay.Relay;
import dev.outboxkit.relay.UnsafeConfigurationException;
import dev.outboxkit.runtime.KafkaReachability;
import dev.outboxkit.runtime.Tracing;
import io.micrometer.core.instrument.MeterRegistry;
import io.opentelemetry.api.OpenTelemetry;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The idempotent consumer: reads events from Kafka and applies each event id at most once per
 * consumer group, atomically with its effect, in your PostgreSQL database.
 *
 * <p>Per poll batch it runs one database transaction: one statement records the batch's event
 * ids in {@code processed_event} ({@code INSERT … ON CONFLICT DO NOTHING RETURNING}), the handler
 * runs for the new ones on the same connection in poll order, the transaction commits, and only
 * then are the Kafka offsets committed. A crash between the two commits redelivers the batch and
 * the redelivery is skipped. With an at-least-once relay that is an exactly-once effect.
 *
 * <pre>{@code
 * DedupeConsumer consumer = DedupeConsumer.builder()
 *         .bootstrapServers("localhost:9092")
 *         .group("projection")
 *         .topics(List.of("outbox.event.order"))
 *         .dataSource(dataSource)
 *         .handler((connection, event) -> { ... write through connection ... })
 *         .build();
 * consumer.start();
 * ...
 * consumer.close();   // finishes the batch, commits, leaves the group
 * }</pre>
 *
 * <p>Failures: a record that cannot be decoded (no id header, id not a UUID, createdAt not
 * ISO-8601) goes to the dead-letter topic at once. A failing batch is rolled back and applied one
 * event per transaction; the failing event is retried {@code maxAttempts} times with exponential
 * backoff and then dead-lettered with error headers ({@link DeadLetterHeaders}); the rest carry
 * on. Transient database errors (lost connection, deadlock, serialization failure, shutdown) are
 * retried until the database answers again and never dead-letter anything. While it waits, the
 * consumer pauses its partitions and keeps polling, so it stays in the group. Rebalances commit
 * the finished offsets of revoked partitions first. Nothing is dropped silently.
 *
 * <p>Threads: {@link #start()} starts a (non-daemon) poll thread, which owns the Kafka consumer,
 * and a worker thread, which owns one database connection and runs the handlers; the poll thread
 * reads and decodes the next batch while the worker writes the current one. A third thread purges
 * old ids ({@link InboxRetention}) every {@code retentionCheckInterval} with a connection of its
 * own: the {@code DataSource} should allow two connections per consumer.
 */
public final class DedupeConsumer implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(DedupeConsumer.class);

    private final ConsumerSettings settings;
    private final ConsumerLoop loop;
    private final Object lock = new Object();
    private Thread thread;
    private ScheduledExecutorService retentionScheduler;
    private Admin admin;
    private boolean closed;

    private DedupeConsumer(ConsumerSettings settings) {
        this.settings = settings;
        this.loop = new ConsumerLoop(settings, new ConsumerMetrics(settings.meterRegistry(), settings.group()));
    }

    public static Builder builder() {
        return new Builder();
    }

    /**
     * Starts the poll thread (and the retention job) and returns.
     *
     * @throws IllegalStateException       when started before or already closed
     * @throws MissingGrantsException when the database role lacks a privilege on {@code processed_event}
     * @throws IllegalStateException  also when the TLS handshake with the broker fails (untrusted CA, wrong host name)
     */
    public void start() {
        synchronized (lock) {
            if (closed) {
                throw new IllegalStateException("consumer " + settings.clientId() + " is closed; build a new one");
            }
            if (thread != null) {
                throw new IllegalStateException("consumer " + settings.clientId() + " is already started");
            }
            requireGrants();
            KafkaReachability.refuseUntrustedBroker(settings.consumerConfig(),
                    "consumer " + settings.clientId() + " of group " + settings.group());
            thread = new Thread(loop, settings.clientId());
            thread.setDaemon(false);
            loop.starting();
            thread.start();
            long every = settings.retentionCheckInterval().toMillis();
            if (every > 0) {
                retentionScheduler = Executors.newSingleThreadScheduledExecutor(r -> {
                    Thread t = new Thread(r, settings.clientId() + "-retention");
                    t.setDaemon(true);
                    return t;
                });
                retentionScheduler.scheduleWithFixedDelay(this::purgeQuietly, every, every, TimeUnit.MILLISECONDS);
            }
        }
    }

    /**
     * What consumer-dedupe/README.md lists for the consumer's role: SELECT and INSERT on processed_event, DELETE too
     * when this consumer runs the retention job. A database that cannot be reached now is not an error here: the poll
     * thread waits for it and health says so, as before.
     */
    private void requireGrants() {
        Grants grants = RoleGrants.consumer(settings.schema(), settings.retentionCheckInterval().toMillis() > 0);
        try (java.sql.Connection c = settings.dataSource().getConnection()) {
            grants.require(c, "consumer " + settings.clientId() + " of group " + settings.group());
        } catch (SQLException e) {
            log.warn("consumer {}: could not check the database role's privileges at start ({}); the poll thread "
                    + "waits for the database", settings.clientId(), e.getMessage());
        }
    }

    /** Liveness and readiness: live while the poll thread runs, ready when it polls and the database answers. */
    public Relay.Health health() {
        return loop.health();
    }

    /** The consumer group. */
    public String group() {
        return settings.group();
    }

    /** What {@link Builder#build()} resolved (for this package's tests: e.g. the Kafka config it will use). */
    ConsumerSettings settings() {
        return settings;
    }

    /**
     * Purges old processed ids now, as the retention job does every {@code retentionCheckInterval}.
     *
     * @see InboxRetention#purge
     */
    public InboxRetention.Result purgeExpired() throws SQLException {
        Admin a;
        synchronized (lock) {
            if (admin == null) {
                admin = Admin.create(adminConfig());
            }
            a = admin;
        }
        return InboxRetention.purge(settings.dataSource(), settings.schema(), settings.group(), settings.retention(), a,
                settings.clock());
    }

    private void purgeQuietly() {
        try {
            InboxRetention.Result r = purgeExpired();
            if (r.purged() > 0 || r.keptNotCommitted() > 0 || r.keptWithoutCoordinates() > 0) {
                log.info("group {}: retention purged {} processed id(s) older than {}; kept {} the group has not committed "
                                + "past and {} without Kafka coordinates", settings.group(), r.purged(), settings.retention(),
                        r.keptNotCommitted(), r.keptWithoutCoordinates());
            }
        } catch (Exception e) {
            log.warn("group {}: retention purge failed ({}); nothing unsafe was deleted, it runs again in {}",
                    settings.group(), ApplyFailures.describe(e), settings.retentionCheckInterval());
        }
    }

    private Map<String, Object> adminConfig() {
        Map<String, Object> config = new HashMap<>();
        settings.kafkaProperties().forEach((k, v) -> {
            if (AdminClientConfig.configNames().contains(k)) {
                config.put(k, v);
            }
        });
        config.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, settings.bootstrapServers());
        config.put(AdminClientConfig.CLIENT_ID_CONFIG, settings.clientId() + "-retention");
        return config;
    }

    /**
     * Graceful stop: the batch in flight is finished and committed (a batch stuck waiting for a
     * retry is left for redelivery instead), offsets are committed, the consumer leaves its group.
     * Waits up to {@code closeTimeout}. Idempotent.
     */
    @Override
    public void close() {
        Thread t;
        synchronized (lock) {
            if (closed) {
                return;
            }
            closed = true;
            t = thread;
            if (retentionScheduler != null) {
                retentionScheduler.shutdownNow();
            }
        }
        loop.stop();
        if (t != null && t != Thread.currentThread()) {
            try {
                t.join(settings.closeTimeout().toMillis() + 5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (t.isAlive()) {
                log.warn("consumer {} did not stop within {}; its uncommitted records will be redelivered to the group",
                        settings.clientId(), settings.closeTimeout());
            }
        }
        synchronized (lock) {
            if (admin != null) {
                admin.close(Duration.ofSeconds(5));
                admin = null;
            }
        }
    }

    /**
     * Configuration of a {@link DedupeConsumer}. Required: bootstrap servers (or
     * {@code bootstrap.servers} in {@link #kafkaProperties}), {@link #group}, {@link #topics} or
     * {@link #topicPattern}, {@link #dataSource}, and {@link #handler} and/or {@link #batchHandler}.
     * {@link #build()} validates everything and names the setting it refuses.
     */
    public static final class Builder {

        private String bootstrapServers;
        private Map<String, Object> kafkaProperties = Map.of();
        private String group;
        private List<String> topics;
        private Pattern topicPattern;
        private DataSource dataSource;
        private String schema = OutboxTables.DEFAULT_SCHEMA;
        private EventHandler handler;
        private BatchHandler batchHandler;
        private String idHeader = "id";
        private Function<String, String> deadLetterTopic = topic -> topic + ".dlq";
        private int maxAttempts = 5;
        private Duration backoff = Duration.ofMillis(200);
        private Duration maxBackoff = Duration.ofSeconds(30);
        private Duration retention = Duration.ofDays(7);
        private Duration retentionCheckInterval = Duration.ofHours(1);
        private LateArrivalPolicy lateArrivalPolicy = LateArrivalPolicy.routeToReviewTopic();
        private MeterRegistry meterRegistry;
        private Tracing tracing = Tracing.OFF;
        private Clock clock = Clock.systemUTC();
        private Duration pollTimeout = Duration.ofMillis(500);
        private Duration closeTimeout = Duration.ofSeconds(30);
        private Runnable afterDatabaseCommit = () -> { };

        private Builder() {
        }

        /** Kafka's {@code bootstrap.servers}. Required unless {@link #kafkaProperties} has it; wins over it when both do. */
        public Builder bootstrapServers(String bootstrapServers) {
            this.bootstrapServers = bootstrapServers;
            return this;
        }

        /**
         * Passed to the Kafka consumer as they are (SASL, SSL, {@code max.poll.records},
         * {@code group.protocol}, …); producer and admin settings among them (security) are also
         * used by the dead-letter producer and the retention job. Defaults this consumer sets
         * unless you do: {@code auto.offset.reset=earliest}, {@code max.poll.records=1000},
         * {@code isolation.level=read_committed}. Refused: {@code enable.auto.commit=true} (offsets
         * are committed only after the database commit), deserializers other than
         * {@code ByteArrayDeserializer}, a {@code group.id} other than {@link #group}.
         */
        public Builder kafkaProperties(Map<String, ?> properties) {
            this.kafkaProperties = properties == null ? Map.of() : new LinkedHashMap<>(properties);
            return this;
        }

        /** The consumer group; also the inbox's {@code consumer_group}. Required. */
        public Builder group(String group) {
            this.group = group;
            return this;
        }

        /** Topics to subscribe to. Exactly one of topics and {@link #topicPattern} is required. */
        public Builder topics(Collection<String> topics) {
            this.topics = topics == null ? null : List.copyOf(topics);
            return this;
        }

        /** Subscribe to every topic matching {@code pattern} (new ones too). Dead-letter and review topics should not match it. */
        public Builder topicPattern(Pattern pattern) {
            this.topicPattern = pattern;
            return this;
        }

        /** Where {@code processed_event} and your tables live. Required. One connection is held by the poll thread. */
        public Builder dataSource(DataSource dataSource) {
            this.dataSource = dataSource;
            return this;
        }

        /** Schema holding the outboxkit tables. Default {@code public}. */
        public Builder schema(String schema) {
            this.schema = schema;
            return this;
        }

        /** Called once per new event, in poll order, inside the batch's transaction. */
        public Builder handler(EventHandler handler) {
            this.handler = handler;
            return this;
        }

        /**
         * Called once per poll batch with its new events, inside the batch's transaction: one JDBC
         * batch per poll instead of a round trip per event. When both handlers are set, the batch
         * handler runs first, then the event handler for each event, in the same transaction.
         */
        public Builder batchHandler(BatchHandler batchHandler) {
            this.batchHandler = batchHandler;
            return this;
        }

        /** Header that carries the event id. Default {@code id} (outboxkit's relays and Debezium's outbox router). */
        public Builder idHeader(String idHeader) {
            this.idHeader = idHeader;
            return this;
        }

        /** Dead-letter topic for a source topic. Default {@code <topic>.dlq}. Create it, or allow auto-creation. */
        public Builder deadLetterTopic(Function<String, String> deadLetterTopic) {
            this.deadLetterTopic = deadLetterTopic;
            return this;
        }

        /** Tries of a failing event (one per transaction) before it is dead-lettered. Default 5; 1 to 100. */
        public Builder maxAttempts(int maxAttempts) {
            this.maxAttempts = maxAttempts;
            return this;
        }

        /** First wait before a retry; doubles per failure up to {@link #maxBackoff}. Default 200 ms. */
        public Builder backoff(Duration backoff) {
            this.backoff = backoff;
            return this;
        }

        /** Longest wait between retries. Default 30 s. */
        public Builder maxBackoff(Duration maxBackoff) {
            this.maxBackoff = maxBackoff;
            return this;
        }

        /**
         * How long processed ids are kept at least (they are purged later only once the group
         * committed past them), and the age beyond which a new event counts as a late arrival.
         * Default 7 days; make it longer than any redelivery you expect (relay outage, replay).
         */
        public Builder retention(Duration retention) {
            this.retention = retention;
            return this;
        }

        /** How often the retention job runs; {@link Duration#ZERO} turns it off. Default 1 hour. */
        public Builder retentionCheckInterval(Duration interval) {
            this.retentionCheckInterval = interval;
            return this;
        }

        /** What to do with late arrivals. Default {@link LateArrivalPolicy#routeToReviewTopic()}. */
        public Builder lateArrivalPolicy(LateArrivalPolicy policy) {
            this.lateArrivalPolicy = policy;
            return this;
        }

        /** Where the {@code outbox.consumer.*} meters go. Default a private {@code SimpleMeterRegistry}. */
        public Builder meterRegistry(MeterRegistry registry) {
            this.meterRegistry = registry;
            return this;
        }

        /**
         * Traces processing through {@code openTelemetry}: a CONSUMER span per record, child of the context in its
         * {@code traceparent} header and current while the handler runs, so the handler's own spans nest under it.
         * A duplicate the inbox skips gets a span marked {@code outboxkit.inbox.duplicate} and no handler call; a
         * batch handler runs in one span linked to every record's context. Null (the default) traces nothing. Needs
         * {@code io.opentelemetry:opentelemetry-api} on the class path.
         */
        public Builder tracing(OpenTelemetry openTelemetry) {
            this.tracing = Tracing.of(openTelemetry);
            return this;
        }

        /** Clock for {@code processed_at}, late-arrival checks and retention. Default the system UTC clock. */
        public Builder clock(Clock clock) {
            this.clock = clock;
            return this;
        }

        /** Longest time one poll blocks when there is nothing to read. Default 500 ms. */
        public Builder pollTimeout(Duration pollTimeout) {
            this.pollTimeout = pollTimeout;
            return this;
        }

        /** How long {@link #close()} waits for the batch in flight and for leaving the group. Default 30 s. */
        public Builder closeTimeout(Duration closeTimeout) {
            this.closeTimeout = closeTimeout;
            return this;
        }

        /** Test hook: runs on the poll thread right after each database commit, before the offset commit. */
        Builder afterDatabaseCommit(Runnable hook) {
            this.afterDatabaseCommit = Objects.requireNonNull(hook, "hook");
            return this;
        }

        /**
         * Validates and builds.
         *
         * @throws UnsafeConfigurationException when {@code enable.auto.commit=true} is passed
         * @throws IllegalArgumentException     naming the first setting that is missing or invalid
         */
        public DedupeConsumer build() {
            return new DedupeConsumer(new ConsumerSettings(null, bootstrapServers, kafkaProperties, group, topics,
                    topicPattern, dataSource, schema, handler, batchHandler, idHeader, deadLetterTopic, maxAttempts, backoff,
                    maxBackoff, retention, retentionCheckInterval, lateArrivalPolicy, meterRegistry, clock, pollTimeout,
                    closeTimeout, afterDatabaseCommit, tracing));
        }
    }
}
