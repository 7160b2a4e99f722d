package dev.outboxkit.runtime;

import dev.outboxkit.core.OutboxTables;
import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.relay.RelayOptions;
import java.time.Clock;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;

/**
 * Not API: the part of a relay's configuration that both relays share, extended by the polling relay's
 * {@code PollerSettings} and the CDC relay's {@code CdcSettings}.
 *
 * <p>Reads the shared options ({@link RelayOptions}) by name and owns what is derived from them: the lease's timing
 * ({@link #timing()}, the one place the lease option becomes durations), the tables and the producer configuration.
 * A subclass adds its relay's own options and names the relay in {@link #logPrefix()}. Immutable.
 */
public abstract class SharedSettings {

    private final String instanceId;
    private final String logPrefix;
    private final OutboxTables tables;
    private final LeaseTiming timing;
    private final int maxAttempts;
    private final Duration startTimeout;
    private final Map<String, Object> producerConfig;
    private final TopicRoute route;
    private final Clock clock;
    private final Tracing tracing;

    /**
     * @param options          the builder's option values (set or default, each checked by its option)
     * @param instanceId       this instance's id (the option's value, or the generated default)
     * @param logPrefix        how log lines and error messages name this relay
     * @param producerConfig   completes the relay's producer defaults with the user's overrides and checks them
     *                         ({@code RelayBuilder.producerConfig})
     * @param producerDefaults the relay's own producer defaults, from the lease's timing
     * @param route            the route in the chosen record format
     * @param clock            clock of the commit-to-ack metric
     * @param tracing          publish spans ({@link Tracing#OFF}: none)
     */
    protected SharedSettings(OptionValues options, String instanceId, String logPrefix,
                            Function<Map<String, ?>, Map<String, Object>> producerConfig,
                            Function<LeaseTiming, Map<String, ?>> producerDefaults, TopicRoute route, Clock clock,
                            Tracing tracing) {
        this.instanceId = Objects.requireNonNull(instanceId, "instanceId");
        this.logPrefix = Objects.requireNonNull(logPrefix, "logPrefix");
        this.tables = OutboxTables.in(options.get(RelayOptions.SCHEMA));
        this.timing = new LeaseTiming(options.get(RelayOptions.LEASE_DURATION));
        this.maxAttempts = options.get(RelayOptions.MAX_ATTEMPTS);
        this.startTimeout = options.get(RelayOptions.START_TIMEOUT);
        // kept in order: the producer is configured in the order ProducerSafety checked
        this.producerConfig = Collections.unmodifiableMap(
                new LinkedHashMap<>(producerConfig.apply(producerDefaults.apply(timing))));
        this.route = Objects.requireNonNull(route, "route");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.tracing = Objects.requireNonNull(tracing, "tracing");
    }

    /** This instance's id: the lease holder's name in the database. */
    public final String instanceId() {
        return instanceId;
    }

    /** How every log line and error message names this relay. */
    public final String logPrefix() {
        return logPrefix;
    }

    /** {@link RelayOptions#SCHEMA}. */
    public final String schema() {
        return tables.schema();
    }

    /** The outboxkit tables in {@link #schema()}. */
    public final OutboxTables tables() {
        return tables;
    }

    /** The lease ({@link RelayOptions#LEASE_DURATION}) and every duration derived from it. */
    public final LeaseTiming timing() {
        return timing;
    }

    /** {@link RelayOptions#MAX_ATTEMPTS}. */
    public final int maxAttempts() {
        return maxAttempts;
    }

    /** How long start() keeps trying a database that does not answer ({@link RelayOptions#START_TIMEOUT}). */
    public final Duration startTimeout() {
        return startTimeout;
    }

    /** The checked Kafka producer configuration: safety defaults, the relay's defaults, then the overrides. */
    public final Map<String, Object> producerConfig() {
        return producerConfig;
    }

    public final TopicRoute route() {
        return route;
    }

    /** Clock of the commit-to-ack metric. */
    public final Clock clock() {
        return clock;
    }

    /** Publish spans ({@link Tracing#OFF}: none). */
    public final Tracing tracing() {
        return tracing;
    }
}
