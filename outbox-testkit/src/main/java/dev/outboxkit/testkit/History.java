package dev.outboxkit.testkit;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * A Jepsen-style history of one end-to-end run, shared by every such test: what writers
 * committed (or could not tell), what Kafka delivered, what consumers applied. {@link #check()}
 * compares the sets after the faults healed and the system drained. Thread-safe.
 *
 * <p>Order: per aggregate, intents are numbered in commit order ({@link #committed}); the first
 * applications of an aggregate's events must follow that numbering, and so must their first
 * publications in the topic when deliveries are recorded with their aggregate
 * ({@link #delivered(UUID, String)}, in partition order): guarantee G3 checked at Kafka itself, not
 * only through a consumer.
 */
public final class History {

    private record Intent(String aggregate, long order, boolean inDoubt) {
    }

    private final Map<UUID, Intent> intents = new HashMap<>();
    private final Map<UUID, Integer> deliveries = new HashMap<>();
    private final Map<UUID, Integer> applications = new HashMap<>();
    /** First applications, per aggregate, in the order they happened. */
    private final Map<String, List<UUID>> appliedOrder = new LinkedHashMap<>();
    /** First publications, per aggregate, in partition order (only deliveries recorded with their aggregate). */
    private final Map<String, List<UUID>> publishedOrder = new LinkedHashMap<>();
    private final Set<UUID> rolledBack = new HashSet<>();
    private long deliveryCount;

    /** A writer's transaction with this event committed; {@code order} is its place among the aggregate's commits. */
    public synchronized void committed(UUID eventId, String aggregate, long order) {
        intents.put(eventId, new Intent(aggregate, order, false));
    }

    /** The commit's outcome is unknown (connection lost around COMMIT): it may or may not exist. */
    public synchronized void inDoubt(UUID eventId, String aggregate, long order) {
        intents.put(eventId, new Intent(aggregate, order, true));
    }

    /** Known not committed (rolled back): must never be applied. */
    public synchronized void rolledBack(UUID eventId) {
        rolledBack.add(eventId);
    }

    /** Kafka delivered a record with this id (duplicates allowed and counted). */
    public synchronized void delivered(UUID eventId) {
        deliveries.merge(eventId, 1, Integer::sum);
        deliveryCount++;
    }

    /**
     * Kafka delivered a record with this id, keyed by {@code aggregate}: call in partition order (as a
     * consumer reads one partition), so the first publications of each aggregate are checked for commit
     * order too ({@link Report#publicationOrderViolations}).
     */
    public synchronized void delivered(UUID eventId, String aggregate) {
        if (!deliveries.containsKey(eventId)) {
            publishedOrder.computeIfAbsent(aggregate, a -> new ArrayList<>()).add(eventId);
        }
        delivered(eventId);
    }

    /** A consumer applied this event's effect (call in the order effects were applied). */
    public synchronized void applied(UUID eventId, String aggregate) {
        int times = applications.merge(eventId, 1, Integer::sum);
        if (times == 1) {
            appliedOrder.computeIfAbsent(aggregate, a -> new ArrayList<>()).add(eventId);
        }
    }

    public synchronized Report check() {
        List<UUID> lost = new ArrayList<>();
        int inDoubt = 0;
        int inDoubtApplied = 0;
        for (Map.Entry<UUID, Intent> e : intents.entrySet()) {
            boolean wasApplied = applications.containsKey(e.getKey());
            if (e.getValue().inDoubt()) {
                inDoubt++;
                if (wasApplied) {
                    inDoubtApplied++;
                }
            } else if (!wasApplied) {
                lost.add(e.getKey());
            }
        }
        List<UUID> unexpected = new ArrayList<>();
        for (UUID applied : applications.keySet()) {
            if (!intents.containsKey(applied) || rolledBack.contains(applied)) {
                unexpected.add(applied);
            }
        }
        int duplicateEffects = 0;
        for (int times : applications.values()) {
            duplicateEffects += times - 1;
        }
        long duplicateDeliveries = deliveryCount - deliveries.size();
        return new Report(intents.size(), inDoubt, inDoubtApplied, deliveryCount, duplicateDeliveries,
                applications.size(), lost.size(), unexpected.size(), duplicateEffects, orderViolations(appliedOrder),
                orderViolations(publishedOrder), lost.stream().limit(10).toList(), unexpected.stream().limit(10).toList());
    }

    /** Events that came after a later commit of their aggregate, in each aggregate's sequence of first sightings. */
    private int orderViolations(Map<String, List<UUID>> firstSeen) {
        int violations = 0;
        for (List<UUID> ids : firstSeen.values()) {
            long previous = Long.MIN_VALUE;
            for (UUID id : ids) {
                Intent intent = intents.get(id);
                if (intent == null) {
                    continue;
                }
                if (intent.order() < previous) {
                    violations++;
                }
                previous = Math.max(previous, intent.order());
            }
        }
        return violations;
    }

    /**
     * The verdict. {@link #ok()} needs lost, unexpected, duplicate effects and order violations (of first
     * applications, and of first publications where deliveries were recorded with their aggregate) all zero;
     * duplicate deliveries are allowed (at least once) and only counted.
     */
    public record Report(int intents, int inDoubt, int inDoubtApplied, long deliveries, long duplicateDeliveries,
                         int applied, int lost, int unexpected, int duplicateEffects, int orderViolations,
                         int publicationOrderViolations, List<UUID> lostSample, List<UUID> unexpectedSample) {

        /** A report without publication order (deliveries recorded without their aggregate). */
        public Report(int intents, int inDoubt, int inDoubtApplied, long deliveries, long duplicateDeliveries,
                      int applied, int lost, int unexpected, int duplicateEffects, int orderViolations,
                      List<UUID> lostSample, List<UUID> unexpectedSample) {
            this(intents, inDoubt, inDoubtApplied, deliveries, duplicateDeliveries, applied, lost, unexpected,
                    duplicateEffects, orderViolations, 0, lostSample, unexpectedSample);
        }

        public boolean ok() {
            return lost == 0 && unexpected == 0 && duplicateEffects == 0 && orderViolations == 0
                    && publicationOrderViolations == 0;
        }

        public String summary() {
            return String.format("intents=%d (in doubt %d, of them applied %d) deliveries=%d duplicateDeliveries=%d "
                            + "applied=%d lost=%d unexpected=%d duplicateEffects=%d orderViolations=%d "
                            + "publicationOrderViolations=%d%s%s",
                    intents, inDoubt, inDoubtApplied, deliveries, duplicateDeliveries, applied, lost, unexpected,
                    duplicateEffects, orderViolations, publicationOrderViolations,
                    lostSample.isEmpty() ? "" : " lostSample=" + lostSample,
                    unexpectedSample.isEmpty() ? "" : " unexpectedSample=" + unexpectedSample);
        }

        @Override
        public String toString() {
            return summary();
        }
    }
}
