package dev.outboxkit.ops.admin;

import dev.outboxkit.core.OutboxTables;
import dev.outboxkit.core.spi.GrantsOnce;
import dev.outboxkit.core.spi.PollPartitions;
import dev.outboxkit.core.spi.RoleGrants;
import dev.outboxkit.core.spi.TraceContext;
import dev.outboxkit.core.spi.Traceparent;
import dev.outboxkit.core.spi.Transactions;
import dev.outboxkit.ops.OpsBuilder;
import dev.outboxkit.ops.internal.Journal;
import dev.outboxkit.ops.internal.OpsSettings;
import dev.outboxkit.runtime.FailoverSlots;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Operations on one outbox (a DataSource and the schema holding its tables): what {@code outbox status},
 * {@code outbox dead-letters} and {@code outbox replay} do, for an admin page, an Actuator endpoint or a script.
 *
 * <pre>{@code
 * OutboxAdmin admin = OutboxAdmin.builder().outboxDatabase(ordersDs, "public").build();
 * Status s = admin.status();                                   // backlog, oldest age, leases, dead letters, slots
 * DeadLetterPage page = admin.deadLetters(DeadLetterFilter.all().withErrorClass("RecordTooLargeException"), 50, null);
 * admin.retryDeadLetters(DeadLetterFilter.ids(page.items().get(0).id()), "alice@ops");
 * admin.discardDeadLetters(DeadLetterFilter.ids(id), "topic deleted for good", "alice@ops");
 * admin.replay(ReplaySelection.createdBetween(from, to), false, "alice@ops");
 * EventTrace t = admin.traceEvent(eventId);                     // outbox, dead letter, consumer groups, intent ledger, reconciliation
 * List<DeadLetterReason> reasons = admin.deadLetterReasons(20);  // dead letters by error class and message pattern
 * Optional<IdempotencyKeyState> k = admin.idempotencyKey("checkout", key);
 * List<JournalEntry> lastRun = admin.journal(1, JournalEntry.Kind.RECONCILE); // the operations journal
 * List<RelayReport> fleet = admin.relayReports();                // every relay instance: ready? last published?
 * }</pre>
 *
 * <p>Every change (retry, discard, replay) runs in one transaction and is logged, one line a row, on the
 * {@value #AUDIT_LOGGER} logger with the operator's name (never the payload), so operators can route audit lines
 * on their own. A retry or discard also writes its entry in the operations journal ({@link #journal}: who, when, which
 * selection, how many rows and the first ids) in the same transaction, so the change and its record commit together; a
 * retry or discard that fails leaves an entry with outcome failure. Retry and discard therefore also need {@code INSERT}
 * on {@code outbox_ops_journal}, and {@link #journal} {@code SELECT} on it. Why the semantics are as they are:
 * <ul>
 *   <li><b>retry</b> moves rows back into {@code outbox_event} at their original {@code seq}
 *       ({@code OVERRIDING SYSTEM VALUE}): the polling relay publishes in seq order, so under {@code HOLD_AGGREGATE}
 *       the retried event goes out before the events of its aggregate that waited behind it. Reusing the seq cannot
 *       collide with another event ({@code seq} is an identity column and a relay removes the row when it parks it);
 *       if a row with that seq or id is there all the same (a copy inserted by hand, or a CDC relay that keeps its
 *       rows), nothing is moved and {@link DeadLetterConflictException} names the key. A dead letter without a row
 *       ({@code seq} 0: the CDC relay parked a logical decoding message) gets a new seq.</li>
 *   <li><b>discard</b> deletes the rows for good.</li>
 *   <li><b>replay</b> clears {@code published_at} (and {@code attempts}) of rows a {@code MARK}-mode relay kept, so
 *       the relay sends them again under their original ids; consumer-dedupe skips those already applied. Rows a
 *       relay deleted after publishing cannot be replayed: only the intent ledger's hash of them remains.</li>
 * </ul>
 *
 * <p>Least privilege: reading dead letters needs {@code SELECT} on {@code outbox_dead_letter}; retry and discard
 * {@code DELETE} on it, retry also {@code INSERT} and {@code SELECT (seq, id, aggregate_type, aggregate_id)} on
 * {@code outbox_event}; status {@code SELECT} on {@code outbox_event}, {@code outbox_dead_letter} and
 * {@code outbox_relay_lease}; replay (a dry run too) {@code SELECT} and {@code UPDATE} on {@code outbox_event} and
 * {@code SELECT} on {@code outbox_dead_letter} (to say which ids are parked); dead-letter reasons what listing does;
 * traceEvent {@code SELECT} on {@code outbox_event}, {@code outbox_dead_letter}, {@code outbox_relay_lease},
 * {@code outbox_relay_member}, {@code processed_event}, {@code outbox_intent} and {@code outbox_ops_journal} (those that
 * exist); idempotencyKey
 * {@code SELECT} on the state columns of {@code idempotency_key} (not the stored response); relayMembers {@code SELECT} on
 * {@code outbox_relay_member}; relayReports {@code SELECT} on {@code outbox_relay_report}; backlogByPartition
 * {@code SELECT} on {@code outbox_event} and {@code outbox_relay_member}; overview what status and relayMembers need;
 * eventPayload {@code SELECT} on the payload columns of {@code outbox_event} and
 * {@code outbox_dead_letter}. Each operation checks its
 * own privileges the first time an instance runs it (one round trip; never again once they held) and throws
 * {@link dev.outboxkit.core.MissingGrantsException} with the {@code GRANT} statements to run before it does anything.
 *
 * <p>Errors: a schema without the outboxkit tables throws {@link IllegalStateException} naming the schema, the
 * table and the fix; other database errors are thrown as they come ({@link SQLException}), after a rollback.
 * Thread-safe: an instance holds no state but its configuration.
 */
public final class OutboxAdmin {

    /** The logger that receives one line per row retried, discarded or replayed. */
    public static final String AUDIT_LOGGER = "outboxkit.audit";
    /** How many of the most recently parked dead letters {@link #deadLetterReasons} groups. */
    public static final int REASONS_WINDOW = 20_000;
    /** Largest page {@link #deadLetters} returns. */
    public static final int MAX_PAGE_SIZE = 10_000;

    private static final Logger AUDIT = LoggerFactory.getLogger(AUDIT_LOGGER);
    private static final String UNIQUE_VIOLATION = "23505";
    private static final String UNDEFINED_TABLE = "42P01";
    /** The columns a retry moves back (payload_bytes and content_type: a binary event goes back as it was parked). */
    private static final String MOVED_COLUMNS = "id, aggregate_type, aggregate_id, event_type, payload, payload_bytes,"
            + " content_type, headers, topic, created_at";
    private static final String DEAD_LETTER_COLUMNS = "id, aggregate_type, aggregate_id, event_type, seq, attempts,"
            + " created_at, parked_at, parked_by, error_class, error_message,"
            + " coalesce(octet_length(payload_bytes), octet_length(payload::text))";

    /**
     * The one normalisation of a dead letter's message that {@link #deadLetterReasons} groups by and
     * {@link DeadLetterFilter#withReason} matches: every UUID, every value in single or double quotes and every run of
     * digits becomes {@code {}}, in one pass (at each place the longest of them wins, so a UUID is one placeholder).
     */
    private static final String MESSAGE_PATTERN = "regexp_replace(error_message, '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-"
            + "[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|''[^'']*''|\"[^\"]*\"|[0-9]+', '{}', 'g')";
    private static final Pattern PLAN_ROWS = Pattern.compile("\"Plan Rows\":\\s*([0-9.eE+]+)");

    private final DataSource dataSource;
    private final OutboxTables tables;
    private final Clock clock;
    private final Journal journal;
    private final GrantsOnce journalGrants;

    private final GrantsOnce statusGrants;
    private final GrantsOnce slotGrants;
    private final GrantsOnce readGrants;
    private final GrantsOnce retryGrants;
    private final GrantsOnce discardGrants;
    private final GrantsOnce replayGrants;
    private final GrantsOnce traceGrants;
    private final GrantsOnce idempotencyKeyGrants;
    private final GrantsOnce memberGrants;
    private final GrantsOnce reportGrants;
    private final GrantsOnce payloadGrants;

    private OutboxAdmin(OpsBuilder.Resolved p) {
        this.dataSource = p.dataSource();
        this.tables = p.tables();
        this.clock = p.clock();
        this.journal = new Journal(dataSource, tables);
        this.journalGrants = new GrantsOnce(RoleGrants.journal(p.schema()), "OutboxAdmin.journal");

        String schema = p.schema();
        this.statusGrants = new GrantsOnce(RoleGrants.status(schema), "outbox status");
        this.slotGrants = new GrantsOnce(RoleGrants.cdcRelaySlots(schema), "outbox status (CDC relay slots)");
        this.readGrants = new GrantsOnce(RoleGrants.deadLettersList(schema), "outbox dead-letters list");
        this.retryGrants = new GrantsOnce(RoleGrants.deadLettersRetry(schema), "outbox dead-letters retry");
        this.discardGrants = new GrantsOnce(RoleGrants.deadLettersDiscard(schema), "outbox dead-letters discard");
        this.replayGrants = new GrantsOnce(RoleGrants.replay(schema), "outbox replay");
        this.traceGrants = new GrantsOnce(RoleGrants.traceEvent(schema), "OutboxAdmin.traceEvent");
        this.idempotencyKeyGrants = new GrantsOnce(RoleGrants.idempotencyKeyState(schema), "OutboxAdmin.idempotencyKey");
        this.memberGrants = new GrantsOnce(RoleGrants.relayMembers(schema), "OutboxAdmin.relayMembers");
        this.reportGrants = new GrantsOnce(RoleGrants.relayReports(schema), "OutboxAdmin.relayReports");
        this.payloadGrants = new GrantsOnce(RoleGrants.eventPayload(schema), "OutboxAdmin.eventPayload");
    }

    /** A connection whose role passed {@code grants} (checked once per instance); closed again if it did not. */
    private Connection connection(GrantsOnce grants) throws SQLException {
        Connection c = dataSource.getConnection();
        try {
            grants.require(c);
            return c;
        } catch (SQLException | RuntimeException e) {
            c.close();
            throw e;
        }
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The schema this instance works on. */
    public String schema() {
        return tables.schema();
    }

    /**
     * Reads the backlog (in total and by topic), the oldest unpublished age, dead letters, leases and slots. Bounded
     * whatever the backlog: it reads at most the oldest {@value Status#EXACT_BACKLOG_LIMIT} unpublished events in seq
     * order (through the primary key, or the partial index a {@code MARK}-mode relay keeps); beyond them the backlog is
     * the planner's estimate ({@link Status#backlogExact()} false). The oldest age is that of the oldest of those events
     * (seq order follows commit order closely, so it is the oldest unpublished event but for events of transactions
     * that committed out of order within moments).
     */
    public Status status() throws SQLException {
        try (Connection c = connection(statusGrants); Statement s = c.createStatement()) {
            return status(c, s, head(s, null));
        } catch (SQLException e) {
            throw described(e);
        }
    }

    /**
     * What the console's overview shows, on one connection and with one read of the backlog's head: the
     * {@link #status()}, the polling relay instances ({@link #relayMembers()}), the backlog by partition
     * ({@link #backlogByPartition()}, split by the partition count of the freshest live instance, counted in the same
     * pass as the backlog by topic) and what every relay instance reports of itself ({@link #relayReports()}; none on
     * a schema older than version 13). Needs what those four need.
     *
     * @throws dev.outboxkit.core.MissingGrantsException naming the grants when the role lacks them
     */
    public Overview overview() throws SQLException {
        try (Connection c = connection(statusGrants); Statement s = c.createStatement()) {
            memberGrants.require(c);
            reportGrants.require(c);
            List<RelayMember> members = members(s);
            boolean reportsKept = presentTables(c, OutboxTables.RELAY_REPORT).contains(OutboxTables.RELAY_REPORT);
            List<RelayReport> reports = reportsKept ? reports(s) : List.of();
            Head head = head(s, livePartitions(s));
            return new Overview(status(c, s, head), members, head.byPartition(), reports, reportsKept);
        } catch (SQLException e) {
            throw described(e);
        }
    }

    /**
     * The oldest {@value Status#EXACT_BACKLOG_LIMIT} unpublished events, grouped by topic and aggregate type and, when
     * {@code partitions} is given, by polling relay partition too: one index scan of the head for both.
     */
    private Head head(Statement s, Integer partitions) throws SQLException {
        boolean split = partitions != null;
        Head head = new Head();
        try (ResultSet rs = s.executeQuery("SELECT topic, aggregate_type, " + (split ? "p" : "NULL::int") + ", count(*),"
                + " extract(epoch FROM now() - min(created_at)), max(seq), " + (split ? "grouping(p)" : "1")
                + " FROM (SELECT e.seq, e.topic, e.aggregate_type, e.created_at"
                + (split ? ", " + PollPartitions.of("e", partitions) + " AS p" : "")
                + " FROM (SELECT seq, topic, aggregate_type, aggregate_id, created_at FROM " + tables.outboxEvent()
                + " WHERE published_at IS NULL ORDER BY seq LIMIT " + Status.EXACT_BACKLOG_LIMIT + ") e) head GROUP BY "
                + (split ? "GROUPING SETS ((topic, aggregate_type), (p))" : "topic, aggregate_type")
                + " ORDER BY 7, 4 DESC, 2, 1, 3")) {
            while (rs.next()) {
                long events = rs.getLong(4);
                Duration age = seconds(rs.getDouble(5));
                if (rs.getInt(7) == 1) { // grouping(p) is 1 where p is left out: a (topic, aggregate_type) row
                    head.byTopic.add(new Status.Backlog(rs.getString(1), rs.getString(2), events, age));
                    head.events += events;
                    head.lastSeq = Math.max(head.lastSeq, rs.getLong(6));
                    head.oldest = head.oldest == null || age.compareTo(head.oldest) > 0 ? age : head.oldest;
                } else {
                    head.byPartition.add(new PartitionBacklog(PollPartitions.leaseKey(rs.getInt(3)), events, age));
                }
            }
        }
        head.byPartition.sort(java.util.Comparator.comparing(b -> Integer.parseInt(
                b.leaseKey().substring(PollPartitions.LEASE_PREFIX.length()))));
        return head;
    }

    /** The backlog's head, as {@link #head} reads it. */
    private static final class Head {
        final List<Status.Backlog> byTopic = new ArrayList<>();
        final List<PartitionBacklog> byPartition = new ArrayList<>();
        long events;
        long lastSeq;
        Duration oldest;

        List<PartitionBacklog> byPartition() {
            return List.copyOf(byPartition);
        }
    }

    private Status status(Connection c, Statement s, Head head) throws SQLException {
        long backlog = head.events;
        boolean exact = backlog < Status.EXACT_BACKLOG_LIMIT || !exists(c, "SELECT 1 FROM " + tables.outboxEvent()
                + " WHERE published_at IS NULL AND seq > ? LIMIT 1", head.lastSeq);
        if (!exact) {
            backlog = Math.max(backlog + 1, unpublishedEstimate(s));
        }
        long deadLetters;
        try (ResultSet rs = s.executeQuery("SELECT count(*) FROM " + tables.deadLetter())) {
            rs.next();
            deadLetters = rs.getLong(1);
        }
        List<Status.Lease> leases = new ArrayList<>();
        try (ResultSet rs = s.executeQuery("SELECT lease_key, holder, fence, expires_at > now(),"
                + " extract(epoch FROM expires_at - now()) FROM " + tables.relayLease() + " ORDER BY lease_key")) {
            while (rs.next()) {
                leases.add(new Status.Lease(rs.getString(1), rs.getString(2), rs.getLong(3), rs.getBoolean(4),
                        seconds(rs.getDouble(5))));
            }
        }
        return new Status(tables.schema(), backlog, exact, head.oldest, head.byTopic, deadLetters, leases, replicationSlots(s));
    }

    /**
     * The slots of the CDC relays of this schema ({@code outbox_cdc_slot}), with what the server holds of each now and
     * whether a promoted standby would keep it. Needs {@code SELECT} on {@code outbox_cdc_slot}.
     *
     * @throws dev.outboxkit.core.MissingGrantsException naming the grant when the role lacks it
     */
    public List<CdcRelaySlot> cdcRelaySlots() throws SQLException {
        List<CdcRelaySlot> out = new ArrayList<>();
        try (Connection c = connection(slotGrants); PreparedStatement ps = c.prepareStatement("SELECT r.slot_name, "
                + "s.slot_name IS NOT NULL, coalesce(s.active, false), r.server_address, r.timeline, r.system_identifier, "
                + "r.recreated_at, r.recreated_reason, r.wal_only_seen_at, r.wal_only_seen FROM "
                + tables.qualified(OutboxTables.CDC_SLOT) + " r LEFT JOIN pg_replication_slots s ON s.slot_name = r.slot_name "
                + "ORDER BY r.slot_name")) {
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    String name = rs.getString(1);
                    String address = rs.getString(4);
                    long system = rs.getLong(6);
                    String lastServer = address == null ? null : address + " (system " + (rs.wasNull() ? "unknown" : system)
                            + ", timeline " + rs.getInt(5) + ")";
                    FailoverSlots.State failover = FailoverSlots.of(c, name);
                    out.add(new CdcRelaySlot(name, rs.getBoolean(2), rs.getBoolean(3), lastServer, failover.code(),
                            failover.detail(), instant(rs.getTimestamp(7)), rs.getString(8), instant(rs.getTimestamp(9)),
                            rs.getString(10)));
                }
            }
        } catch (SQLException e) {
            throw described(e);
        }
        return out;
    }

    /**
     * The backlog by polling relay partition: the oldest {@value Status#EXACT_BACKLOG_LIMIT} unpublished events (the
     * head {@link #status()} counts too) split as the live polling relay instances split them, by their partition count
     * ({@code outbox_relay_member}); partitions without such an event are left out. Empty when no polling relay
     * instance is alive: the CDC relay has no partitions. Costs one read of that head, whatever the backlog. Needs
     * {@code SELECT} on {@code outbox_event} and {@code outbox_relay_member}.
     *
     * @throws dev.outboxkit.core.MissingGrantsException naming the grants when the role lacks them
     */
    public List<PartitionBacklog> backlogByPartition() throws SQLException {
        try (Connection c = connection(memberGrants); Statement s = c.createStatement()) {
            statusGrants.require(c);
            Integer partitions = livePartitions(s);
            return partitions == null ? List.of() : head(s, partitions).byPartition();
        } catch (SQLException e) {
            throw described(e);
        }
    }

    /**
     * The partition count of the live polling relay instances: they agree on it (they refuse to take leases otherwise),
     * so the freshest one speaks for all. Null when none is alive.
     */
    private Integer livePartitions(Statement s) throws SQLException {
        try (ResultSet rs = s.executeQuery("SELECT partitions FROM " + tables.qualified(OutboxTables.RELAY_MEMBER)
                + " WHERE expires_at > now() ORDER BY heartbeat_at DESC LIMIT 1")) {
            return rs.next() ? rs.getInt(1) : null;
        }
    }

    /** At most this many instances are listed by {@link #relayMembers()}. */
    public static final int MEMBERS_LIMIT = 200;

    /**
     * The polling relay instances of this schema ({@code outbox_relay_member}), oldest first, at most
     * {@value #MEMBERS_LIMIT}: those alive and those whose membership expired but that did not leave cleanly. With
     * {@link Status#leases()} they tell which instance holds and which stands by. The CDC relay registers no members (it
     * has no partitions); {@link #relayReports()} lists its instances, standbys included, with those of the polling
     * relay. Needs {@code SELECT} on {@code outbox_relay_member}.
     *
     * @throws dev.outboxkit.core.MissingGrantsException naming the grant when the role lacks it
     */
    public List<RelayMember> relayMembers() throws SQLException {
        try (Connection c = connection(memberGrants); Statement s = c.createStatement()) {
            return members(s);
        } catch (SQLException e) {
            throw described(e);
        }
    }

    private List<RelayMember> members(Statement s) throws SQLException {
        List<RelayMember> out = new ArrayList<>();
        try (ResultSet rs = s.executeQuery("SELECT member_id, partitions, started_at, extract(epoch FROM now() - heartbeat_at),"
                + " expires_at > now() FROM " + tables.qualified(OutboxTables.RELAY_MEMBER)
                + " ORDER BY started_at, member_id LIMIT " + MEMBERS_LIMIT)) {
            while (rs.next()) {
                out.add(new RelayMember(rs.getString(1), rs.getInt(2), instant(rs.getTimestamp(3)), seconds(rs.getDouble(4)),
                        rs.getBoolean(5)));
            }
        }
        return out;
    }

    /** At most this many instances are listed by {@link #relayReports()}. */
    public static final int REPORTS_LIMIT = 200;

    /**
     * Every relay instance of this schema as it reported itself ({@code outbox_relay_report}, schema version 13): the
     * polling relay's and the CDC relay's, holders and standbys, whichever process they run in; alive ones first, then
     * by relay and start, at most {@value #REPORTS_LIMIT}. Each says whether it is ready (and why not) and how much it
     * published. An instance that stopped cleanly deleted its row; one that crashed stays, not alive, for a day. Needs
     * {@code SELECT} on {@code outbox_relay_report}.
     *
     * @throws IllegalStateException when the schema has no relay reports yet (older than version 13), naming the fix
     * @throws dev.outboxkit.core.MissingGrantsException naming the grant when the role lacks it
     */
    public List<RelayReport> relayReports() throws SQLException {
        try (Connection c = connection(reportGrants); Statement s = c.createStatement()) {
            return reports(s);
        } catch (SQLException e) {
            if (UNDEFINED_TABLE.equals(e.getSQLState()) && schemaExists() && !tableExists(tables.relayReport())) {
                throw new IllegalStateException("schema '" + tables.schema() + "' has no relay reports ("
                        + OutboxTables.RELAY_REPORT + ", schema version 13): run 'outbox migrate --schema " + tables.schema()
                        + "' (Migrations.migrate in Java); relays of this version then write their reports by themselves", e);
            }
            throw described(e);
        }
    }

    private List<RelayReport> reports(Statement s) throws SQLException {
        List<RelayReport> out = new ArrayList<>();
        try (ResultSet rs = s.executeQuery("SELECT instance_id, relay, host, started_at, extract(epoch FROM now() - reported_at),"
                + " expires_at > now(), ready, problem, published, extract(epoch FROM now() - last_published_at) FROM "
                + tables.relayReport() + " ORDER BY expires_at > now() DESC, relay, started_at, instance_id LIMIT "
                + REPORTS_LIMIT)) {
            while (rs.next()) {
                double lastPublished = rs.getDouble(10);
                Duration lastPublishedAge = rs.wasNull() ? null : seconds(lastPublished);
                out.add(new RelayReport(rs.getString(1), rs.getString(2), rs.getString(3), instant(rs.getTimestamp(4)),
                        seconds(rs.getDouble(5)), rs.getBoolean(6), rs.getBoolean(7), rs.getString(8), rs.getLong(9),
                        lastPublishedAge));
            }
        }
        return out;
    }

    /**
     * The old name of {@link #cdcRelaySlots()}: the same slots, as {@link WalRelaySlot}s.
     *
     * @throws dev.outboxkit.core.MissingGrantsException naming the grant when the role lacks it
     * @deprecated use {@link #cdcRelaySlots()}; removed in 0.2.0
     */
    @Deprecated(since = "0.1.0", forRemoval = true)
    public List<WalRelaySlot> walRelaySlots() throws SQLException {
        return cdcRelaySlots().stream().map(WalRelaySlot::of).toList();
    }

    private static List<Status.ReplicationSlot> replicationSlots(Statement s) throws SQLException {
        List<Status.ReplicationSlot> slots = new ArrayList<>();
        try (ResultSet rs = s.executeQuery("""
                SELECT slot_name, active, wal_status,
                       pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn)::bigint AS lag_bytes,
                       pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)::bigint AS retained_bytes
                  FROM pg_replication_slots
                 WHERE database = current_database() AND slot_type = 'logical'
                 ORDER BY slot_name
                """)) {
            while (rs.next()) {
                long lag = rs.getLong(4);
                Long lagBytes = rs.wasNull() ? null : lag;
                long retained = rs.getLong(5);
                slots.add(new Status.ReplicationSlot(rs.getString(1), rs.getBoolean(2), rs.getString(3), lagBytes,
                        rs.wasNull() ? null : retained));
            }
        }
        return slots;
    }

    private static Duration seconds(double seconds) {
        return Duration.ofNanos(Math.round(seconds * 1e9));
    }

    /**
     * The planner's estimate of the unpublished rows: the table's row count as of its last ANALYZE, scaled to its size
     * now, times the share of rows with {@code published_at} NULL (pg_stats). Costs a plan, not a scan.
     */
    private long unpublishedEstimate(Statement s) throws SQLException {
        try (ResultSet rs = s.executeQuery("EXPLAIN (FORMAT JSON) SELECT 1 FROM " + tables.outboxEvent()
                + " WHERE published_at IS NULL")) {
            rs.next();
            Matcher m = PLAN_ROWS.matcher(rs.getString(1));
            return m.find() ? (long) Double.parseDouble(m.group(1)) : 0;
        }
    }

    /**
     * The first {@code maxBytes} bytes of event {@code eventId}'s payload, from its {@code outbox_event} row or, when it
     * is parked, its dead letter; empty when neither holds it (a relay deleted it after publishing). Only the head leaves
     * the database, so a large payload costs no more than a small one. Needs {@code SELECT} on the {@code id},
     * {@code payload}, {@code payload_bytes} and {@code content_type} columns of both tables. Each read is logged on the
     * {@value #AUDIT_LOGGER} logger with the reader's name (never the payload).
     *
     * @param reader who reads it, for the audit line (an operator's name, or what the caller knows of the reader)
     * @throws IllegalArgumentException when {@code maxBytes} is not between 1 and 1 MiB
     * @throws dev.outboxkit.core.MissingGrantsException naming the grants when the role lacks them
     */
    public Optional<EventPayload> eventPayload(UUID eventId, int maxBytes, String reader) throws SQLException {
        if (eventId == null) {
            throw new IllegalArgumentException("eventId is required");
        }
        if (maxBytes < 1 || maxBytes > 1 << 20) {
            throw new IllegalArgumentException("maxBytes must be between 1 and 1048576, got " + maxBytes);
        }
        String columns = "content_type, CASE WHEN payload_bytes IS NULL THEN substring(convert_to(payload::text, 'UTF8') FROM 1 FOR ?)"
                + " ELSE substring(payload_bytes FROM 1 FOR ?) END, coalesce(octet_length(payload_bytes),"
                + " octet_length(convert_to(payload::text, 'UTF8')))";
        try (Connection c = connection(payloadGrants); PreparedStatement ps = c.prepareStatement(
                "SELECT 'outbox_event', " + columns + " FROM " + tables.outboxEvent() + " WHERE id = ? UNION ALL"
                        + " SELECT 'outbox_dead_letter', " + columns + " FROM " + tables.deadLetter() + " WHERE id = ? LIMIT 1")) {
            ps.setInt(1, maxBytes);
            ps.setInt(2, maxBytes);
            ps.setObject(3, eventId);
            ps.setInt(4, maxBytes);
            ps.setInt(5, maxBytes);
            ps.setObject(6, eventId);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return Optional.empty();
                }
                EventPayload p = new EventPayload(rs.getString(1), rs.getString(2), rs.getBytes(3), rs.getLong(4));
                AUDIT.info("payload read: event {} in {}.{} ({} bytes, {} shown) by {}", eventId, tables.schema(), p.table(),
                        p.size(), p.head().length, reader == null || reader.isBlank() ? "(unnamed)" : reader);
                return Optional.of(p);
            }
        } catch (SQLException e) {
            throw described(e);
        }
    }

    /**
     * Where event {@code eventId} is: in {@code outbox_event} (with the polling relay's lease it waits for), parked in
     * {@code outbox_dead_letter}, applied by consumer groups ({@code processed_event}: also where it was published to),
     * in the intent ledger ({@code outbox_intent}), and the trace id of the span that wrote it (from the row's
     * {@code traceparent} header, read with the row). Every part is one index lookup; the consumer groups are found by a
     * skip scan of {@code processed_event}'s primary key (one probe per group), so the cost does not grow with the
     * table. A table the deployment does not have ({@code processed_event} on a producer-only database,
     * {@code outbox_intent} without reconciliation, the relay tables) leaves its part empty: the tables are looked up
     * ({@code to_regclass}) on every call, so one created later is seen.
     *
     * @throws dev.outboxkit.core.MissingGrantsException naming the grants when the role lacks {@code SELECT} on one of
     *                                                   the tables that exist
     */
    public EventTrace traceEvent(UUID eventId) throws SQLException {
        if (eventId == null) {
            throw new IllegalArgumentException("eventId is required");
        }
        try (Connection c = connection(traceGrants)) {
            Set<String> present = presentTables(c, OutboxTables.PROCESSED_EVENT, OutboxTables.INTENT,
                    OutboxTables.RELAY_MEMBER, OutboxTables.RELAY_LEASE, OutboxTables.OPS_JOURNAL);
            List<String> traceparents = new ArrayList<>();
            Optional<EventTrace.Pending> pending = pending(c, eventId, present, traceparents);
            Where where = Where.of(DeadLetterFilter.ids(eventId));
            Optional<DeadLetter> parked = readDeadLetters(c, where, 1, traceparents).stream().findFirst();
            List<EventTrace.Application> applications = present.contains(OutboxTables.PROCESSED_EVENT)
                    ? applications(c, eventId) : List.of();
            Optional<EventTrace.Intent> intent = present.contains(OutboxTables.INTENT)
                    ? intent(c, eventId, pending.map(EventTrace.Pending::createdAt).orElse(null)) : Optional.empty();
            Optional<EventTrace.Reconciliation> reconciled = present.contains(OutboxTables.OPS_JOURNAL)
                    ? reconciliation(c, eventId, intent.map(EventTrace.Intent::createdAt).orElse(null)) : Optional.empty();
            String traceId = traceparents.stream().map(Traceparent::traceId).filter(Objects::nonNull).findFirst()
                    .orElse(null);
            return new EventTrace(eventId, pending, parked, applications, intent, reconciled, traceId);
        } catch (SQLException e) {
            throw described(e);
        }
    }

    /** How many of the latest reconciliation runs {@link #traceEvent} looks through. */
    private static final int RECONCILE_RUNS_LOOKED_AT = 20;

    /**
     * What the newest of the latest reconciliation runs that concerns {@code id} said of it: one whose findings name it,
     * or one whose window covers its intent's {@code createdAt} (reconciliation starts from the intent ledger, so an event
     * without an intent is covered only where a finding names it). Empty when none of them does.
     */
    private Optional<EventTrace.Reconciliation> reconciliation(Connection c, UUID id, Instant createdAt) throws SQLException {
        String wanted = id.toString();
        for (JournalEntry run : readJournal(c, RECONCILE_RUNS_LOOKED_AT, List.of(JournalEntry.Kind.RECONCILE))) {
            if (run.outcome() != JournalEntry.Outcome.SUCCESS) {
                continue;
            }
            Map<String, Object> d = run.detail();
            List<String> kinds = new ArrayList<>();
            long listed = 0;
            if (d.get("findings") instanceof List<?> findings) {
                listed = findings.size();
                for (Object f : findings) {
                    if (f instanceof Map<?, ?> m && wanted.equals(m.get("eventId"))) {
                        kinds.add(String.valueOf(m.get("kind")));
                    }
                }
            }
            Instant since = parsedInstant(d.get("since"));
            Instant until = parsedInstant(d.get("until"));
            boolean covers = createdAt != null && since != null && until != null && !createdAt.isBefore(since)
                    && createdAt.isBefore(until);
            if (!kinds.isEmpty() || covers) {
                long found = 0;
                if (d.get("counts") instanceof Map<?, ?> counts) {
                    for (Object n : counts.values()) {
                        found += n instanceof Number num ? num.longValue() : 0;
                    }
                }
                EventTrace.Reconciliation.Verdict verdict = !kinds.isEmpty() ? EventTrace.Reconciliation.Verdict.FINDING
                        : found <= listed ? EventTrace.Reconciliation.Verdict.CLEAN
                        : EventTrace.Reconciliation.Verdict.NOT_LISTED;
                return Optional.of(new EventTrace.Reconciliation(run.id(), run.finishedAt(), run.actor(), since, until,
                        verdict, kinds));
            }
        }
        return Optional.empty();
    }

    private static Instant parsedInstant(Object text) {
        try {
            return text instanceof String t ? Instant.parse(t) : null;
        } catch (java.time.format.DateTimeParseException e) {
            return null;
        }
    }

    /** Which of {@code names} exist in the schema (and are visible to the role). */
    private Set<String> presentTables(Connection c, String... names) throws SQLException {
        Set<String> present = new HashSet<>();
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT n FROM unnest(?::text[]) n WHERE to_regclass(?::text || '.' || n) IS NOT NULL")) {
            ps.setArray(1, c.createArrayOf("text", names));
            ps.setString(2, dev.outboxkit.core.Identifiers.quote("schema", tables.schema()));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    present.add(rs.getString(1));
                }
            }
        }
        return present;
    }

    /** The row of {@code id} in {@code outbox_event}; its {@code traceparent} header (or null) is added to {@code traceparents}. */
    private Optional<EventTrace.Pending> pending(Connection c, UUID id, Set<String> present, List<String> traceparents)
            throws SQLException {
        Integer partitions = null;
        if (present.contains(OutboxTables.RELAY_MEMBER)) {
            try (Statement s = c.createStatement()) {
                partitions = livePartitions(s);
            }
        }
        String key = partitions == null ? "NULL::text"
                : "'" + PollPartitions.LEASE_PREFIX + "' || " + PollPartitions.of("e", partitions);
        boolean leases = partitions != null && present.contains(OutboxTables.RELAY_LEASE);
        String sql = "SELECT e.seq, e.aggregate_type, e.aggregate_id, e.event_type, e.topic, e.created_at, e.attempts,"
                + " e.published_at, extract(epoch FROM now() - e.created_at), p.lease_key, "
                + (leases ? "l.holder" : "NULL::text") + ", e.headers->>'" + TraceContext.TRACEPARENT + "' FROM " + tables.outboxEvent() + " e CROSS JOIN LATERAL (SELECT "
                + key + " AS lease_key) p"
                + (leases ? " LEFT JOIN " + tables.relayLease() + " l ON l.lease_key = p.lease_key AND l.expires_at > now()" : "")
                + " WHERE e.id = ?";
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setObject(1, id);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return Optional.empty();
                }
                traceparents.add(rs.getString(12));
                return Optional.of(new EventTrace.Pending(rs.getLong(1), rs.getString(2), rs.getString(3), rs.getString(4),
                        rs.getString(5), instant(rs.getTimestamp(6)), rs.getInt(7), instant(rs.getTimestamp(8)),
                        seconds(rs.getDouble(9)), rs.getString(10), rs.getString(11)));
            }
        }
    }

    /**
     * The groups that applied {@code id}. processed_event's key is (consumer_group, event_id): the recursive query walks
     * the distinct groups along the key (one descent each) and probes the key once per group, instead of scanning
     * every row for the id.
     */
    private List<EventTrace.Application> applications(Connection c, UUID id) throws SQLException {
        String pe = tables.processedEvent();
        String sql = "WITH RECURSIVE g(name) AS ((SELECT consumer_group FROM " + pe + " ORDER BY consumer_group LIMIT 1)"
                + " UNION ALL SELECT (SELECT consumer_group FROM " + pe + " WHERE consumer_group > g.name"
                + " ORDER BY consumer_group LIMIT 1) FROM g WHERE g.name IS NOT NULL)"
                + " SELECT p.consumer_group, p.processed_at, p.topic, p.kafka_partition, p.kafka_offset FROM g JOIN " + pe
                + " p ON p.consumer_group = g.name AND p.event_id = ? ORDER BY p.processed_at, p.consumer_group";
        List<EventTrace.Application> out = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setObject(1, id);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    int partition = rs.getInt(4);
                    Integer kafkaPartition = rs.wasNull() ? null : partition;
                    long offset = rs.getLong(5);
                    Long kafkaOffset = rs.wasNull() ? null : offset;
                    out.add(new EventTrace.Application(rs.getString(1), instant(rs.getTimestamp(2)), rs.getString(3),
                            kafkaPartition, kafkaOffset));
                }
            }
        }
        return out;
    }

    /** The ledger row of {@code id}; with the outbox row's {@code createdAt}, only that day's partition is probed. */
    private Optional<EventTrace.Intent> intent(Connection c, UUID id, Instant createdAt) throws SQLException {
        String sql = "SELECT aggregate_type, aggregate_id, event_type, created_at, published_at, encode(payload_hash, 'hex')"
                + " FROM " + tables.intent() + " WHERE event_id = ?" + (createdAt == null ? "" : " AND created_at = ?")
                + " ORDER BY created_at DESC LIMIT 1";
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setObject(1, id);
            if (createdAt != null) {
                ps.setTimestamp(2, Timestamp.from(createdAt));
            }
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return Optional.empty();
                }
                return Optional.of(new EventTrace.Intent(rs.getString(1), rs.getString(2), rs.getString(3),
                        instant(rs.getTimestamp(4)), instant(rs.getTimestamp(5)), rs.getString(6)));
            }
        }
    }

    /**
     * The dead letters grouped by reason, largest group first: by error class and by the message with its variable
     * parts replaced, so "record 123 too large" and "record 456 too large" are one group ("record {} too large"). The
     * rule: every UUID, every value in single or double quotes and every run of digits becomes {@code {}}. Act on one
     * group with {@link DeadLetterFilter#withReason}.
     *
     * <p>Bounded: it groups the {@value #REASONS_WINDOW} most recently parked dead letters. With more parked than that
     * ({@link Status#deadLetters()}), the counts and first-parked times cover those newest rows only; a retry or
     * discard {@link DeadLetterFilter#withReason} still acts on every row of the group.
     *
     * @param limit at most this many groups, 1 to {@value #MAX_PAGE_SIZE}
     */
    public List<DeadLetterReason> deadLetterReasons(int limit) throws SQLException {
        if (limit < 1 || limit > MAX_PAGE_SIZE) {
            throw new IllegalArgumentException("limit must be between 1 and " + MAX_PAGE_SIZE + ", got " + limit);
        }
        String sql = "SELECT error_class, " + MESSAGE_PATTERN + " AS pattern, count(*), min(parked_at), max(parked_at) FROM"
                + " (SELECT error_class, error_message, parked_at FROM " + tables.deadLetter() + " ORDER BY parked_at DESC"
                + " LIMIT " + REASONS_WINDOW + ") newest GROUP BY 1, 2 ORDER BY 3 DESC, 1, 2 LIMIT " + limit;
        List<DeadLetterReason> out = new ArrayList<>();
        try (Connection c = connection(readGrants); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            while (rs.next()) {
                out.add(new DeadLetterReason(rs.getString(1), rs.getString(2), rs.getLong(3), instant(rs.getTimestamp(4)),
                        instant(rs.getTimestamp(5))));
            }
        } catch (SQLException e) {
            throw described(e);
        }
        return out;
    }

    /**
     * The state of one request idempotency key ({@code idempotency_key}), if it is there: never its stored response.
     * Needs {@code SELECT} on the key's state columns only (see the grants in the outbox-ops README). Empty too when
     * the schema has no {@code idempotency_key} table. A key purged by retention is not reported (its tombstone holds
     * only hashes).
     */
    public Optional<IdempotencyKeyState> idempotencyKey(String scope, String key) throws SQLException {
        if (scope == null || key == null) {
            throw new IllegalArgumentException("scope and key are required, got " + scope + " and " + key);
        }
        try (Connection c = connection(idempotencyKeyGrants)) {
            if (presentTables(c, OutboxTables.IDEMPOTENCY_KEY).isEmpty()) {
                return Optional.empty();
            }
            try (PreparedStatement ps = c.prepareStatement("SELECT state, encode(request_hash, 'hex'), locked_until,"
                    + " response_status, attempt, created_at, completed_at, extract(epoch FROM now() - created_at) FROM "
                    + tables.idempotencyKey() + " WHERE scope = ? AND idem_key = ?")) {
                ps.setString(1, scope);
                ps.setString(2, key);
                try (ResultSet rs = ps.executeQuery()) {
                    if (!rs.next()) {
                        return Optional.empty();
                    }
                    int status = rs.getInt(4);
                    Integer responseStatus = rs.wasNull() ? null : status;
                    return Optional.of(new IdempotencyKeyState(scope, key, rs.getString(1), rs.getString(2),
                            instant(rs.getTimestamp(3)), responseStatus, rs.getInt(5), instant(rs.getTimestamp(6)),
                            instant(rs.getTimestamp(7)), seconds(rs.getDouble(8))));
                }
            }
        } catch (SQLException e) {
            throw described(e);
        }
    }

    /** One dead letter, if {@code id} is parked. */
    public Optional<DeadLetter> deadLetter(UUID id) throws SQLException {
        DeadLetterPage page = deadLetters(DeadLetterFilter.ids(id), 1, null);
        return page.items().stream().findFirst();
    }

    /**
     * A page of the dead letters {@code filter} matches, oldest parked first (then by seq and id).
     *
     * @param limit at most this many rows, 1 to {@value #MAX_PAGE_SIZE}
     * @param after where the page starts: the {@link DeadLetterPage#next()} of the previous page; null for the first
     * @throws IllegalArgumentException when {@code limit} is out of range
     */
    public DeadLetterPage deadLetters(DeadLetterFilter filter, int limit, DeadLetterPage.Cursor after) throws SQLException {
        if (limit < 1 || limit > MAX_PAGE_SIZE) {
            throw new IllegalArgumentException("limit must be between 1 and " + MAX_PAGE_SIZE + ", got " + limit);
        }
        Where where = Where.of(filter);
        if (after != null) {
            where.add("(parked_at, seq, id) > (?, ?, ?)", after.parkedAt(), after.seq(), after.id());
        }
        List<DeadLetter> rows;
        try (Connection c = connection(readGrants)) {
            rows = readDeadLetters(c, where, limit + 1);
        } catch (SQLException e) {
            throw described(e);
        }
        if (rows.size() <= limit) {
            return new DeadLetterPage(rows, null);
        }
        List<DeadLetter> page = rows.subList(0, limit);
        return new DeadLetterPage(page, DeadLetterPage.Cursor.after(page.get(limit - 1)));
    }

    private List<DeadLetter> readDeadLetters(Connection c, Where where, int limit) throws SQLException {
        return readDeadLetters(c, where, limit, null);
    }

    /** With {@code traceparents}: each row's {@code traceparent} header (or null) is added to it, in row order. */
    private List<DeadLetter> readDeadLetters(Connection c, Where where, int limit, List<String> traceparents)
            throws SQLException {
        String sql = "SELECT " + DEAD_LETTER_COLUMNS
                + (traceparents == null ? "" : ", headers->>'" + TraceContext.TRACEPARENT + "'")
                + " FROM " + tables.deadLetter() + where.sql()
                + " ORDER BY parked_at, seq, id LIMIT " + limit;
        List<DeadLetter> rows = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            where.bind(c, ps, 1);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    rows.add(new DeadLetter(rs.getObject(1, UUID.class), rs.getString(2), rs.getString(3), rs.getString(4),
                            rs.getLong(5), rs.getInt(6), instant(rs.getTimestamp(7)), instant(rs.getTimestamp(8)),
                            rs.getString(9), rs.getString(10), rs.getString(11), rs.getLong(12)));
                    if (traceparents != null) {
                        traceparents.add(rs.getString(13));
                    }
                }
            }
        }
        return rows;
    }

    private static Instant instant(Timestamp t) {
        return t == null ? null : t.toInstant();
    }

    /**
     * Moves the dead letters {@code filter} matches back into {@code outbox_event} (at their original seq), in one
     * transaction, so the relay publishes them again. Fix the cause first: an event Kafka still refuses is parked again.
     *
     * @param operator who asks, for the audit lines (e.g. {@code alice@host}); required
     * @throws DeadLetterConflictException when an event with the same seq or id is in {@code outbox_event}; nothing moved
     */
    public DeadLetterChange retryDeadLetters(DeadLetterFilter filter, String operator) throws SQLException {
        Where where = Where.of(filter);
        String dl = tables.deadLetter();
        String outbox = tables.outboxEvent();
        String returning = " RETURNING id, aggregate_type, aggregate_id, seq";
        String sql = "WITH moved AS (DELETE FROM " + dl + where.sql() + " RETURNING *), "
                + "kept AS (INSERT INTO " + outbox + " (seq, " + MOVED_COLUMNS + ") OVERRIDING SYSTEM VALUE "
                + "SELECT seq, " + MOVED_COLUMNS + " FROM moved WHERE seq > 0" + returning + "), "
                + "renumbered AS (INSERT INTO " + outbox + " (" + MOVED_COLUMNS + ") "
                + "SELECT " + MOVED_COLUMNS + " FROM moved WHERE seq <= 0 ORDER BY created_at, id" + returning + ") "
                + "SELECT id, aggregate_type, aggregate_id, seq FROM kept UNION ALL SELECT id, aggregate_type, aggregate_id, seq "
                + "FROM renumbered ORDER BY seq";
        try {
            return change(DeadLetterChange.Action.RETRY, retryGrants, filter, where, sql, null, operator);
        } catch (SQLException e) {
            if (UNIQUE_VIOLATION.equals(e.getSQLState())) {
                throw new DeadLetterConflictException("nothing was moved: an event with the same seq or id is still in "
                        + "outbox_event. That row either waits for the relay already (then discard the dead letter) or "
                        + "is a copy inserted by hand (delete it, then retry)", e);
            }
            throw e;
        }
    }

    /**
     * Deletes the dead letters {@code filter} matches for good, in one transaction.
     *
     * @param reason   why, for the audit lines (e.g. "topic deleted"); may be null
     * @param operator who asks, for the audit lines; required
     */
    public DeadLetterChange discardDeadLetters(DeadLetterFilter filter, String reason, String operator) throws SQLException {
        Where where = Where.of(filter);
        String sql = "DELETE FROM " + tables.deadLetter() + where.sql() + " RETURNING id, aggregate_type, aggregate_id, seq";
        return change(DeadLetterChange.Action.DISCARD, discardGrants, filter, where, sql, reason, operator);
    }

    private DeadLetterChange change(DeadLetterChange.Action action, GrantsOnce grants, DeadLetterFilter filter, Where where,
                                    String sql, String reason, String operator) throws SQLException {
        String who = requireOperator(operator);
        String verb = action.name().toLowerCase(java.util.Locale.ROOT);
        JournalEntry.Kind kind = action == DeadLetterChange.Action.RETRY ? JournalEntry.Kind.DEAD_LETTER_RETRY
                : JournalEntry.Kind.DEAD_LETTER_DISCARD;
        Instant started = clock.instant();
        List<DeadLetterChange.Row> rows = new ArrayList<>();
        try (Connection c = connection(grants)) {
            try {
                Transactions.inTransaction(c, tx -> {
                    try (PreparedStatement ps = c.prepareStatement(sql)) {
                        where.bind(c, ps, 1);
                        try (ResultSet rs = ps.executeQuery()) {
                            while (rs.next()) {
                                rows.add(new DeadLetterChange.Row(rs.getObject(1, UUID.class), rs.getString(2),
                                        rs.getString(3), rs.getLong(4)));
                            }
                        }
                    }
                    // The audit record commits with the change or not at all.
                    journal.record(c, kind, started, clock.instant(), who, true, actionSummary(verb, rows.size(), filter, reason),
                            actionDetail(filter, reason, rows));
                    return rows;
                });
            } catch (SQLException | RuntimeException e) {
                rows.clear();
                journal.record(kind, started, clock.instant(), who, false, Journal.failureSummary(verb + " of " + filter, e),
                        withSelection(Journal.failure(e), filter, reason));
                throw e;
            }
        } catch (SQLException e) {
            throw described(e);
        }
        for (DeadLetterChange.Row r : rows) {
            if (reason == null) {
                AUDIT.info("dead-letter {} id={} aggregate={}/{} seq={} by={}", verb, r.id(), r.aggregateType(),
                        r.aggregateId(), r.seq(), who);
            } else {
                AUDIT.info("dead-letter {} id={} aggregate={}/{} seq={} by={} reason={}", verb, r.id(), r.aggregateType(),
                        r.aggregateId(), r.seq(), who, reason);
            }
        }
        Set<UUID> done = new HashSet<>();
        rows.forEach(r -> done.add(r.id()));
        List<UUID> missing = filter.ids().stream().filter(id -> !done.contains(id)).toList();
        return new DeadLetterChange(action, rows, missing);
    }

    private static String actionSummary(String verb, int n, DeadLetterFilter filter, String reason) {
        return (verb.equals("retry") ? "retried " : "discarded ") + n + " dead letter(s) of " + filter
                + (reason == null ? "" : "; reason: " + reason);
    }

    private static Map<String, Object> actionDetail(DeadLetterFilter filter, String reason, List<DeadLetterChange.Row> rows) {
        Map<String, Object> d = withSelection(new LinkedHashMap<>(), filter, reason);
        d.put("count", rows.size());
        d.put("ids", rows.stream().map(r -> r.id().toString()).toList());
        return d;
    }

    private static Map<String, Object> withSelection(Map<String, Object> d, DeadLetterFilter filter, String reason) {
        d.put("selection", filter.toString());
        if (reason != null) {
            d.put("reason", reason);
        }
        return d;
    }

    /** Largest {@code limit} of {@link #journal}. */
    public static final int MAX_JOURNAL_LIMIT = 1_000;

    /**
     * The latest entries of the operations journal ({@code outbox_ops_journal}, schema version 12) of the given kinds,
     * the most recently finished first: what the last reconciliation found, what retention purged, who retried or
     * discarded what. Reads at most {@code limit} rows per kind through the index on {@code (kind, finished_at)}.
     * Needs {@code SELECT} on {@code outbox_ops_journal}.
     *
     * @param limit how many entries, 1 to {@value #MAX_JOURNAL_LIMIT}
     * @param kinds which kinds; none: every kind
     * @throws IllegalStateException when the schema has no journal yet (older than version 12), naming the fix
     * @throws dev.outboxkit.core.MissingGrantsException naming the grant when the role lacks it
     */
    public List<JournalEntry> journal(int limit, JournalEntry.Kind... kinds) throws SQLException {
        if (limit < 1 || limit > MAX_JOURNAL_LIMIT) {
            throw new IllegalArgumentException("limit must be between 1 and " + MAX_JOURNAL_LIMIT + ", got " + limit);
        }
        List<JournalEntry.Kind> which = kinds.length == 0 ? List.of(JournalEntry.Kind.values())
                : new ArrayList<>(new java.util.LinkedHashSet<>(List.of(kinds)));
        try (Connection c = connection(journalGrants)) {
            return readJournal(c, limit, which);
        } catch (SQLException e) {
            if (UNDEFINED_TABLE.equals(e.getSQLState()) && schemaExists() && !journal.existsNow()) {
                throw new IllegalStateException("schema '" + tables.schema() + "' has no operations journal ("
                        + OutboxTables.OPS_JOURNAL + ", schema version 12): run 'outbox migrate --schema " + tables.schema()
                        + "' (Migrations.migrate in Java)", e);
            }
            throw described(e);
        }
    }

    private List<JournalEntry> readJournal(Connection c, int limit, List<JournalEntry.Kind> which) throws SQLException {
        String one = "(SELECT id, kind, started_at, finished_at, actor, outcome, summary, detail::text AS detail FROM "
                + tables.opsJournal() + " WHERE kind = ? ORDER BY finished_at DESC LIMIT " + limit + ")";
        String sql = "SELECT * FROM (" + String.join(" UNION ALL ", java.util.Collections.nCopies(which.size(), one))
                + ") j ORDER BY finished_at DESC, id DESC LIMIT " + limit;
        List<JournalEntry> out = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < which.size(); i++) {
                ps.setString(i + 1, which.get(i).code());
            }
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(new JournalEntry(rs.getLong(1), JournalEntry.Kind.ofCode(rs.getString(2)),
                            instant(rs.getTimestamp(3)), instant(rs.getTimestamp(4)), rs.getString(5),
                            JournalEntry.Outcome.valueOf(rs.getString(6).toUpperCase(java.util.Locale.ROOT)),
                            rs.getString(7), Journal.parse(rs.getString(8))));
                }
            }
        }
        return out;
    }

    /**
     * Publishes kept events again: clears {@code published_at} of the selected rows that a relay in {@code MARK} mode
     * published and kept, in one statement. For ids that cannot be replayed the result says where they are instead.
     *
     * @param dryRun   only find what would be replayed
     * @param operator who asks, for the audit lines; required (also in a dry run, which logs nothing)
     */
    public ReplayResult replay(ReplaySelection selection, boolean dryRun, String operator) throws SQLException {
        String who = requireOperator(operator);
        String outbox = tables.outboxEvent();
        String where = selection.byIds() ? "id = ANY (?)" : "created_at >= ? AND created_at < ?";
        String sql = dryRun
                ? "SELECT id, aggregate_type, aggregate_id FROM " + outbox + " WHERE published_at IS NOT NULL AND " + where
                : "UPDATE " + outbox + " SET published_at = NULL, attempts = 0 WHERE published_at IS NOT NULL AND " + where
                        + " RETURNING id, aggregate_type, aggregate_id";
        Map<UUID, ReplayResult.Event> replayed = new LinkedHashMap<>();
        Map<UUID, ReplayResult.NotReplayed> notReplayed = new LinkedHashMap<>();
        try (Connection c = connection(replayGrants)) {
            try (PreparedStatement ps = c.prepareStatement(sql)) {
                if (selection.byIds()) {
                    ps.setArray(1, c.createArrayOf("uuid", selection.ids().toArray()));
                } else {
                    ps.setTimestamp(1, Timestamp.from(selection.from()));
                    ps.setTimestamp(2, Timestamp.from(selection.to() == null ? clock.instant() : selection.to()));
                }
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        UUID id = rs.getObject(1, UUID.class);
                        replayed.put(id, new ReplayResult.Event(id, rs.getString(2), rs.getString(3)));
                    }
                }
            }
            if (!dryRun) {
                replayed.values().forEach(e -> AUDIT.info("replay id={} aggregate={}/{} by={}", e.id(), e.aggregateType(),
                        e.aggregateId(), who));
            }
            for (UUID id : selection.ids()) {
                if (!replayed.containsKey(id)) {
                    notReplayed.put(id, whereIs(c, id));
                }
            }
        } catch (SQLException e) {
            throw described(e);
        }
        return new ReplayResult(dryRun, List.copyOf(replayed.values()), notReplayed);
    }

    private ReplayResult.NotReplayed whereIs(Connection c, UUID id) throws SQLException {
        if (exists(c, "SELECT 1 FROM " + tables.outboxEvent() + " WHERE id = ?", id)) {
            return ReplayResult.NotReplayed.UNPUBLISHED;
        }
        if (exists(c, "SELECT 1 FROM " + tables.deadLetter() + " WHERE id = ?", id)) {
            return ReplayResult.NotReplayed.PARKED;
        }
        return ReplayResult.NotReplayed.NOT_KEPT;
    }

    private static boolean exists(Connection c, String sql, Object key) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setObject(1, key);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next();
            }
        }
    }

    private static String requireOperator(String operator) {
        if (operator == null || operator.isBlank()) {
            throw new IllegalArgumentException("operator must name who asks (it goes into the audit lines), e.g. alice@host");
        }
        return operator;
    }

    /**
     * {@code e}, or when it says a table is undefined, an error naming the schema and the fix. Called after the
     * failed statement's connection is back in the pool, since it takes one to look the schema up.
     */
    private SQLException described(SQLException e) {
        if (!UNDEFINED_TABLE.equals(e.getSQLState())) {
            return e;
        }
        boolean schemaExists;
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement("SELECT 1 FROM pg_namespace WHERE nspname = ?")) {
            ps.setString(1, tables.schema());
            try (ResultSet rs = ps.executeQuery()) {
                schemaExists = rs.next();
            }
        } catch (SQLException again) {
            e.addSuppressed(again);
            return e;
        }
        String what = schemaExists ? "schema '" + tables.schema() + "' does not hold the outboxkit tables"
                : "schema '" + tables.schema() + "' does not exist in this database";
        throw new IllegalStateException(what + ": name the schema that holds them (--schema, outboxkit.schema, the"
                + " builder's outboxDatabase(dataSource, schema)), or create them there with 'outbox migrate --schema "
                + tables.schema() + "' (Migrations.migrate in Java)", e);
    }

    /** Whether {@code qualified} (a table's quoted, schema-qualified name) exists now. */
    private boolean tableExists(String qualified) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement("SELECT to_regclass(?) IS NOT NULL")) {
            ps.setString(1, qualified);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getBoolean(1);
            }
        }
    }

    private boolean schemaExists() throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement("SELECT 1 FROM pg_namespace WHERE nspname = ?")) {
            ps.setString(1, tables.schema());
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next();
            }
        }
    }

    /** The conditions of a {@link DeadLetterFilter} as SQL with positional parameters. */
    private static final class Where {
        private final List<String> conditions = new ArrayList<>();
        private final List<Object> params = new ArrayList<>();

        static Where of(DeadLetterFilter f) {
            if (f == null) {
                throw new IllegalArgumentException("filter is required: DeadLetterFilter.all() or DeadLetterFilter.ids(…)");
            }
            Where w = new Where();
            if (f.byIds()) {
                w.add("id = ANY (?)", f.ids());
            }
            if (f.aggregateType() != null) {
                w.add("aggregate_type = ?", f.aggregateType());
            }
            if (f.eventType() != null) {
                w.add("event_type = ?", f.eventType());
            }
            if (f.errorClass() != null) {
                w.add("(error_class = ? OR right(error_class, length(?) + 1) = '.' || ?)", f.errorClass(), f.errorClass(),
                        f.errorClass());
            }
            if (f.messagePattern() != null) {
                // The LIKE is implied by the pattern (its literal parts, in order) and much cheaper than the
                // normalisation: rows it rules out never reach the regular expression.
                w.add("error_message LIKE ?", likeOf(f.messagePattern()));
                w.add(MESSAGE_PATTERN + " = ?", f.messagePattern());
            }
            if (f.parkedAfter() != null) {
                w.add("parked_at >= ?", f.parkedAfter());
            }
            if (f.parkedBefore() != null) {
                w.add("parked_at < ?", f.parkedBefore());
            }
            return w;
        }

        /** A LIKE pattern every message normalised to {@code messagePattern} matches: its placeholders become {@code %}. */
        static String likeOf(String messagePattern) {
            String literal = messagePattern.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_");
            return literal.replace("{}", "%");
        }

        void add(String condition, Object... values) {
            conditions.add(condition);
            params.addAll(List.of(values));
        }

        String sql() {
            return conditions.isEmpty() ? "" : " WHERE " + String.join(" AND ", conditions);
        }

        void bind(Connection c, PreparedStatement ps, int first) throws SQLException {
            int i = first;
            for (Object p : params) {
                if (p instanceof List<?> ids) {
                    ps.setArray(i++, c.createArrayOf("uuid", ids.toArray()));
                } else if (p instanceof Instant t) {
                    ps.setTimestamp(i++, Timestamp.from(t));
                } else {
                    ps.setObject(i++, p);
                }
            }
        }
    }

    /** Configuration; {@link #build()} validates it. */
    public static final class Builder {
        private final OpsSettings settings = new OpsSettings();

        private Builder() {
        }

        /**
         * The outbox database and the schema holding its tables (default {@value OutboxTables#DEFAULT_SCHEMA}).
         * Required. A pool of one or two connections is plenty: each operation uses one connection at a time.
         */
        public Builder outboxDatabase(DataSource dataSource, String schema) {
            settings.outboxDatabase(dataSource, schema);
            return this;
        }

        /**
         * The old name of {@link #outboxDatabase(DataSource, String)}, which it calls.
         *
         * @deprecated use {@link #outboxDatabase(DataSource, String)}; removed in 0.2.0
         */
        @Deprecated(since = "0.1.0", forRemoval = true)
        public Builder producer(DataSource dataSource, String schema) {
            return outboxDatabase(dataSource, schema);
        }

        /** The clock that ends an open replay range ({@link ReplaySelection#createdBetween} with no end). Default UTC. */
        public Builder clock(Clock clock) {
            settings.clock(clock);
            return this;
        }

        /**
         * @throws IllegalArgumentException when the DataSource is missing or the schema is not a legal identifier
         */
        public OutboxAdmin build() {
            return new OutboxAdmin(settings.resolve());
        }
    }
}
