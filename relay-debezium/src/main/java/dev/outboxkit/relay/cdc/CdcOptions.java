package dev.outboxkit.relay.cdc;

import static dev.outboxkit.relay.RelayOption.Importance.ESSENTIAL;
import static dev.outboxkit.relay.RelayOption.Importance.RARELY_NEEDED;
import static dev.outboxkit.relay.RelayOption.Importance.TUNING;

import dev.outboxkit.relay.RelayOption;
import java.time.Duration;
import java.util.List;

/**
 * The CDC relay's own settings, each defined once (see {@link RelayOption}); the builder methods of
 * {@link CdcRelay.Builder} with the same names set them. The settings both relays share are in
 * {@link dev.outboxkit.relay.RelayOptions}. Each option's description is its one doc (see there).
 */
public final class CdcOptions {

    /** The replication slot. */
    public static final RelayOption<String> SLOT_NAME = RelayOption.identifier("slotName", ESSENTIAL, "outboxkit_slot",
            "Logical replication slot (pgoutput), created if missing and never dropped on stop; it also names the "
                    + "lease (cdc/ and the slot name).");

    /** The publication. */
    public static final RelayOption<String> PUBLICATION_NAME = RelayOption.identifier("publicationName", ESSENTIAL,
            "outboxkit_pub", "Publication to stream, created when missing for outbox_event and outbox_cdc_heartbeat "
                    + "(insert only); an administrator may create it instead, and the relay's role then needs no "
                    + "CREATE privilege.");

    /** Delete published rows. */
    public static final RelayOption<Boolean> DELETE_AFTER_PUBLISH = RelayOption.flag("deleteAfterPublish", ESSENTIAL,
            true, "Delete published rows in batches after Kafka acknowledged them, so the table holds exactly what is "
                    + "unpublished and every start publishes it. Use false only with the writer's insert-and-delete or "
                    + "emit-message modes: the WAL is then the only copy of an event until Kafka has it.");

    /** A slot a promoted standby keeps. */
    public static final RelayOption<Boolean> FAILOVER_SLOT = RelayOption.flag("failoverSlot", RARELY_NEEDED, true,
            "On PostgreSQL 17 and later, create the slot as a failover slot (and make an existing one so), so that a "
                    + "standby running sync_replication_slots keeps a copy to resume from after a promotion; the "
                    + "primary also needs synchronized_standby_slots. false leaves slots as they are; before 17 it "
                    + "changes nothing.");

    /** Heartbeat of an idle outbox. */
    public static final RelayOption<Duration> HEARTBEAT_INTERVAL = RelayOption.duration("heartbeatInterval", TUNING,
            Duration.ofSeconds(5), Duration.ofMillis(100), Duration.ofMinutes(10),
            "How often a beat is written into outbox_cdc_heartbeat (Debezium's heartbeat.interval.ms), so the slot "
                    + "advances while the outbox is idle and the database busy.");

    /** How often positions are stored. */
    public static final RelayOption<Duration> OFFSET_FLUSH_INTERVAL = RelayOption.duration("offsetFlushInterval",
            TUNING, Duration.ofSeconds(1), Duration.ofMillis(10), Duration.ofMinutes(10),
            "How often acknowledged positions are stored; it bounds what a crash replays (duplicates, never loss).");

    /** Events per batch. */
    public static final RelayOption<Integer> MAX_BATCH_SIZE = RelayOption.integer("maxBatchSize", TUNING, 4096, 1,
            100_000, "Most events per batch (Debezium's max.batch.size; its queue holds four batches).");

    /** Records waiting for Kafka's answer. */
    public static final RelayOption<Integer> MAX_IN_FLIGHT = RelayOption.integer("maxInFlight", TUNING, 0, 0, 1_000_000,
            "Most records still unacknowledged when a batch is handed back to Debezium: 0 makes every batch wait for "
                    + "its own acknowledgements, which suits a nearby broker; above 0 Debezium decodes the next batch "
                    + "while earlier ones are on their way (for a distant Kafka), and the relay waits for the oldest "
                    + "batch past the bound (comparison: docs/performance.md).");

    /** Longest queue wait of a lone event. */
    public static final RelayOption<Duration> POLL_INTERVAL = RelayOption.duration("pollInterval", TUNING,
            Duration.ofMillis(5), Duration.ofMillis(1), Duration.ofSeconds(10),
            "The longest a lone event waits in Debezium's queue before its batch is handed over (poll.interval.ms): "
                    + "lower means lower latency and more wake-ups when idle.");

    /** Graceful stop budget. */
    public static final RelayOption<Duration> SHUTDOWN_TIMEOUT = RelayOption.duration("shutdownTimeout", RARELY_NEEDED,
            Duration.ofSeconds(30), Duration.ofSeconds(1), Duration.ofMinutes(30),
            "How long a graceful stop waits for the transaction being published to finish.");

    private CdcOptions() {
    }

    /** The CDC relay's own settings, in reference order. */
    public static List<RelayOption<?>> all() {
        return List.of(SLOT_NAME, PUBLICATION_NAME, DELETE_AFTER_PUBLISH, FAILOVER_SLOT, HEARTBEAT_INTERVAL, OFFSET_FLUSH_INTERVAL,
                MAX_BATCH_SIZE, MAX_IN_FLIGHT, POLL_INTERVAL, SHUTDOWN_TIMEOUT);
    }
}
