package dev.outboxkit.ops.admin;

import java.time.Duration;
import java.time.Instant;

/**
 * A relay instance as it reported itself in {@code outbox_relay_report} (schema version 13): every instance of both
 * relays, the polling relay's and the CDC relay's, holder or standby, rewrites its row about once a second while it
 * runs and deletes it when it stops cleanly. Ages are measured by the database's clock.
 *
 * @param instanceId       the instance id (the holder the lease table names)
 * @param relay            {@code poll} (relay-poller) or {@code cdc} (relay-debezium)
 * @param host             the host it runs on, as it sees it; null when it could not tell
 * @param startedAt        when it started (its own clock)
 * @param reportAge        how long ago it last wrote its row
 * @param alive            its row has not expired; an expired row belongs to an instance that crashed, froze or lost the
 *                         database (it is deleted a day later)
 * @param ready            whether it was ready when it wrote the row (could publish now, or stands by ready to take over)
 * @param problem          why it was not ready (its health detail, at most 300 characters); null when ready
 * @param published        events it published (Kafka acknowledged) since it started
 * @param lastPublishedAge how long ago it last published; null when it has not yet
 */
public record RelayReport(String instanceId, String relay, String host, Instant startedAt, Duration reportAge,
                          boolean alive, boolean ready, String problem, long published, Duration lastPublishedAge) {
}
