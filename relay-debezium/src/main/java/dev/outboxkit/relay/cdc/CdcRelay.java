package dev.outboxkit.relay.cdc;

import dev.outboxkit.relay.Relay;
import dev.outboxkit.relay.RelayBuilder;
import dev.outboxkit.relay.RelayOption;
import dev.outboxkit.relay.cdc.internal.CdcWiring;
import dev.outboxkit.relay.cdc.internal.Supervisor;
import dev.outboxkit.runtime.DatabaseLogin;
import dev.outboxkit.runtime.Tracing;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.apache.kafka.clients.producer.Producer;

/**
 * The CDC relay: reads the outbox table's inserts (and the writer's logical decoding messages) from a
 * PostgreSQL replication slot through Debezium Embedded ({@code pgoutput}), and publishes each event
 * as exactly the Kafka record the polling relay would publish ({@code dev.outboxkit.relay.KafkaRecords}).
 *
 * <p>Guarantees, and what they rest on:
 * <ul>
 *   <li><b>No loss, at least once.</b> A position is marked processed only after Kafka acknowledged
 *       everything before it, and only at a transaction boundary (which also keeps Debezium 3.6.1 from
 *       resuming inside a group of changes that share one LSN). Offsets live in PostgreSQL
 *       ({@code outbox_cdc_offset}), written under the lease's fencing token.</li>
 *   <li><b>The table stays the truth</b> ({@link Builder#deleteAfterPublish(boolean)}, the default):
 *       published rows are deleted in batches after the acks, and every start publishes what is still
 *       there before streaming, so nothing the WAL path could miss stays unpublished.</li>
 *   <li><b>One streamer per slot.</b> Instances compete for the lease {@code cdc/<slot>}; the others
 *       stand by and take over when it expires. A stale holder's offset writes are refused.</li>
 *   <li><b>Loud start-up checks.</b> A slot that is missing, invalidated or ahead of the stored offset
 *       stops the relay with {@link CdcStartupException} instead of re-snapshotting or skipping.</li>
 * </ul>
 *
 * <pre>{@code
 * try (CdcRelay relay = CdcRelay.builder()
 *         .jdbcUrl("jdbc:postgresql://db:5432/shop").user("outbox_relay").password(Secret.of(pw))
 *         .bootstrapServers("kafka:9092")
 *         .build()) {
 *     relay.start();
 *     ...
 * }
 * }</pre>
 */
public final class CdcRelay implements Relay {

    /** Where an instance stands. */
    public enum Role {
        /** Built, not started. */
        NEW,
        /** Waiting for the lease; another instance streams. */
        STANDBY,
        /** Holds the lease: drains and streams. */
        ACTIVE,
        /** Closed. */
        STOPPED,
        /** Stopped by an error that needs a human (see {@link #health()}). */
        FAILED
    }

    private final Supervisor supervisor;

    private CdcRelay(Supervisor supervisor) {
        this.supervisor = supervisor;
    }

    public static Builder builder() {
        return new Builder();
    }

    /**
     * Takes the lease if it is free and runs the start-up checks (publication, slot, stored offset) before
     * returning; then drains and streams on threads of its own. When another instance holds the lease it
     * returns at once as a standby.
     *
     * @throws CdcStartupException when starting could skip or re-send events (the message says what to do)
     * @throws IllegalStateException when the database did not answer within {@code startTimeout} ({@link #health()}
     *                               says what it waits for meanwhile, and {@link #close()} from another thread ends
     *                               the wait) or answered no (a wrong password, no CONNECT privilege, a certificate
     *                               not trusted or not naming the host: at once), when the TLS handshake with Kafka
     *                               fails (a broker certificate its truststore does not trust, or one not naming
     *                               the host), or when called twice
     */
    @Override
    public void start() {
        supervisor.start();
    }

    /**
     * Live unless stopped or failed; ready while it streams as the active instance, or as a standby that
     * can reach the database.
     */
    @Override
    public Health health() {
        return supervisor.health();
    }

    public Role role() {
        return Role.valueOf(supervisor.role().name());
    }

    /** The error that stopped the relay ({@link Role#FAILED}), else null. */
    public RuntimeException failure() {
        return supervisor.failure();
    }

    public String instanceId() {
        return supervisor.instanceId();
    }

    public String slotName() {
        return supervisor.slotName();
    }

    /**
     * Graceful stop: finishes the transaction being published, stores the offset that covers everything
     * published (so a restart publishes nothing twice), deletes the published rows, releases the lease so
     * a standby takes over at once. Waits at most {@link Builder#shutdownTimeout(Duration)} for the
     * transaction boundary.
     */
    @Override
    public void close() {
        supervisor.close();
    }

    @Override
    public String toString() {
        return "CdcRelay[" + supervisor.description() + "]";
    }

    /**
     * Configuration, validated in {@link #build()}. Required: {@link #jdbcUrl}, {@link #user} (or {@code user=} in
     * the URL, as for the polling relay; an explicit user or password wins over the URL's), {@link #bootstrapServers}. The database, Kafka, route, instance, lease and clock settings are shared with
     * the polling relay ({@link RelayBuilder}); for this relay:
     * <ul>
     *   <li>{@code jdbcUrl} names the primary: one host (or an endpoint that follows it), or every node with
     *       {@code targetServerType=primary}. Each streaming session resolves it to the host that is primary then,
     *       and Debezium opens its own connections there (SSL options are passed on); the relay also keeps a small
     *       pool for leases, offsets, deletes and dead letters.</li>
     *   <li>{@code user} needs {@code REPLICATION} (see relay-debezium/README.md, "Least-privilege role").</li>
     *   <li>{@code leaseDuration}: a standby takes over this long after the active instance died; a paused
     *       instance stops publishing once it passed.</li>
     * </ul>
     */
    public static final class Builder extends RelayBuilder<Builder> {

        private MeterRegistry meterRegistry;
        private Function<Map<String, Object>, Producer<byte[], byte[]>> producerFactory;

        private Builder() {
        }

        /** Tests: a producer of their own (for example Kafka's MockProducer). */
        Builder producerFactory(Function<Map<String, Object>, Producer<byte[], byte[]>> producerFactory) {
            this.producerFactory = producerFactory;
            return this;
        }

        @Override
        protected List<RelayOption<?>> ownOptions() {
            return CdcOptions.all();
        }

        /** Sets {@link CdcOptions#SLOT_NAME}. */
        public Builder slotName(String slotName) {
            return set(CdcOptions.SLOT_NAME, slotName);
        }

        /** Sets {@link CdcOptions#PUBLICATION_NAME}. */
        public Builder publicationName(String publicationName) {
            return set(CdcOptions.PUBLICATION_NAME, publicationName);
        }

        /** Sets {@link CdcOptions#DELETE_AFTER_PUBLISH}. */
        public Builder deleteAfterPublish(boolean deleteAfterPublish) {
            return set(CdcOptions.DELETE_AFTER_PUBLISH, deleteAfterPublish);
        }

        /** Sets {@link CdcOptions#FAILOVER_SLOT}. */
        public Builder failoverSlot(boolean failoverSlot) {
            return set(CdcOptions.FAILOVER_SLOT, failoverSlot);
        }

        /** Sets {@link CdcOptions#HEARTBEAT_INTERVAL}. */
        public Builder heartbeatInterval(Duration heartbeatInterval) {
            return set(CdcOptions.HEARTBEAT_INTERVAL, heartbeatInterval);
        }

        /** Sets {@link CdcOptions#OFFSET_FLUSH_INTERVAL}. */
        public Builder offsetFlushInterval(Duration offsetFlushInterval) {
            return set(CdcOptions.OFFSET_FLUSH_INTERVAL, offsetFlushInterval);
        }

        /** Sets {@link CdcOptions#MAX_BATCH_SIZE}. */
        public Builder maxBatchSize(int maxBatchSize) {
            return set(CdcOptions.MAX_BATCH_SIZE, maxBatchSize);
        }

        /** Sets {@link CdcOptions#MAX_IN_FLIGHT}. */
        public Builder maxInFlight(int maxInFlight) {
            return set(CdcOptions.MAX_IN_FLIGHT, maxInFlight);
        }

        /** Sets {@link CdcOptions#POLL_INTERVAL}. */
        public Builder pollInterval(Duration pollInterval) {
            return set(CdcOptions.POLL_INTERVAL, pollInterval);
        }

        /** Sets {@link CdcOptions#SHUTDOWN_TIMEOUT}. */
        public Builder shutdownTimeout(Duration shutdownTimeout) {
            return set(CdcOptions.SHUTDOWN_TIMEOUT, shutdownTimeout);
        }

        /** Where the metrics go. Default: a private {@code SimpleMeterRegistry}. */
        public Builder meterRegistry(MeterRegistry meterRegistry) {
            this.meterRegistry = meterRegistry;
            return this;
        }

        /**
         * Validates and builds.
         *
         * @throws IllegalArgumentException naming the first bad setting
         * @throws dev.outboxkit.relay.UnsafeConfigurationException for a producer override that weakens a guarantee
         */
        public CdcRelay build() {
            require("jdbcUrl", jdbcUrl);
            require("bootstrapServers", bootstrapServers);
            checkShared();
            DatabaseLogin login = DatabaseLogin.resolve(jdbcUrl, user, password).requireUser("user(…)", "jdbcUrl");
            return new CdcRelay(CdcWiring.supervisor(this::get, login, instanceIdOrDefault(), this::producerConfig,
                    routeWithFormat(), meterRegistry == null ? new SimpleMeterRegistry() : meterRegistry, clock,
                    Tracing.of(openTelemetry), producerFactory));
        }

        private static void require(String name, String value) {
            if (value == null || value.isBlank()) {
                throw new IllegalArgumentException(name + " is required");
            }
        }
    }
}
