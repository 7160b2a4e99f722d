package dev.outboxkit.relay.poller.internal;

import dev.outboxkit.runtime.LeaseTiming;
import java.time.Clock;
import java.time.Duration;

/**
 * Not API: public for {@code dev.outboxkit.relay.poller.PollingRelay}.
 *
 * <p>What a claim needs to know ({@link Claimer}), read once from the relay's settings.
 *
 * @param instanceId   the lease holder the claim re-checks each lease against
 * @param batchSize    rows per claim
 * @param maxPollDelay the longest wait between two claims that found nothing
 * @param timing       the claim transaction's timeouts (idle in transaction, statement and lock)
 * @param clock        the clock of the batch's records
 */
public record ClaimTerms(String instanceId, int batchSize, Duration maxPollDelay, LeaseTiming timing, Clock clock) {
}
