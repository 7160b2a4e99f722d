package dev.outboxkit.relay.poller;

import com.zaxxer.hikari.HikariDataSource;
import dev.outboxkit.core.Secret;
import dev.outboxkit.relay.Relay;
import dev.outboxkit.relay.RelayBuilder;
import dev.outboxkit.relay.RelayOption;
import dev.outboxkit.relay.poller.internal.ClaimTerms;
import dev.outboxkit.relay.poller.internal.KafkaTerms;
import dev.outboxkit.relay.poller.internal.LeaseTerms;
import dev.outboxkit.relay.poller.internal.LoopTerms;
import dev.outboxkit.relay.poller.internal.PollerSettings;
import dev.outboxkit.relay.poller.internal.SettleTerms;
import dev.outboxkit.relay.poller.internal.StartChecks;
import dev.outboxkit.relay.poller.internal.Supervisor;
import dev.outboxkit.runtime.ConnectionPools;
import dev.outboxkit.runtime.DatabaseLogin;
import dev.outboxkit.runtime.KafkaWrites;
import dev.outboxkit.runtime.Tracing;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import javax.sql.DataSource;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;

/**
 * The polling relay: publishes every committed {@code outbox_event} row to Kafka and forgets it
 * only after Kafka acknowledged it.
 *
 * <p>How: it claims a batch of rows with {@code FOR UPDATE SKIP LOCKED} by deleting (or marking)
 * them in a transaction that stays open, sends every record asynchronously through
 * {@link dev.outboxkit.relay.KafkaRecords}, waits for every acknowledgement and only then commits.
 * A crash before the commit rolls the claim back, so rows are published again (at least once),
 * never lost. A fully acknowledged batch is committed while the next one is claimed.
 *
 * <p>Several instances share the work: aggregates hash into {@code partitions} partitions, and
 * each instance takes its fair share of them through leases in {@code outbox_relay_lease}, each
 * with a fencing token from {@code outbox_fence_seq}. Every claim and every commit checks the token
 * in the same transaction, so an instance that lost a lease (paused, cut off) cannot complete
 * anything on it: its work is rolled back and it steps down, saying so in the log.
 *
 * <pre>{@code
 * try (PollingRelay relay = PollingRelay.builder()
 *         .dataSource(pool)                       // or .jdbcUrl(url).user(u).password(Secret.of(p))
 *         .bootstrapServers("kafka:9092")
 *         .build()) {
 *     relay.start();
 *     ...                                         // close() finishes the batch in flight, releases leases
 * }
 * }</pre>
 *
 * <p>Thread-safe. {@link #start()} once; {@link #close()} is idempotent.
 */
public final class PollingRelay implements Relay {

    private final String instanceId;
    private final Map<String, Object> producerConfig;
    private final Supervisor supervisor;

    /**
     * The wiring, and the one place that reads the relay's settings: each internal part gets the values it uses.
     *
     * @param given the caller's pool, or null: then the relay opens (and closes) a pool of its own with {@code login}
     */
    private PollingRelay(PollerSettings settings, DataSource given, DatabaseLogin login, MeterRegistry registry,
                         Function<Map<String, Object>, Producer<byte[], byte[]>> producerFactory) {
        this.instanceId = settings.instanceId();
        this.producerConfig = settings.producerConfig();
        String logPrefix = settings.logPrefix();
        int connections = connectionsNeeded(settings.claimLoops(), settings.listenNotify());
        HikariDataSource ownedPool = given != null ? null
                : ConnectionPools.open(login, "outbox-poll-" + instanceId, connections + 1, "outboxkit-poll");
        StartChecks checks = new StartChecks(settings.startTimeout(), settings.schema(), settings.partitions(),
                settings.afterPublish(), settings.parkPolicy(), settings.listenNotify(), settings.maxPollDelay(),
                connections);
        LeaseTerms leases = new LeaseTerms(instanceId, logPrefix, settings.schema(), settings.partitions(),
                settings.timing(), settings.heartbeatInterval(), settings.releaseLockTimeout());
        ClaimTerms claims = new ClaimTerms(instanceId, settings.batchSize(), settings.maxPollDelay(), settings.timing(),
                settings.clock());
        SettleTerms settlement = new SettleTerms(instanceId, logPrefix, settings.schema(), settings.afterPublish(),
                settings.maxAttempts(), producerConfig);
        LoopTerms loops = new LoopTerms(logPrefix, settings.claimLoops(), settings.pipelineClaims(),
                settings.parkPolicy(), settings.route(), settings.tracing(), claims, settlement);
        Function<Map<String, Object>, Producer<byte[], byte[]>> producers =
                producerFactory != null ? producerFactory : KafkaProducer::new;
        KafkaTerms kafka = new KafkaTerms(producerConfig, settings.route(), () -> producers.apply(producerConfig));
        this.supervisor = new Supervisor(logPrefix, given != null ? given : ownedPool, ownedPool,
                registry != null ? registry : new SimpleMeterRegistry(), checks, leases, loops, kafka,
                settings.stopWait());
    }

    public static Builder builder() {
        return new Builder();
    }

    /**
     * The Kafka producer configuration in effect: the relay's defaults, then the overrides. It may
     * hold secrets (SASL); print values through {@link Secret#printable}.
     */
    public Map<String, Object> producerConfig() {
        return producerConfig;
    }

    /** This instance's id (the lease holder name). */
    public String instanceId() {
        return instanceId;
    }

    /**
     * Waits for the database (up to {@code startTimeout}; {@link #health()} says what it waits for), checks the
     * schema, joins the relay group, takes a first share of the partitions and starts the claim loop; returns
     * without waiting for Kafka. {@link #close()} from another thread ends the wait.
     *
     * @throws IllegalStateException when the database did not answer within {@code startTimeout}, answered no (a
     *                               wrong password, no CONNECT privilege, a certificate not trusted or not naming
     *                               the host: at once) or lacks the outboxkit schema (V3 or later), when the TLS
     *                               handshake with Kafka fails (a broker certificate its truststore does not
     *                               trust, or one not naming the host), or when called twice
     */
    @Override
    public void start() {
        supervisor.start();
    }

    /**
     * Connections the relay needs from a pool it is given: per claim loop 3 (its batch in flight, the next claim, the
     * commit of the batch before), then the heartbeat, the probes and the liveness lock, and the listener with listenNotify.
     */
    static int connectionsNeeded(int claimLoops, boolean listenNotify) {
        return 3 * claimLoops + (listenNotify ? 4 : 3);
    }

    /**
     * Live: every claim loop and the heartbeat run. Ready: the last heartbeat reached the database
     * recently (5 s, or the lease if that is shorter), Kafka accepts the relay's writes (it answers the reachability
     * probe, waiting records are acknowledged: {@link KafkaWrites}; a batch whose records it refused counts until a
     * batch passes, one whose records it only did not answer in time until it acknowledges a record again), and the instance
     * either holds partitions or stands by (all partitions are held by others).
     */
    @Override
    public Health health() {
        return supervisor.health();
    }

    /**
     * Graceful stop: stops claiming, waits for the batch in flight to be acknowledged and
     * committed (at most about a third of the lease duration), gives back every lease (the others, told at that
     * commit, take over within milliseconds) and then closes the producer and the relay-owned pool.
     */
    @Override
    public void close() {
        supervisor.close();
    }

    /**
     * Configuration of a {@link PollingRelay}. Every setting has a default except the database
     * ({@link #dataSource} or {@link #jdbcUrl}) and {@link #bootstrapServers}. {@link #build()}
     * validates everything and names the setting it refuses. The database, Kafka, route, instance, lease and
     * clock settings are shared with the CDC relay ({@link RelayBuilder}); for this relay {@code jdbcUrl} is the
     * alternative to {@link #dataSource}: the relay then opens (and closes) its own small HikariCP pool, with
     * {@code user} (required unless the URL has {@code user=}) and {@code password}. Each option setter sets the
     * {@link PollerOptions} or {@link dev.outboxkit.relay.RelayOptions} definition of the same name, whose description is its one doc.
     */
    public static final class Builder extends RelayBuilder<Builder> {

        private DataSource dataSource;
        private MeterRegistry meterRegistry;
        private Function<Map<String, Object>, Producer<byte[], byte[]>> producerFactory;

        private Builder() {
        }

        @Override
        protected List<RelayOption<?>> ownOptions() {
            return PollerOptions.all();
        }

        /**
         * A pool the caller owns (and closes after the relay). It needs 3 connections per claim loop
         * ({@link PollerOptions#CLAIM_LOOPS}) plus 3 (4 with listenNotify): 9 (10) with the default two loops, 6 (7)
         * with one partition, one of them held for the relay's life by its liveness lock.
         */
        public Builder dataSource(DataSource dataSource) {
            this.dataSource = dataSource;
            return this;
        }

        /** Sets {@link PollerOptions#PARTITIONS}. */
        public Builder partitions(int partitions) {
            return set(PollerOptions.PARTITIONS, partitions);
        }

        /** Sets {@link PollerOptions#BATCH_SIZE}. */
        public Builder batchSize(int batchSize) {
            return set(PollerOptions.BATCH_SIZE, batchSize);
        }

        /** Sets {@link PollerOptions#LISTEN_NOTIFY}. */
        public Builder listenNotify(boolean listenNotify) {
            return set(PollerOptions.LISTEN_NOTIFY, listenNotify);
        }

        /** Sets {@link PollerOptions#AFTER_PUBLISH}. */
        public Builder afterPublish(AfterPublish afterPublish) {
            return set(PollerOptions.AFTER_PUBLISH, afterPublish);
        }

        /** Sets {@link PollerOptions#PARK_POLICY}. */
        public Builder parkPolicy(ParkPolicy parkPolicy) {
            return set(PollerOptions.PARK_POLICY, parkPolicy);
        }

        /** Sets {@link PollerOptions#MAX_POLL_DELAY}. */
        public Builder maxPollDelay(Duration maxPollDelay) {
            return set(PollerOptions.MAX_POLL_DELAY, maxPollDelay);
        }

        /** Sets {@link PollerOptions#CLAIM_LOOPS}. */
        public Builder claimLoops(int claimLoops) {
            return set(PollerOptions.CLAIM_LOOPS, claimLoops);
        }

        /** Sets {@link PollerOptions#PIPELINE_CLAIMS}. */
        public Builder pipelineClaims(boolean pipelineClaims) {
            return set(PollerOptions.PIPELINE_CLAIMS, pipelineClaims);
        }

        /** Where the {@code outbox.relay.*} meters go. Default a private {@code SimpleMeterRegistry}. */
        public Builder meterRegistry(MeterRegistry meterRegistry) {
            this.meterRegistry = meterRegistry;
            return this;
        }

        /** Tests: a producer of their own (for example Kafka's MockProducer). */
        Builder producerFactory(Function<Map<String, Object>, Producer<byte[], byte[]>> producerFactory) {
            this.producerFactory = producerFactory;
            return this;
        }

        /**
         * Validates and builds (nothing connects yet; {@link PollingRelay#start()} does).
         *
         * @throws IllegalArgumentException naming the setting that is missing or out of range
         * @throws dev.outboxkit.relay.UnsafeConfigurationException for an unsafe producer override
         */
        public PollingRelay build() {
            if ((dataSource == null) == (jdbcUrl == null)) {
                throw new IllegalArgumentException(dataSource == null
                        ? "set either dataSource or jdbcUrl (with user and password)"
                        : "set dataSource or jdbcUrl, not both");
            }
            checkShared();
            DatabaseLogin login = jdbcUrl == null ? null
                    : DatabaseLogin.resolve(jdbcUrl, user, password).requireUser("user(…)", "jdbcUrl");
            if (bootstrapServers == null || bootstrapServers.isBlank()) {
                throw new IllegalArgumentException("bootstrapServers must be set (for example localhost:9092)");
            }
            PollerSettings settings = PollerSettings.of(this::get, instanceIdOrDefault(), this::producerConfig,
                    routeWithFormat(), clock, Tracing.of(openTelemetry));
            return new PollingRelay(settings, dataSource, login, meterRegistry, producerFactory);
        }
    }
}
