package dev.outboxkit.relay.poller;

import dev.outboxkit.core.RelayOption;
import java.time.Duration;
import java.util.List;

/**
 * The polling relay's own settings, each defined once (see {@link RelayOption}); the builder methods of
 * {@link PollingRelay.Builder} with the same names set them. The settings both relays share are in
 * {@link dev.outboxkit.core.RelayOptions}. Each option's description is its one doc (see there).
 */
public final class PollerOptions {

    /** Lease units aggregates hash into. */
    public static final RelayOption<Integer> PARTITIONS = RelayOption.integer("partitions", 64, 1, 4096,
            "Number of partitions aggregates hash into: the unit of leases and of parallelism across instances. All "
                    + "instances must use the same value (one that disagrees with the live ones takes no leases).");

    /** Rows per claim. */
    public static final RelayOption<Integer> BATCH_SIZE = RelayOption.integer("batchSize", 10_000, 1, 50_000,
            "Rows per claim. Larger batches drain a backlog faster and hold about batchSize x (payload + 1 KiB) of "
                    + "memory, twice while a commit runs (measured: docs/performance.md, relay-poller).");

    /** Wake on NOTIFY. */
    public static final RelayOption<Boolean> LISTEN_NOTIFY = RelayOption.flag("listenNotify", false,
            "Wake up on LISTEN outbox_event instead of waiting for the next poll. Off by default: NOTIFY serialises the "
                    + "writers' commits on one global lock, which costs concurrent writers much of their commit rate "
                    + "(measured: docs/performance.md, outbox-writer). Needs the outbox_event_notify trigger.");

    /** Delete or mark published rows. */
    public static final RelayOption<AfterPublish> AFTER_PUBLISH = RelayOption.choice("afterPublish", AfterPublish.class,
            AfterPublish.DELETE, "What happens to a published row: DELETE it, or MARK it (published_at) and keep it.");

    /** Whether an aggregate waits behind a parked event ({@link ParkPolicy}). */
    public static final RelayOption<ParkPolicy> PARK_POLICY = RelayOption.choice("parkPolicy", ParkPolicy.class,
            ParkPolicy.CONTINUE, "After a row is parked: CONTINUE publishing its aggregate (poison never blocks) or "
                    + "HOLD_AGGREGATE (its later events wait until the parked one is retried or discarded).");

    /** Longest idle wait. */
    public static final RelayOption<Duration> MAX_POLL_DELAY = RelayOption.duration("maxPollDelay",
            Duration.ofMillis(100), Duration.ofMillis(1), Duration.ofMinutes(1),
            "Longest wait between polls when idle: after an empty poll the relay waits 1 ms, then doubles up to this.");

    /** Overlap the next claim with acknowledgements. */
    public static final RelayOption<Boolean> PIPELINE_CLAIMS = RelayOption.flag("pipelineClaims", false,
            "Claim the next batch while the current one waits for Kafka's acknowledgements. Off by default: with a "
                    + "nearby broker it gains little (measured: docs/performance.md, 'Pipelined claims'). With the two "
                    + "slice indexes (relay-poller README, 'Pipelined claims') consecutive claims take alternate halves of "
                    + "the aggregates and never step over the locked rows of the batch in flight. Turn it on when "
                    + "acknowledgements are slow compared with a claim (remote brokers).");

    /** Claim loops of an instance whose claimLoops is not set, partitions allowing ({@link #defaultClaimLoops}). */
    private static final int DEFAULT_CLAIM_LOOPS = 2;

    /** Claim loops per instance, each over its own share of the held partitions; unset, {@link #defaultClaimLoops}. */
    public static final RelayOption<Integer> CLAIM_LOOPS = RelayOption.computedInteger("claimLoops",
            DEFAULT_CLAIM_LOOPS + ", or partitions when that is fewer", 1, 64,
            "Claim loops per instance: each claims, publishes and commits the rows of its own share of the partitions "
                    + "this instance holds (partition p goes to loop p % claimLoops), on its own connection and producer, "
                    + "so one instance keeps the database busy while other loops wait for Kafka. Order per aggregate is "
                    + "unchanged (an aggregate is in one partition, a partition in one loop). By default "
                    + DEFAULT_CLAIM_LOOPS + ": one loop drains at about 0.7 of the database's claim/delete ceiling, two "
                    + "at about 0.9 (measured: "
                    + "docs/performance.md, 'Claim loops'). At most partitions; each loop needs 3 connections and polls "
                    + "on its own when idle.");

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
