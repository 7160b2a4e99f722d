package dev.outboxkit.relay.poller.internal;

import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.relay.poller.ParkPolicy;
import dev.outboxkit.runtime.Tracing;

/**
 * Not API: public for {@code dev.outboxkit.relay.poller.PollingRelay}.
 *
 * <p>What a claim loop needs to know ({@link ClaimLoop}), read once from the relay's settings, with what its claims
 * and its settlements need.
 *
 * @param logPrefix      how the log names this relay
 * @param claimLoops     how many claim loops share the held partitions
 * @param pipelineClaims whether the next batch is claimed while one waits for Kafka
 * @param parkPolicy     whether a parked row holds back its aggregate's later rows
 * @param route          where each event's record goes
 * @param tracing        the records' tracing
 * @param claims         what each claim needs
 * @param settlement     what ending each batch needs
 */
public record LoopTerms(String logPrefix, int claimLoops, boolean pipelineClaims, ParkPolicy parkPolicy,
                        TopicRoute route, Tracing tracing, ClaimTerms claims, SettleTerms settlement) {
}
