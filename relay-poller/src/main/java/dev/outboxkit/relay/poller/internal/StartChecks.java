package dev.outboxkit.relay.poller.internal;

import dev.outboxkit.relay.poller.AfterPublish;
import dev.outboxkit.relay.poller.ParkPolicy;
import java.time.Duration;

/**
 * Not API: public for {@code dev.outboxkit.relay.poller.PollingRelay}.
 *
 * <p>What the {@link Supervisor}'s start-up checks hold the database to, read once from the relay's settings, and what
 * the relay's statements ({@link PollerSql}) are built from.
 *
 * @param startTimeout      how long the start waits for the database
 * @param schema            the schema of the outbox tables
 * @param partitions        the partition count (the statements hash rows into it)
 * @param afterPublish      whether published rows are deleted or marked (MARK needs the unpublished index)
 * @param parkPolicy        whether a parked row holds back its aggregate's later rows
 * @param listenNotify      whether the relay listens for the outbox trigger's notifications (it needs the trigger)
 * @param maxPollDelay      the longest wait between two polls (what a relay without notifications falls back to)
 * @param connectionsNeeded the connections the relay needs from a pool it is given
 */
public record StartChecks(Duration startTimeout, String schema, int partitions, AfterPublish afterPublish,
                          ParkPolicy parkPolicy, boolean listenNotify, Duration maxPollDelay, int connectionsNeeded) {
}
