package dev.outboxkit.relay;

import static dev.outboxkit.relay.RelayOption.Importance.ESSENTIAL;
import static dev.outboxkit.relay.RelayOption.Importance.RARELY_NEEDED;

import dev.outboxkit.core.OutboxTables;
import dev.outboxkit.core.RecordFormat;
import dev.outboxkit.core.TopicRoute;
import java.time.Duration;
import java.util.List;

/**
 * The settings both relays share, each defined once (see {@link RelayOption}). The polling relay's own are in
 * {@code PollerOptions}, the CDC relay's in {@code CdcOptions}. The database connection ({@code jdbcUrl},
 * {@code user}, {@code password}) and {@code bootstrapServers} are not options of this kind: every outboxkit command
 * takes them, not only the relays, and they have no default.
 *
 * <p>Each option's description (the last argument of its definition, {@link RelayOption#description()}) is its one
 * doc: the builder setters link here, and the CLI's {@code --help}, its README table and the Spring Boot metadata
 * print it. Measured figures stay out of it; it links to docs/performance.md instead. Each definition's second argument
 * is its group ({@link RelayOption.Importance}).
 */
public final class RelayOptions {

    /** Schema holding the outboxkit tables. */
    public static final RelayOption<String> SCHEMA = RelayOption.identifier("schema", ESSENTIAL,
            OutboxTables.DEFAULT_SCHEMA, "PostgreSQL schema holding the outboxkit tables.");

    /** Topic for rows without their own. */
    public static final RelayOption<TopicRoute> ROUTE = RelayOption.route("route", ESSENTIAL,
            "Topic for rows whose topic column is empty; the same default as Debezium's outbox event router.");

    /** How records are laid out: outboxkit's headers or CloudEvents ({@link RecordFormat}). */
    public static final RelayOption<RecordFormat> RECORD_FORMAT = RelayOption.choice("recordFormat", RARELY_NEEDED,
            RecordFormat.class, RecordFormat.OUTBOXKIT, "Layout of every record of the relay: OUTBOXKIT headers (id, "
                    + "eventType, aggregateType, createdAt) or CLOUDEVENTS (the CloudEvents 1.0 Kafka binding, binary "
                    + "mode: ce_id, ce_source, ce_type, ce_time, ce_subject, ce_aggregatetype, content-type).");

    /**
     * ce_source of CloudEvents records: a URI reference in which {@code ${aggregateType}} and {@code ${eventType}}
     * are filled in.
     */
    public static final RelayOption<String> CLOUD_EVENTS_SOURCE = RelayOption.cloudEventsSource("cloudEventsSource",
            RARELY_NEEDED, TopicRoute.DEFAULT_CLOUD_EVENTS_SOURCE, "The ce_source of CLOUDEVENTS records, for example "
                    + "the producing service's URI; ignored for OUTBOXKIT.");

    /** This instance's name. */
    public static final RelayOption<String> INSTANCE_ID = RelayOption.instanceId("instanceId", RARELY_NEEDED,
            "host name, process id and a random suffix",
            "Name of this instance in the lease table, in outbox_dead_letter.parked_by and in logs; one per running "
                    + "process (a process started under the same name takes the earlier one's leases).");

    /**
     * How long a lease lasts without renewal. 15 s: leases are renewed every third of it, and the polling relay
     * waits at most a third of it for Kafka's acknowledgements of a batch, so 15 s leaves a 5 s acknowledgement
     * budget (a remote, replicated cluster under load needs seconds) while a crashed instance's work is taken
     * over within 15 s.
     */
    public static final RelayOption<Duration> LEASE_DURATION = RelayOption.duration("leaseDuration", ESSENTIAL,
            Duration.ofSeconds(15), Duration.ofSeconds(2), Duration.ofMinutes(10),
            "How long a lease lasts without renewal (renewed every third of it): other instances take over about "
                    + "this long after a crash, and a paused instance can complete nothing once it passed.");

    /** Counted failures before a row is parked. */
    public static final RelayOption<Integer> MAX_ATTEMPTS = RelayOption.integer("maxAttempts", RARELY_NEEDED, 10, 1,
            1000, "A row whose own record Kafka refuses with a retriable error this many times is parked in "
                    + "outbox_dead_letter, so it never holds the rest back. Timeouts (Kafka slow or away), failures "
                    + "that need an operator and failures caused by another record's do not count.");

    /**
     * How long {@code start()} keeps asking a database that does not answer. 60 s: a server that is starting, a
     * failover, or a first TLS and SCRAM login on a loaded node takes seconds to tens of seconds, while an orchestrator
     * should still hear of a wrong address within a minute.
     */
    public static final RelayOption<Duration> START_TIMEOUT = RelayOption.duration("startTimeout", RARELY_NEEDED,
            Duration.ofSeconds(60), Duration.ZERO, Duration.ofMinutes(30),
            "How long start-up keeps trying a database that does not answer (refused, timed out, starting up), not "
                    + "ready meanwhile, before it gives up naming what it tried (sidecar: exit 1); PT0S: one attempt. "
                    + "A database that answers no (wrong password, missing grants, an untrusted certificate) fails at "
                    + "once.");

    private RelayOptions() {
    }

    /** Every shared setting, in reference order. */
    public static List<RelayOption<?>> all() {
        return List.of(SCHEMA, ROUTE, RECORD_FORMAT, CLOUD_EVENTS_SOURCE, INSTANCE_ID, LEASE_DURATION, MAX_ATTEMPTS,
                START_TIMEOUT);
    }
}
