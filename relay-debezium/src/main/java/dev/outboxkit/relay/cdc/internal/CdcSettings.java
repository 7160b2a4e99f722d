package dev.outboxkit.relay.cdc.internal;

import dev.outboxkit.core.OutboxTables;
import dev.outboxkit.core.Secret;
import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.relay.cdc.CdcOptions;
import dev.outboxkit.runtime.DatabaseLogin;
import dev.outboxkit.runtime.OptionValues;
import dev.outboxkit.runtime.SharedSettings;
import dev.outboxkit.runtime.Tracing;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;

/**
 * Not API: built and read by {@link CdcWiring} alone.
 *
 * <p>The validated, immutable configuration of one CDC relay, read by name from its option catalog by {@link #of}:
 * the shared options and what derives from them ({@link SharedSettings}: the lease's timing, the tables, the producer
 * configuration), then {@link CdcOptions} and what derives from them (the lease key, the log prefix). Each option's
 * meaning and range are documented once, on the option.
 */
public final class CdcSettings extends SharedSettings {

    /** Prefix of the logical decoding messages the writer emits in its emit-message mode. */
    public static final String MESSAGE_PREFIX = ChangeDecoder.MESSAGE_PREFIX;

    private final DatabaseLogin login;
    private final String slotName;
    private final String publicationName;
    private final boolean deleteAfterPublish;
    private final boolean failoverSlot;
    private final Duration heartbeatInterval;
    private final Duration offsetFlushInterval;
    private final int maxBatchSize;
    private final int maxInFlight;
    private final Duration pollInterval;
    private final Duration shutdownTimeout;
    private final MeterRegistry meterRegistry;

    private CdcSettings(OptionValues options, DatabaseLogin login, String instanceId,
                        Function<Map<String, ?>, Map<String, Object>> producerConfig, TopicRoute route,
                        MeterRegistry meterRegistry, Clock clock, Tracing tracing) {
        // the CDC relay adds no producer defaults of its own: the safety defaults and the user's overrides
        super(options, instanceId, "CDC relay on slot " + options.get(CdcOptions.SLOT_NAME), producerConfig,
                timing -> Map.of(), route, clock, tracing);
        this.login = Objects.requireNonNull(login, "login");
        this.slotName = options.get(CdcOptions.SLOT_NAME);
        this.publicationName = options.get(CdcOptions.PUBLICATION_NAME);
        this.deleteAfterPublish = options.get(CdcOptions.DELETE_AFTER_PUBLISH);
        this.failoverSlot = options.get(CdcOptions.FAILOVER_SLOT);
        this.heartbeatInterval = options.get(CdcOptions.HEARTBEAT_INTERVAL);
        this.offsetFlushInterval = options.get(CdcOptions.OFFSET_FLUSH_INTERVAL);
        this.maxBatchSize = options.get(CdcOptions.MAX_BATCH_SIZE);
        this.maxInFlight = options.get(CdcOptions.MAX_IN_FLIGHT);
        this.pollInterval = options.get(CdcOptions.POLL_INTERVAL);
        this.shutdownTimeout = options.get(CdcOptions.SHUTDOWN_TIMEOUT);
        this.meterRegistry = Objects.requireNonNull(meterRegistry, "meterRegistry");
    }

    /**
     * The configuration of a CDC relay.
     *
     * @param options        the builder's option values (set or default, each checked by its option)
     * @param login          the resolved login: the URL without user= and password=, user and password
     *                       ({@link DatabaseLogin#resolve})
     * @param instanceId     this instance's id (the option's value, or the generated default)
     * @param producerConfig completes the relay's producer defaults with the user's overrides and checks them
     * @param route          the route in the chosen record format
     * @param meterRegistry  where the relay's meters go
     * @param clock          clock of the commit-to-ack metric
     * @param tracing        publish spans ({@link Tracing#OFF}: none)
     */
    public static CdcSettings of(OptionValues options, DatabaseLogin login, String instanceId,
                                 Function<Map<String, ?>, Map<String, Object>> producerConfig, TopicRoute route,
                                 MeterRegistry meterRegistry, Clock clock, Tracing tracing) {
        return new CdcSettings(options, login, instanceId, producerConfig, route, meterRegistry, clock, tracing);
    }

    /** The login of the relay's pool and of Debezium's connections. */
    public DatabaseLogin login() {
        return login;
    }

    /** The database URL, without user= and password= ({@link DatabaseLogin}). */
    public String jdbcUrl() {
        return login.jdbcUrl();
    }

    public String user() {
        return login.user();
    }

    public Secret password() {
        return login.password();
    }

    public String slotName() {
        return slotName;
    }

    public String publicationName() {
        return publicationName;
    }

    /** The lease every instance of this relay competes for. */
    public String leaseKey() {
        return "cdc/" + slotName;
    }

    public boolean deleteAfterPublish() {
        return deleteAfterPublish;
    }

    /** {@link CdcOptions#FAILOVER_SLOT}. */
    public boolean failoverSlot() {
        return failoverSlot;
    }

    public Duration heartbeatInterval() {
        return heartbeatInterval;
    }

    public Duration offsetFlushInterval() {
        return offsetFlushInterval;
    }

    /** Debezium's {@code max.batch.size}: events handed to the relay per batch. */
    public int maxBatchSize() {
        return maxBatchSize;
    }

    /** Most records handed to the producer and not yet acknowledged. */
    public int maxInFlight() {
        return maxInFlight;
    }

    /** Debezium's {@code poll.interval.ms}: the longest a lone event waits in its queue. */
    public Duration pollInterval() {
        return pollInterval;
    }

    /** How long {@code close()} waits for the open transaction to finish publishing. */
    public Duration shutdownTimeout() {
        return shutdownTimeout;
    }

    public MeterRegistry meterRegistry() {
        return meterRegistry;
    }

    public String outboxTable() {
        return tables().outboxEvent();
    }

    /** {@code "schema"."name"} for one of the {@link OutboxTables} names. */
    public String table(String name) {
        return tables().qualified(name);
    }

    /** A masked, one-line description for logs. */
    public String describe() {
        return "slot=" + slotName + " publication=" + publicationName + " schema=" + schema() + " db="
                + Secret.maskUrl(jdbcUrl()) + " instance=" + instanceId() + " deleteAfterPublish=" + deleteAfterPublish;
    }
}
