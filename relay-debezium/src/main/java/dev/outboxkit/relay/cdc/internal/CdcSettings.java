package dev.outboxkit.relay.cdc.internal;

import dev.outboxkit.core.Identifiers;
import dev.outboxkit.core.RelayOptions;
import dev.outboxkit.core.Secret;
import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.core.internal.DatabaseLogin;
import dev.outboxkit.core.internal.Tracing;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;

/**
 * Not API: public for {@code dev.outboxkit.relay.cdc.CdcRelay}.
 *
 * <p>The validated, immutable settings of one WAL relay (built by {@code CdcRelay.Builder}).
 *
 * @param jdbcUrl         the URL without user= and password= ({@link DatabaseLogin}); user and password resolved
 * @param producerConfig  the checked producer configuration (defaults, overrides, bootstrap servers)
 * @param maxBatchSize    Debezium's {@code max.batch.size}: events handed to the relay per batch
 * @param maxInFlight     most records handed to the producer and not yet acknowledged
 * @param pollInterval    Debezium's {@code poll.interval.ms}: the longest a lone event waits in its queue
 * @param shutdownTimeout how long {@code close()} waits for the open transaction to finish publishing
 * @param maxAttempts     counted failures of a row's own record before it is parked (RelayOptions.MAX_ATTEMPTS)
 * @param startTimeout    how long start() keeps trying a database that does not answer (RelayOptions.START_TIMEOUT)
 * @param tracing         publish spans ({@link Tracing#OFF}: none)
 */
public record CdcSettings(String jdbcUrl, String user, Secret password, String schema, String slotName,
                          String publicationName, Map<String, Object> producerConfig, TopicRoute route,
                          String instanceId, Duration leaseDuration, boolean deleteAfterPublish,
                          Duration heartbeatInterval, Duration offsetFlushInterval, int maxBatchSize,
                          int maxInFlight, Duration pollInterval, Duration shutdownTimeout, int maxAttempts,
                          Duration startTimeout, MeterRegistry meterRegistry, Clock clock, Tracing tracing) {

    /** Prefix of the logical decoding messages the writer emits in its emit-message mode. */
    public static final String MESSAGE_PREFIX = "outboxkit";

    public CdcSettings {
        Identifiers.requireValid("schema", schema);
        Identifiers.requireValid("slotName", slotName);
        Identifiers.requireValid("publicationName", publicationName);
        producerConfig = Map.copyOf(producerConfig);
        RelayOptions.MAX_ATTEMPTS.check(maxAttempts);
        RelayOptions.START_TIMEOUT.check(startTimeout);
    }

    /** Settings without tracing, with the default maxAttempts and startTimeout. */
    public CdcSettings(String jdbcUrl, String user, Secret password, String schema, String slotName,
                       String publicationName, Map<String, Object> producerConfig, TopicRoute route,
                       String instanceId, Duration leaseDuration, boolean deleteAfterPublish,
                       Duration heartbeatInterval, Duration offsetFlushInterval, int maxBatchSize, int maxInFlight,
                       Duration pollInterval, Duration shutdownTimeout, MeterRegistry meterRegistry, Clock clock) {
        this(jdbcUrl, user, password, schema, slotName, publicationName, producerConfig, route, instanceId, leaseDuration,
                deleteAfterPublish, heartbeatInterval, offsetFlushInterval, maxBatchSize, maxInFlight, pollInterval,
                shutdownTimeout, RelayOptions.MAX_ATTEMPTS.defaultValue(), RelayOptions.START_TIMEOUT.defaultValue(), meterRegistry, clock, Tracing.OFF);
    }

    /** The login of the relay's pool and of Debezium's connections. */
    public DatabaseLogin login() {
        return new DatabaseLogin(jdbcUrl, user, password);
    }

    /** The lease every instance of this relay competes for. */
    public String leaseKey() {
        return "cdc/" + slotName;
    }

    public String outboxTable() {
        return Identifiers.qualified(schema, "outbox_event");
    }

    public String table(String name) {
        return Identifiers.qualified(schema, name);
    }

    /** A masked, one-line description for logs. */
    public String describe() {
        return "slot=" + slotName + " publication=" + publicationName + " schema=" + schema + " db="
                + Secret.maskUrl(jdbcUrl) + " instance=" + instanceId + " deleteAfterPublish=" + deleteAfterPublish;
    }
}
