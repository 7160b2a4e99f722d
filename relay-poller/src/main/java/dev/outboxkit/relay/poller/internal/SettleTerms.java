package dev.outboxkit.relay.poller.internal;

import dev.outboxkit.relay.poller.AfterPublish;
import java.util.Map;

/**
 * Not API: public for {@code dev.outboxkit.relay.poller.PollingRelay}.
 *
 * <p>What ending a batch needs to know ({@link Settlement}), read once from the relay's settings.
 *
 * @param instanceId     the lease holder the commit's fence check names, and the parker of dead letters
 * @param logPrefix      how the log names this relay
 * @param schema         the schema of the dead-letter table
 * @param afterPublish   whether published rows are deleted or marked
 * @param maxAttempts    attempts after which a row Kafka keeps refusing is parked
 * @param producerConfig the producer's configuration, for the operator's hint on a refused write
 */
public record SettleTerms(String instanceId, String logPrefix, String schema, AfterPublish afterPublish,
                          int maxAttempts, Map<String, Object> producerConfig) {
}
