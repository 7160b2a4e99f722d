package dev.outboxkit.relay.poller.internal;

import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.core.internal.Tracing;
import dev.outboxkit.relay.poller.AfterPublish;
import dev.outboxkit.relay.poller.ParkPolicy;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;

/**
 * Not API: public for {@code dev.outboxkit.relay.poller.PollingRelay}.
 *
 * <p>The validated, immutable settings of one polling relay (built by {@code PollingRelay.Builder}).
 *
 * @param producerConfig the checked Kafka producer configuration (defaults, then overrides)
 * @param startTimeout   how long start() keeps trying a database that does not answer (RelayOptions.START_TIMEOUT)
 * @param tracing        publish spans ({@link Tracing#OFF}: none)
 */
public record PollerSettings(
        String schema,
        Map<String, Object> producerConfig,
        TopicRoute route,
        int partitions,
        String instanceId,
        Duration leaseDuration,
        int batchSize,
        boolean listenNotify,
        AfterPublish afterPublish,
        ParkPolicy parkPolicy,
        int maxAttempts,
        Duration startTimeout,
        Duration maxPollDelay,
        boolean pipelineClaims,
        Clock clock,
        Tracing tracing) {

    /** How often leases and membership are renewed: a third of the lease. */
    public Duration heartbeatInterval() {
        return leaseDuration.dividedBy(3);
    }

    /**
     * How long a batch waits for Kafka's acknowledgements before it is given up (rows restored,
     * retried later): a third of the lease, so even the claim that waits behind it finishes
     * before the server-side transaction timeout that frees the locks of a stalled instance.
     */
    public Duration ackTimeout() {
        return leaseDuration.dividedBy(3);
    }

    /**
     * {@code idle_in_transaction_session_timeout} of the relay's claim transactions: a relay that
     * stalls (GC pause, SIGSTOP) with a claim open has that transaction ended by the server, so its
     * rows and lease locks go to the next holder.
     */
    public Duration idleTransactionTimeout() {
        return leaseDuration;
    }
}
