package dev.outboxkit.relay.poller;

import static dev.outboxkit.relay.RelayOption.Importance.ESSENTIAL;
import static dev.outboxkit.relay.RelayOption.Importance.RARELY_NEEDED;
import static dev.outboxkit.relay.RelayOption.Importance.TUNING;

import dev.outboxkit.relay.RelayOption;
import java.time.Duration;
import java.util.List;

/**
 * The polling relay's own settings, each defined once (see {@link RelayOption}); the builder methods of
 * {@link PollingRelay.Builder} with the same names set them. The settings both relays share are in
 * {@link dev.outboxkit.relay.RelayOptions}. Each option's description is its one doc (see there).
 */
public final class PollerOptions {

    /** Lease units aggregates hash into. */
    public static final RelayOption<Integer> PARTITIONS = RelayOption.integer("partitions", ESSENTIAL, 64, 1, 4096,
            "Number of partitions aggregates hash into: the unit of leases and of parallelism across instances. All "
                    + "instances must use the same value (one that disagrees with the live ones takes no leases).");

    /** Rows per claim. */
    public static final RelayOption<Integer> BATCH_SIZE = RelayOption.integer("batchSize", TUNING, 10_000, 1, 50_000,
            "Rows per claim: larger batches drain a backlog faster and hold about batchSize x (payload + 1 KiB) of "
                    + "memory, twice while a commit runs.");

    /** Wake on NOTIFY. */
    public static final RelayOption<Boolean> LISTEN_NOTIFY = RelayOption.flag("listenNotify", TUNING, false,
            "Wake up on LISTEN outbox_event (fed by the optional outbox_event_notify trigger) instead of waiting for "
                    + "the next poll. Off by default because NOTIFY serialises the writers' commits on one global lock "
                    + "(its cost: docs/performance.md).");

    /** Delete or mark published rows. */
    public static final RelayOption<AfterPublish> AFTER_PUBLISH = RelayOption.choice("afterPublish", RARELY_NEEDED,
            AfterPublish.class, AfterPublish.DELETE, "What happens to a published row: DELETE it, or MARK it "
                    + "(published_at) and keep it for outbox replay. A MARK relay refuses to start without the partial "
                    + "index outbox_event_unpublished.");

    /** Whether an aggregate waits behind a parked event ({@link ParkPolicy}). */
    public static final RelayOption<ParkPolicy> PARK_POLICY = RelayOption.choice("parkPolicy", RARELY_NEEDED,
            ParkPolicy.class, ParkPolicy.CONTINUE, "After a row is parked: CONTINUE publishing its aggregate (poison "
                    + "never blocks) or HOLD_AGGREGATE (its later events wait until the parked one is retried or "
                    + "discarded).");

    /** Longest idle wait. */
    public static final RelayOption<Duration> MAX_POLL_DELAY = RelayOption.duration("maxPollDelay", TUNING,
            Duration.ofMillis(100), Duration.ofMillis(1), Duration.ofMinutes(1),
            "Longest wait between polls when there is nothing to claim: after an empty poll the relay waits 1 ms and "
                    + "doubles the wait up to this (at most 2 ms for a second after rows were found).");

    /** Overlap the next claim with acknowledgements. */
    public static final RelayOption<Boolean> PIPELINE_CLAIMS = RelayOption.flag("pipelineClaims", TUNING, false,
            "Claim the next batch while the current one waits for Kafka's acknowledgements, for brokers that "
                    + "acknowledge slowly compared with a claim (remote ones); with the two slice indexes (relay-poller "
                    + "README, 'Pipelined claims') consecutive claims take alternate halves of the aggregates. Off by "
                    + "default: with a nearby broker it gains little (docs/performance.md).");

    /** Claim loops of an instance whose claimLoops is not set, partitions allowing ({@link #defaultClaimLoops}). */
    private static final int DEFAULT_CLAIM_LOOPS = 2;

    /** Claim loops per instance, each over its own share of the held partitions; unset, {@link #defaultClaimLoops}. */
    public static final RelayOption<Integer> CLAIM_LOOPS = RelayOption.computedInteger("claimLoops", TUNING,
            DEFAULT_CLAIM_LOOPS + ", or partitions when that is fewer", 1, 64,
            "Claim loops per instance, each claiming, publishing and committing its own share of the partitions this "
                    + "instance holds (partition p goes to loop p % claimLoops) on its own connections and producer, so "
                    + "the database stays busy while other loops wait for Kafka; order per aggregate is unchanged. At "
                    + "most partitions; each loop needs 3 connections (drain rate by loops: docs/performance.md).");

    private PollerOptions() {
    }

    /**
     * The claim loops of an instance whose {@link #CLAIM_LOOPS} is not set: two, or {@code partitions} when that is
     * fewer (a relay with one partition runs one loop without being told).
     */
    public static int defaultClaimLoops(int partitions) {
        return Math.min(DEFAULT_CLAIM_LOOPS, partitions);
    }

    /** The polling relay's own settings, in reference order. */
    public static List<RelayOption<?>> all() {
        return List.of(PARTITIONS, BATCH_SIZE, AFTER_PUBLISH, PARK_POLICY, MAX_POLL_DELAY, LISTEN_NOTIFY,
                PIPELINE_CLAIMS, CLAIM_LOOPS);
    }
}
