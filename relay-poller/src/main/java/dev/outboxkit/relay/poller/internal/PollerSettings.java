package dev.outboxkit.relay.poller.internal;

import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.relay.poller.AfterPublish;
import dev.outboxkit.relay.poller.ParkPolicy;
import dev.outboxkit.relay.poller.PollerOptions;
import dev.outboxkit.runtime.LeaseTiming;
import dev.outboxkit.runtime.OptionValues;
import dev.outboxkit.runtime.SharedSettings;
import dev.outboxkit.runtime.Tracing;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Function;
import org.apache.kafka.clients.producer.ProducerConfig;

/**
 * Not API: public for {@code dev.outboxkit.relay.poller.PollingRelay}.
 *
 * <p>The validated, immutable configuration of one polling relay, read by name from its option catalog by {@link #of}:
 * the shared options and what derives from them ({@link SharedSettings}: the lease's timing, the producer
 * configuration, the log prefix), then {@link PollerOptions} and what derives from the lease for the polling relay
 * alone (the heartbeat, the release's lock timeout, the stop's wait, the producer defaults). Each option's meaning and
 * range are documented once, on the option.
 */
public final class PollerSettings extends SharedSettings {

    private final int partitions;
    private final int batchSize;
    private final boolean listenNotify;
    private final AfterPublish afterPublish;
    private final ParkPolicy parkPolicy;
    private final Duration maxPollDelay;
    private final boolean pipelineClaims;
    private final int claimLoops;

    private PollerSettings(OptionValues options, String instanceId,
                           Function<Map<String, ?>, Map<String, Object>> producerConfig, TopicRoute route, Clock clock,
                           Tracing tracing) {
        super(options, instanceId, "poll relay " + instanceId, producerConfig,
                timing -> producerDefaults(timing, instanceId), route, clock, tracing);
        this.partitions = options.get(PollerOptions.PARTITIONS);
        this.batchSize = options.get(PollerOptions.BATCH_SIZE);
        this.listenNotify = options.get(PollerOptions.LISTEN_NOTIFY);
        this.afterPublish = options.get(PollerOptions.AFTER_PUBLISH);
        this.parkPolicy = options.get(PollerOptions.PARK_POLICY);
        this.maxPollDelay = options.get(PollerOptions.MAX_POLL_DELAY);
        this.pipelineClaims = options.get(PollerOptions.PIPELINE_CLAIMS);
        Integer loops = options.get(PollerOptions.CLAIM_LOOPS); // null when not set: the default fits the partitions
        this.claimLoops = loops != null ? loops : PollerOptions.defaultClaimLoops(partitions);
        if (claimLoops > partitions) {
            throw new IllegalArgumentException(PollerOptions.CLAIM_LOOPS.name() + " must be at most "
                    + PollerOptions.PARTITIONS.name() + " (" + partitions + "), got " + claimLoops
                    + ": a loop claims the partitions p with p % " + PollerOptions.CLAIM_LOOPS.name()
                    + " equal to its number, so a loop beyond the partitions would never have work; lower "
                    + PollerOptions.CLAIM_LOOPS.name() + " or raise " + PollerOptions.PARTITIONS.name());
        }
    }

    private static Map<String, ?> producerDefaults(LeaseTiming timing, String instanceId) {
        Map<String, Object> defaults = new LinkedHashMap<>();
        // send() must not block a claim for longer than the batch may wait for its acknowledgements
        defaults.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, Long.toString(timing.maxBlock().toMillis()));
        defaults.put(ProducerConfig.CLIENT_ID_CONFIG, "outboxkit-poll-" + instanceId);
        return defaults;
    }

    /**
     * The configuration of a polling relay.
     *
     * @param options        the builder's option values (set or default, each checked by its option)
     * @param instanceId     this instance's id (the option's value, or the generated default)
     * @param producerConfig completes the relay's producer defaults with the user's overrides and checks them
     * @param route          the route in the chosen record format
     */
    public static PollerSettings of(OptionValues options, String instanceId,
                                    Function<Map<String, ?>, Map<String, Object>> producerConfig, TopicRoute route,
                                    Clock clock, Tracing tracing) {
        return new PollerSettings(options, instanceId, producerConfig, route, clock, tracing);
    }

    /**
     * How often leases and membership are renewed and the partitions rebalanced: the lease's renewal, at most 1 s
     * ({@link dev.outboxkit.runtime.LeaseTiming#heartbeatInterval()}).
     */
    public Duration heartbeatInterval() {
        return timing().heartbeatInterval();
    }

    /**
     * Lock timeout of a lease release: the claims in flight on those partitions hold their locks for up to the
     * acknowledgement budget, plus 2 s for their commit.
     */
    public Duration releaseLockTimeout() {
        return timing().ackBudget().plusSeconds(2);
    }

    /** How long a stop waits for the claim loop: the batch in flight's acknowledgement budget, plus 30 s for its commit. */
    public Duration stopWait() {
        return timing().ackBudget().plusSeconds(30);
    }

    public int partitions() {
        return partitions;
    }

    public int batchSize() {
        return batchSize;
    }

    public boolean listenNotify() {
        return listenNotify;
    }

    public AfterPublish afterPublish() {
        return afterPublish;
    }

    public ParkPolicy parkPolicy() {
        return parkPolicy;
    }

    public Duration maxPollDelay() {
        return maxPollDelay;
    }

    public boolean pipelineClaims() {
        return pipelineClaims;
    }

    public int claimLoops() {
        return claimLoops;
    }
}
