package dev.outboxkit.ops.admin;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One reading of an outbox, as {@code outbox status} prints it. Ages and lease expiries are measured by the
 * database clock at the moment of reading.
 *
 * @param schema                the schema read
 * @param backlog               unpublished events ({@code outbox_event} rows with {@code published_at} NULL)
 * @param oldestUnpublishedAge  how long ago the oldest of them was created; null when the backlog is empty
 * @param backlogByTopic        the backlog by explicit topic and aggregate type, largest first
 * @param deadLetters           parked rows in {@code outbox_dead_letter}
 * @param leases                every row of the relay lease table, by key
 * @param replicationSlots      the logical replication slots of the database, by name
 */
public record Status(String schema, long backlog, Duration oldestUnpublishedAge, List<Backlog> backlogByTopic,
                     long deadLetters, List<Lease> leases, List<ReplicationSlot> replicationSlots) {

    public Status {
        backlogByTopic = List.copyOf(backlogByTopic);
        leases = List.copyOf(leases);
        replicationSlots = List.copyOf(replicationSlots);
    }

    /**
     * Unpublished events of one destination.
     *
     * @param topic         the rows' own {@code topic}; null for rows the relay routes by its route template
     * @param aggregateType their aggregate type
     * @param events        how many
     * @param oldestAge     how long ago the oldest was created
     */
    public record Backlog(String topic, String aggregateType, long events, Duration oldestAge) {
    }

    /**
     * A relay lease (a partition of the polling relay, or the CDC relay's slot).
     *
     * @param key       the lease key
     * @param holder    the instance that holds or last held it
     * @param fence     its fencing token: writes under an older token are refused
     * @param valid     not expired: the holder may act under it
     * @param expiresIn time left until it expires (negative once expired)
     */
    public record Lease(String key, String holder, long fence, boolean valid, Duration expiresIn) {
    }

    /**
     * A logical replication slot of the database.
     *
     * @param name      the slot
     * @param active    a client streams it now
     * @param walStatus PostgreSQL's {@code wal_status} ({@code reserved}, {@code extended}, {@code unreserved}, {@code lost})
     * @param lagBytes  WAL written since the position the client confirmed; null when unknown
     */
    public record ReplicationSlot(String name, boolean active, String walStatus, Long lagBytes) {
    }

    /** Valid leases per holder, in lease-key order of first appearance. */
    public Map<String, Integer> validLeasesByHolder() {
        Map<String, Integer> byHolder = new LinkedHashMap<>();
        for (Lease l : leases) {
            if (l.valid()) {
                byHolder.merge(l.holder(), 1, Integer::sum);
            }
        }
        return byHolder;
    }

    /** Leases past their expiry: free for any instance to take. */
    public long expiredLeases() {
        return leases.stream().filter(l -> !l.valid()).count();
    }
}
