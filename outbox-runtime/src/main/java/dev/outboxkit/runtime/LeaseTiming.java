package dev.outboxkit.runtime;

import java.time.Duration;
import java.util.Objects;

/**
 * Not API: shared by both relays.
 *
 * <p>Every duration a relay derives from its lease ({@code RelayOptions.LEASE_DURATION}), each in one place with the
 * reason for its ratio. A relay builds one from the validated option and hands it (or the single value a class needs)
 * to its parts; no other class divides or multiplies the lease. Immutable.
 */
public record LeaseTiming(Duration lease) {

    /**
     * How often an instance looks whether a lease holder's process is gone or a lease was given back (a read of the
     * lease row and of {@code pg_locks}, no lock): a crashed holder is replaced within about this long after the
     * server closed its session. Not derived from the lease: a handoff should cost milliseconds whatever the lease.
     */
    public static final Duration LIVENESS_LOOK = Duration.ofMillis(200);

    /** Floor of {@link #renewInterval()}: a lease shorter than the option allows (tests) must not make renewal spin. */
    static final Duration MIN_RENEW_INTERVAL = Duration.ofMillis(100);
    /** Bounds of {@link #maxBlock()}. */
    static final Duration MIN_MAX_BLOCK = Duration.ofSeconds(1);
    static final Duration MAX_MAX_BLOCK = Duration.ofSeconds(10);
    /** Floor of {@link #stallAfter()}. */
    static final Duration MIN_STALL = Duration.ofSeconds(10);
    /** Ceiling of {@link #heartbeatInterval()}. */
    static final Duration MAX_HEARTBEAT_INTERVAL = Duration.ofSeconds(1);

    /** @param lease how long a lease lasts without renewal (the option checked its range already) */
    public LeaseTiming {
        Objects.requireNonNull(lease, "lease");
        if (lease.isZero() || lease.isNegative()) {
            throw new IllegalArgumentException("leaseDuration must be positive, got " + lease);
        }
    }

    /**
     * How often a held lease is renewed: a third of the lease (at least 100 ms), so two renewals in a row may fail (a
     * GC pause, a database blip) and the third still comes before the lease runs out.
     */
    public Duration renewInterval() {
        Duration third = lease.dividedBy(3);
        return third.compareTo(MIN_RENEW_INTERVAL) < 0 ? MIN_RENEW_INTERVAL : third;
    }

    /**
     * How often an instance tells the others it is there: the polling relay's heartbeat (membership renewal and
     * rebalance) and both relays' reports ({@link RelayReports}): the renewal, at most 1 s, so joins, leaves and a
     * change of readiness are seen within a second.
     */
    public Duration heartbeatInterval() {
        Duration renew = renewInterval();
        return renew.compareTo(MAX_HEARTBEAT_INTERVAL) < 0 ? renew : MAX_HEARTBEAT_INTERVAL;
    }

    /**
     * How long a relay instance's report counts after it was written: the lease (and at least three heartbeats), so a
     * report outlives an instance that stopped writing it (crashed, frozen, cut off) about as long as its leases do.
     */
    public Duration reportLifetime() {
        Duration beats = heartbeatInterval().multipliedBy(3);
        return beats.compareTo(lease) > 0 ? beats : lease;
    }

    /**
     * How long a batch waits for Kafka's acknowledgements before it is given up (rows restored, retried later), and
     * the statement timeout of a claim: a third of the lease, so even the claim that waits behind a batch finishes
     * well before {@link #idleTransactionTimeout()} ends the transaction of a stalled instance.
     */
    public Duration ackBudget() {
        return lease.dividedBy(3);
    }

    /**
     * {@code idle_in_transaction_session_timeout} of claim transactions: the lease, so a relay that stalls with a
     * claim open (GC pause, SIGSTOP) has that transaction ended by the server when its lease would have run out
     * anyway, and its rows and lease locks go to the next holder.
     */
    public Duration idleTransactionTimeout() {
        return lease;
    }

    /**
     * The producer's {@code max.block.ms}: {@code send()} must not block a claim for longer than the batch may wait
     * for its acknowledgements ({@link #ackBudget()}), kept between 1 s (metadata of a new topic needs a round
     * trip) and 10 s (a long lease must not let a missing topic hold a batch for minutes).
     */
    public Duration maxBlock() {
        Duration budget = ackBudget();
        return budget.compareTo(MIN_MAX_BLOCK) < 0 ? MIN_MAX_BLOCK
                : budget.compareTo(MAX_MAX_BLOCK) > 0 ? MAX_MAX_BLOCK : budget;
    }

    /**
     * How long readiness tolerates no successful round trip to the database: {@link DatabaseSilence#LIMIT}, or the
     * lease when that is shorter (a relay that renews more often than every second notices sooner).
     */
    public Duration databaseSilence() {
        return lease.compareTo(DatabaseSilence.LIMIT) < 0 ? lease : DatabaseSilence.LIMIT;
    }

    /**
     * When an active relay counts as stalled (events waiting, nothing acknowledged): twice the lease, at least 10 s,
     * far beyond a healthy relay's gap between acknowledgements under load.
     */
    public Duration stallAfter() {
        Duration twice = lease.multipliedBy(2);
        return twice.compareTo(MIN_STALL) < 0 ? MIN_STALL : twice;
    }
}
