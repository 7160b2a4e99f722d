package dev.outboxkit.ops.admin;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One reading of an outbox, as {@code outbox status} prints it. Ages and lease expiries are measured by the
 * database clock at the moment of reading.
 *
 * <p>Bounded: reading a status costs the same on a backlog of ten million events as on one of ten. The backlog is
 * counted exactly up to {@link #EXACT_BACKLOG_LIMIT} events; above that {@link #backlog()} is the planner's estimate
 * ({@link #backlogExact()} false) and {@link #backlogByTopic()} covers the oldest {@value #EXACT_BACKLOG_LIMIT} events
 * only (the head of the queue, the events the relay publishes next).
 *
 * @param schema                the schema read
 * @param backlog               unpublished events ({@code outbox_event} rows with {@code published_at} NULL): exact, or
 *                              the planner's estimate when {@code backlogExact} is false
 * @param backlogExact          true when {@code backlog} is a count, false when it is an estimate (more than
 *                              {@value #EXACT_BACKLOG_LIMIT} events)
 * @param oldestUnpublishedAge  how long ago the oldest of them was created; null when the backlog is empty
 * @param backlogByTopic        the backlog by explicit topic and aggregate type, largest first: every unpublished event
 *                              when {@code backlogExact}, otherwise the oldest {@value #EXACT_BACKLOG_LIMIT} in seq order
 * @param deadLetters           parked rows in {@code outbox_dead_letter}
 * @param leases                every row of the relay lease table, by key
 * @param replicationSlots      the logical replication slots of the database, by name
 */
public record Status(String schema, long backlog, boolean backlogExact, Duration oldestUnpublishedAge,
                     List<Backlog> backlogByTopic, long deadLetters, List<Lease> leases,
                     List<ReplicationSlot> replicationSlots) {

    /** Up to this many unpublished events the backlog is counted exactly; above it, estimated. */
    public static final int EXACT_BACKLOG_LIMIT = 100_000;

    public Status {
        backlogByTopic = List.copyOf(backlogByTopic);
        leases = List.copyOf(leases);
        replicationSlots = List.copyOf(replicationSlots);
    }

    /** A status whose backlog is an exact count. */
    public Status(String schema, long backlog, Duration oldestUnpublishedAge, List<Backlog> backlogByTopic,
                  long deadLetters, List<Lease> leases, List<ReplicationSlot> replicationSlots) {
        this(schema, backlog, true, oldestUnpublishedAge, backlogByTopic, deadLetters, leases, replicationSlots);
    }

    /**
     * Unpublished events of one destination.
     *
     * @param topic         the rows' own {@code topic}; null for rows the relay routes by its route template
     * @param aggregateType their aggregate type
     * @param events        how many (of the oldest {@value Status#EXACT_BACKLOG_LIMIT} when the backlog is estimated)
     * @param oldestAge     how long ago the oldest of them was created
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
     * @param lagBytes      WAL written since the position the client confirmed; null when unknown
     * @param retainedBytes WAL the server keeps for the slot (written since its restart position): what fills the
     *                      disk while the slot is not consumed; null when unknown
     */
    public record ReplicationSlot(String name, boolean active, String walStatus, Long lagBytes, Long retainedBytes) {

        /** A slot whose retained WAL is not known. */
        public ReplicationSlot(String name, boolean active, String walStatus, Long lagBytes) {
            this(name, active, walStatus, lagBytes, null);
        }
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
