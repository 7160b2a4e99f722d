package dev.outboxkit.relay;

import java.util.Arrays;
import java.util.List;
import java.util.Set;

/**
 * The catalog of the relays' meters (Micrometer names; Prometheus adds {@code _total}, {@code _seconds} and the base
 * unit as usual: {@code outbox_relay_published_total}, {@code outbox_relay_backlog_rows}). Every meter is tagged {@code relay=poll} or {@code relay=cdc}; the CDC relay's also carry
 * {@code slot}. Both relays register their meters from this list, so a name means the same in both and a dashboard or
 * alert can be checked against it.
 */
public enum RelayMetric {

    PUBLISHED("outbox.relay.published", Kind.COUNTER, "", Relays.BOTH,
            "Events whose Kafka record was acknowledged"),
    DEAD_LETTERED("outbox.relay.dead_lettered", Kind.COUNTER, "", Relays.BOTH,
            "Events parked in outbox_dead_letter because Kafka (or the record mapping) refused them for good"),
    BATCH_SIZE("outbox.relay.batch.size", Kind.SUMMARY, "", Relays.BOTH,
            "Events per published batch"),
    COMMIT_TO_ACK("outbox.relay.commit_to_ack", Kind.TIMER, "seconds", Relays.BOTH,
            "From the event's created_at to Kafka's acknowledgement of its record"),
    KAFKA_REACHABLE("outbox.relay.kafka.reachable", Kind.GAUGE, "", Relays.BOTH,
            "1 while Kafka answers the relay's reachability probe (describeCluster), else 0 (the relay is not ready)"),
    KAFKA_ACK_SILENCE("outbox.relay.kafka.ack_silence", Kind.GAUGE, "seconds", Relays.BOTH,
            "How long Kafka has acknowledged none of the records waiting for it (0 while acknowledgements flow or "
                    + "nothing waits); from 5 s the relay is not ready"),
    FENCE_REJECTIONS("outbox.relay.fence.rejections", Kind.COUNTER, "", Relays.BOTH,
            "Claims, commits, renewals or offset writes refused because this instance no longer held the lease"),
    TAKEOVERS("outbox.relay.takeovers", Kind.COUNTER, "", Relays.BOTH,
            "Leases this instance took from another holder, tagged reason: holder_gone (its database session closed, "
                    + "e.g. kill -9: taken at once), expired (not renewed in time: frozen, cut off, or a lost node), "
                    + "same_instance (an earlier process under this instance id)"),
    BACKLOG("outbox.relay.backlog", Kind.GAUGE, "rows", Relays.POLL,
            "Unpublished rows in outbox_event (all partitions; -1 until first measured)"),
    OLDEST_UNPUBLISHED_AGE("outbox.relay.oldest_unpublished_age_seconds", Kind.GAUGE, "seconds", Relays.POLL,
            "Age of the oldest unpublished row (0 when there is none)"),
    LEASES_HELD("outbox.relay.leases.held", Kind.GAUGE, "", Relays.POLL,
            "Partition leases this instance holds"),
    REBALANCES("outbox.relay.rebalances", Kind.COUNTER, "", Relays.POLL,
            "Changes of the set of partitions this instance holds"),
    RETRIES("outbox.relay.retries", Kind.COUNTER, "", Relays.POLL,
            "Batches given back after a retriable Kafka or database failure"),
    REPLAY_SKIPPED("outbox.relay.cdc.replay_skipped", Kind.COUNTER, "", Relays.CDC,
            "WAL events not published again because the start-up drain already did"),
    SLOT_LAG("outbox.relay.cdc.slot_lag_bytes", Kind.GAUGE, "bytes", Relays.CDC,
            "WAL between the server's current position and the slot's confirmed_flush_lsn"),
    RETAINED_WAL("outbox.relay.cdc.retained_wal_bytes", Kind.GAUGE, "bytes", Relays.CDC,
            "WAL the slot keeps on disk (current position minus restart_lsn)"),
    WAL_STATUS("outbox.relay.cdc.wal_status", Kind.GAUGE, "", Relays.CDC,
            "Slot wal_status: 0 reserved, 1 extended, 2 unreserved, 3 lost, -1 no slot"),
    OLDEST_UNACKED_AGE("outbox.relay.cdc.oldest_unacked_age_seconds", Kind.GAUGE, "seconds", Relays.CDC,
            "Age of the oldest event not yet acknowledged by Kafka (0 when none)"),
    ACTIVE("outbox.relay.cdc.active", Kind.GAUGE, "", Relays.CDC,
            "1 while this instance holds the lease and streams, 0 as standby"),
    SLOT_RECREATED("outbox.relay.cdc.slot_recreated", Kind.COUNTER, "", Relays.CDC,
            "Times this instance created its slot again (or adopted the copy a failover left) because no event could be "
                    + "lost by it, tagged reason: missing (dropped, or a promoted standby without it), invalidated "
                    + "(max_slot_wal_keep_size), ahead (a copy past the stored offset after a failover)"),
    SLOT_FAILOVER_READY("outbox.relay.cdc.slot_failover_ready", Kind.GAUGE, "", Relays.CDC,
            "1 when a promoted standby would have the slot, as far as the primary can tell (a failover slot, "
                    + "synchronized_standby_slots set and every standby named there streaming), 0 when not, -1 before "
                    + "PostgreSQL 17 (no failover slots: the relay creates the slot again after a promotion)");

    /** What kind of Micrometer meter it is. */
    public enum Kind { COUNTER, GAUGE, TIMER, SUMMARY }

    /** The {@code relay} tag values: {@code poll} and {@code cdc}. */
    public static final String POLL = "poll";
    public static final String CDC = "cdc";

    /** Which relays register a meter (a holder class: enum constants cannot use the enum's own static fields). */
    private static final class Relays {
        static final Set<String> POLL = Set.of("poll");
        static final Set<String> CDC = Set.of("cdc");
        static final Set<String> BOTH = Set.of("poll", "cdc");
    }

    private final String meterName;
    private final Kind kind;
    private final String baseUnit;
    private final Set<String> relays;
    private final String description;

    RelayMetric(String meterName, Kind kind, String baseUnit, Set<String> relays, String description) {
        this.meterName = meterName;
        this.kind = kind;
        this.baseUnit = baseUnit;
        this.relays = relays;
        this.description = description;
    }

    /** The Micrometer name, for example {@code outbox.relay.published}. */
    public String meterName() {
        return meterName;
    }

    public Kind kind() {
        return kind;
    }

    /** Micrometer base unit (Prometheus appends it to the name); empty for counts and codes. */
    public String baseUnit() {
        return baseUnit;
    }

    public String description() {
        return description;
    }

    /** Whether the relay with this {@code relay} tag value ({@link #POLL}, {@link #CDC}) registers it. */
    public boolean registeredBy(String relay) {
        return relays.contains(relay);
    }

    /** The meters one relay registers. */
    public static List<RelayMetric> of(String relay) {
        return Arrays.stream(values()).filter(m -> m.registeredBy(relay)).toList();
    }
}
