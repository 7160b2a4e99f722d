package dev.outboxkit.ops.reconcile;

import dev.outboxkit.core.MissingGrantsException;
import dev.outboxkit.core.OutboxTables;
import dev.outboxkit.core.spi.RoleGrants;
import dev.outboxkit.ops.OpsBuilder;
import dev.outboxkit.ops.admin.JournalEntry;
import dev.outboxkit.ops.internal.Checks;
import dev.outboxkit.ops.internal.Journal;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
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
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.StringJoiner;
import java.util.UUID;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Compares the outbox database's intent ledger ({@code outbox_intent}) with the effects recorded by
 * consumer groups ({@code processed_event}, {@code external_effect}), possibly in other databases,
 * over a bounded window, and reports what no idempotency window prevents:
 * {@link Finding.Kind lost, phantom, duplicate, late and unknown-outcome} events.
 *
 * <p>How: the intents created in {@code [now - lookback, now)} are streamed from the outbox database
 * in batches of {@code batchSize} into a temporary table on each consumer database, then each
 * check is one set-based query there. Effects without an intent in the window are looked up by
 * id in the whole ledger before they are called phantom, so a consumer draining an old backlog
 * is not mistaken for one. Nothing is written to either database but one entry per run in the operations journal
 * ({@code outbox_ops_journal}: the counts per kind and the first findings, or the failure), skipped with a WARN on a
 * schema older than version 12.
 *
 * <pre>{@code
 * Report r = Reconciler.builder()
 *         .outboxDatabase(ordersDs, "public")
 *         .consumer(new ConsumerSource("billing", billingDs, "public", List.of("billing")))
 *         .build()
 *         .run();
 * }</pre>
 */
public final class Reconciler {

    /** Default {@link Builder#lookback}: 24 hours. */
    public static final Duration DEFAULT_LOOKBACK = Duration.ofHours(24);
    /** Default {@link Builder#grace}: 15 minutes. */
    public static final Duration DEFAULT_GRACE = Duration.ofMinutes(15);
    /** Default {@link Builder#dedupeWindow}: 7 days (consumer-dedupe's default retention). */
    public static final Duration DEFAULT_DEDUPE_WINDOW = Duration.ofDays(7);

    private static final Logger log = LoggerFactory.getLogger(Reconciler.class);

    private final DataSource outboxDatabase;
    private final String schema;
    private final List<ConsumerSource> consumers;
    private final Duration lookback;
    private final Duration grace;
    private final Duration dedupeWindow;
    private final int batchSize;
    private final int maxFindingsPerKind;
    private final Clock clock;
    private final MeterRegistry registry;
    private final Timer duration;

    private final OutboxTables tables;
    private final Journal journal;
    private final String actor;

    private Reconciler(Builder b, OpsBuilder.Resolved p) {
        this.outboxDatabase = p.dataSource();
        this.schema = p.schema();
        this.tables = p.tables();
        this.consumers = List.copyOf(b.consumers);
        this.lookback = b.lookback;
        this.grace = b.grace;
        this.dedupeWindow = b.dedupeWindow;
        this.batchSize = b.batchSize;
        this.maxFindingsPerKind = b.maxFindingsPerKind;
        this.actor = b.actorName;
        this.journal = new Journal(outboxDatabase, tables);
        this.clock = p.clock();
        this.registry = p.registry();
        this.duration = Timer.builder("outbox.reconcile.duration").description("Wall time of one reconciliation")
                .register(registry);
        for (Finding.Kind k : Finding.Kind.values()) {
            counter(k);
        }
    }

    public static Builder builder() {
        return new Builder();
    }

    private Counter counter(Finding.Kind kind) {
        return Counter.builder("outbox.reconcile.findings").description("Anomalies found by reconciliation")
                .tag("kind", kind.name().toLowerCase(java.util.Locale.ROOT)).register(registry);
    }

    /**
     * Runs one reconciliation.
     *
     * @throws MissingGrantsException before anything is read, when a role lacks a privilege outbox-ops/README.md lists
     *                                for reconcile (outbox or consumer database), with the statements to run
     * @throws IllegalStateException when the intent ledger's trigger is disabled
     * @throws SQLException on database errors (nothing is written but the run's failure entry in the operations journal)
     */
    public Report run() throws SQLException {
        requireGrants();
        Instant startedAt = clock.instant();
        Report report;
        try {
            report = reconcile();
        } catch (SQLException | RuntimeException e) {
            journal.record(JournalEntry.Kind.RECONCILE, startedAt, clock.instant(), actor, false,
                    Journal.failureSummary("reconciliation", e), Journal.failure(e));
            throw e;
        }
        journal.record(JournalEntry.Kind.RECONCILE, startedAt, clock.instant(), actor, true, summary(report), detail(report));
        return report;
    }

    private Report reconcile() throws SQLException {
        long started = System.nanoTime();
        Instant until = clock.instant();
        Instant since = until.minus(lookback);
        Run run = new Run(since, until);
        if (!new IntentLedger(outboxDatabase, schema).enabled()) {
            throw new IllegalStateException("the intent ledger is disabled in schema " + schema
                    + ": every effect would look like a phantom; switch it on with outbox intents enable"
                    + " (IntentLedger.enable()) and reconcile once it covers the lookback window");
        }
        unknownIdempotencyKeys(run);
        for (ConsumerSource consumer : consumers) {
            reconcile(consumer, run);
        }
        Duration took = Duration.ofNanos(System.nanoTime() - started);
        duration.record(took);
        run.counts.forEach((k, n) -> counter(k).increment(n));
        Report report = new Report(since, until, run.intents, run.counts, run.findings, took);
        log.info("reconciled {} intents from {} to {} against {} consumer source(s) in {} ms: {}", run.intents, since,
                until, consumers.size(), took.toMillis(), report.counts());
        return report;
    }

    private String summary(Report r) {
        StringBuilder sb = new StringBuilder("reconciled ").append(r.intents()).append(" intent(s) against ")
                .append(consumers.size()).append(" consumer source(s): ");
        if (r.clean()) {
            return sb.append("clean").toString();
        }
        StringJoiner found = new StringJoiner(", ");
        r.counts().forEach((k, n) -> {
            if (n > 0) {
                found.add(n + " " + code(k));
            }
        });
        return sb.append(found).toString();
    }

    /** The journal's detail: the window, the counts per kind, and the first findings (each names an event, never a payload). */
    private Map<String, Object> detail(Report r) {
        Map<String, Object> d = new java.util.LinkedHashMap<>();
        d.put("since", r.since().toString());
        d.put("until", r.until().toString());
        d.put("intents", r.intents());
        d.put("consumers", consumers.stream().map(ConsumerSource::name).toList());
        Map<String, Object> counts = new java.util.LinkedHashMap<>();
        r.counts().forEach((k, n) -> counts.put(code(k), n));
        d.put("counts", counts);
        List<Map<String, Object>> first = new ArrayList<>();
        for (Finding f : r.findings().subList(0, Math.min(Journal.MAX_LISTED, r.findings().size()))) {
            Map<String, Object> m = new java.util.LinkedHashMap<>();
            m.put("kind", code(f.kind()));
            m.put("where", f.where());
            m.put("subject", f.subject());
            String eventId = eventId(f.subject());
            if (eventId != null) {
                m.put("eventId", eventId);
            }
            m.put("detail", f.detail());
            first.add(m);
        }
        d.put("findings", first);
        return d;
    }

    /** A finding kind as the journal and the metrics name it: {@code lost}, {@code duplicate_effect}, … */
    private static String code(Finding.Kind kind) {
        return kind.name().toLowerCase(java.util.Locale.ROOT);
    }

    /** The event id a finding's subject names ({@code <id>} or {@code <effect>/<id>}); null for an idempotency key. */
    private static String eventId(String subject) {
        String last = subject.substring(subject.lastIndexOf('/') + 1);
        try {
            return UUID.fromString(last).toString().equals(last.toLowerCase(java.util.Locale.ROOT)) ? last : null;
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /** Every database's privileges before any work: one round trip each (a run reads for minutes, so once per run). */
    private void requireGrants() throws SQLException {
        try (Connection c = outboxDatabase.getConnection()) {
            RoleGrants.reconcileOutboxDatabase(schema).require(c, "outbox reconcile (outbox database, schema " + schema + ")");
        }
        for (ConsumerSource consumer : consumers) {
            try (Connection c = consumer.dataSource().getConnection()) {
                // TEMPORARY: the window's intents are copied into a temporary table there.
                RoleGrants.reconcileConsumer(consumer.schema()).require(c, "outbox reconcile (consumer " + consumer.name() + ", schema " + consumer.schema() + ")");
            }
        }
    }

    private final class Run {
        final Instant since;
        final Instant until;
        final Map<Finding.Kind, Long> counts = new EnumMap<>(Finding.Kind.class);
        final List<Finding> findings = new ArrayList<>();
        long intents;

        Run(Instant since, Instant until) {
            this.since = since;
            this.until = until;
        }

        void count(Finding.Kind kind, long n) {
            counts.merge(kind, n, Long::sum);
        }

        void add(Finding f) {
            findings.add(f);
        }
    }

    private void unknownIdempotencyKeys(Run run) throws SQLException {
        String sql = "SELECT scope, idem_key, locked_until, count(*) OVER () FROM "
                + tables.idempotencyKey()
                + " WHERE state = 'in_progress' AND locked_until < ? ORDER BY locked_until LIMIT " + maxFindingsPerKind;
        try (Connection c = outboxDatabase.getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setTimestamp(1, Timestamp.from(run.until));
            try (ResultSet rs = ps.executeQuery()) {
                boolean first = true;
                while (rs.next()) {
                    if (first) {
                        run.count(Finding.Kind.UNKNOWN_OUTCOME, rs.getLong(4));
                        first = false;
                    }
                    run.add(new Finding(Finding.Kind.UNKNOWN_OUTCOME, "producer", rs.getString(1) + "/" + rs.getString(2),
                            "idempotency key in_progress, lease ended " + rs.getTimestamp(3).toInstant()));
                }
            }
        }
    }

    private void reconcile(ConsumerSource consumer, Run run) throws SQLException {
        String processed = OutboxTables.in(consumer.schema()).processedEvent();
        String effects = OutboxTables.in(consumer.schema()).externalEffect();
        try (Connection c = consumer.dataSource().getConnection()) {
            boolean autoCommit = c.getAutoCommit();
            c.setAutoCommit(false);
            try {
                run.intents += loadIntents(c, consumer, run);
                for (String group : consumer.groups()) {
                    String where = consumer.name() + "/" + group;
                    lost(c, processed, group, where, run);
                    late(c, processed, group, where, run);
                    phantoms(c, processed, group, where, run);
                }
                externalEffects(c, effects, consumer.name(), run);
            } finally {
                c.rollback();
                c.setAutoCommit(autoCommit);
            }
        }
    }

    /** Streams the window's intents from the outbox database into a temporary table on {@code c}. */
    private long loadIntents(Connection c, ConsumerSource consumer, Run run) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute("CREATE TEMP TABLE outbox_reconcile_intent (event_id uuid PRIMARY KEY, created_at timestamptz NOT NULL)"
                    + " ON COMMIT DROP");
        }
        long loaded = 0;
        String select = "SELECT event_id, created_at FROM " + tables.intent()
                + " WHERE created_at >= ? AND created_at < ?"
                + (consumer.aggregateTypes().isEmpty() ? "" : " AND aggregate_type = ANY (?)");
        try (Connection p = outboxDatabase.getConnection();
             PreparedStatement insert = c.prepareStatement("INSERT INTO outbox_reconcile_intent"
                     + " SELECT * FROM unnest(?::uuid[], ?::timestamptz[]) ON CONFLICT DO NOTHING")) {
            boolean autoCommit = p.getAutoCommit();
            p.setAutoCommit(false); // a cursor: batchSize rows at a time
            try (PreparedStatement ps = p.prepareStatement(select)) {
                ps.setFetchSize(batchSize);
                ps.setTimestamp(1, Timestamp.from(run.since));
                ps.setTimestamp(2, Timestamp.from(run.until));
                if (!consumer.aggregateTypes().isEmpty()) {
                    ps.setArray(3, p.createArrayOf("text", consumer.aggregateTypes().toArray()));
                }
                List<UUID> ids = new ArrayList<>(batchSize);
                List<Timestamp> created = new ArrayList<>(batchSize);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        ids.add(rs.getObject(1, UUID.class));
                        created.add(rs.getTimestamp(2));
                        if (ids.size() == batchSize) {
                            loaded += flush(c, insert, ids, created);
                        }
                    }
                }
                loaded += flush(c, insert, ids, created);
            } finally {
                p.rollback();
                p.setAutoCommit(autoCommit);
            }
        }
        try (Statement s = c.createStatement()) {
            s.execute("ANALYZE outbox_reconcile_intent");
        }
        return loaded;
    }

    private static int flush(Connection c, PreparedStatement insert, List<UUID> ids, List<Timestamp> created)
            throws SQLException {
        if (ids.isEmpty()) {
            return 0;
        }
        insert.setArray(1, c.createArrayOf("uuid", ids.toArray()));
        insert.setArray(2, c.createArrayOf("timestamptz", created.toArray()));
        insert.executeUpdate();
        int n = ids.size();
        ids.clear();
        created.clear();
        return n;
    }

    private void lost(Connection c, String processed, String group, String where, Run run) throws SQLException {
        String sql = "SELECT i.event_id, i.created_at, count(*) OVER () FROM outbox_reconcile_intent i"
                + " WHERE i.created_at < ? AND NOT EXISTS (SELECT 1 FROM " + processed + " p"
                + " WHERE p.consumer_group = ? AND p.event_id = i.event_id)"
                + " ORDER BY i.created_at LIMIT " + maxFindingsPerKind;
        Map<UUID, Instant> lost = new java.util.LinkedHashMap<>();
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setTimestamp(1, Timestamp.from(run.until.minus(grace)));
            ps.setString(2, group);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    if (lost.isEmpty()) {
                        run.count(Finding.Kind.LOST, rs.getLong(3));
                    }
                    lost.put(rs.getObject(1, UUID.class), rs.getTimestamp(2).toInstant());
                }
            }
        }
        if (lost.isEmpty()) {
            return;
        }
        Map<UUID, String> state = outboxState(lost.keySet());
        lost.forEach((id, created) -> run.add(new Finding(Finding.Kind.LOST, where, id.toString(),
                "created " + created + ", no effect after the " + grace + " grace period; "
                        + state.getOrDefault(id, "no longer in the outbox and no publication recorded (never published,"
                        + " or written in INSERT_AND_DELETE mode, or forgotten while the ledger triggers were off)"))));
    }

    /** Whether lost intents are still waiting in the outbox or parked as dead letters: stuck rather than lost. */
    private Map<UUID, String> outboxState(java.util.Collection<UUID> ids) throws SQLException {
        Map<UUID, String> state = new HashMap<>();
        try (Connection p = outboxDatabase.getConnection();
             PreparedStatement ps = p.prepareStatement("SELECT id, published_at IS NULL FROM "
                     + tables.outboxEvent() + " WHERE id = ANY (?)");
             PreparedStatement ledger = p.prepareStatement("SELECT event_id, max(published_at) FROM "
                     + tables.intent() + " WHERE event_id = ANY (?) AND published_at IS NOT NULL"
                     + " GROUP BY event_id");
             PreparedStatement dl = p.prepareStatement("SELECT id FROM "
                     + tables.deadLetter() + " WHERE id = ANY (?)")) {
            java.sql.Array array = p.createArrayOf("uuid", ids.toArray());
            ps.setArray(1, array);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    state.put(rs.getObject(1, UUID.class), rs.getBoolean(2)
                            ? "stuck: still unpublished in outbox_event" : "published (marked) but never applied");
                }
            }
            // The ledger's published_at (schema version 7): published, so the effect is what went missing.
            ledger.setArray(1, array);
            try (ResultSet rs = ledger.executeQuery()) {
                while (rs.next()) {
                    state.putIfAbsent(rs.getObject(1, UUID.class), "published " + rs.getTimestamp(2).toInstant()
                            + " but never applied");
                }
            }
            dl.setArray(1, array);
            try (ResultSet rs = dl.executeQuery()) {
                while (rs.next()) {
                    state.put(rs.getObject(1, UUID.class), "stuck: parked in outbox_dead_letter");
                }
            }
        }
        return state;
    }

    private void late(Connection c, String processed, String group, String where, Run run) throws SQLException {
        String sql = "SELECT p.event_id, i.created_at, p.processed_at, count(*) OVER ()"
                + " FROM outbox_reconcile_intent i JOIN " + processed + " p"
                + " ON p.consumer_group = ? AND p.event_id = i.event_id"
                + " WHERE p.processed_at > i.created_at + make_interval(secs => ?)"
                + " ORDER BY p.processed_at LIMIT " + maxFindingsPerKind;
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, group);
            ps.setDouble(2, dedupeWindow.toMillis() / 1000.0);
            try (ResultSet rs = ps.executeQuery()) {
                boolean first = true;
                while (rs.next()) {
                    if (first) {
                        run.count(Finding.Kind.LATE_ARRIVAL, rs.getLong(4));
                        first = false;
                    }
                    run.add(lateArrival(where, rs.getObject(1, UUID.class), rs.getTimestamp(2).toInstant(),
                            rs.getTimestamp(3).toInstant()));
                }
            }
        }
    }

    private Finding lateArrival(String where, UUID id, Instant created, Instant processedAt) {
        return new Finding(Finding.Kind.LATE_ARRIVAL, where, id.toString(), "created " + created + ", applied "
                + processedAt + ": " + Duration.between(created, processedAt) + " later, beyond the " + dedupeWindow
                + " dedupe window");
    }

    /**
     * Effects processed in the window without an intent in the window; each candidate is then
     * looked up in the whole ledger (an old intent drained late is not a phantom, maybe a late arrival).
     */
    private void phantoms(Connection c, String processed, String group, String where, Run run) throws SQLException {
        String sql = "SELECT p.event_id, p.processed_at FROM " + processed + " p"
                + " WHERE p.consumer_group = ? AND p.processed_at >= ?"
                + " AND NOT EXISTS (SELECT 1 FROM outbox_reconcile_intent i WHERE i.event_id = p.event_id)";
        Map<UUID, Instant> candidates = new java.util.LinkedHashMap<>();
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setFetchSize(batchSize);
            ps.setString(1, group);
            ps.setTimestamp(2, Timestamp.from(run.since));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    candidates.put(rs.getObject(1, UUID.class), rs.getTimestamp(2).toInstant());
                    if (candidates.size() == batchSize) {
                        checkCandidates(candidates, where, run);
                    }
                }
            }
        }
        checkCandidates(candidates, where, run);
    }

    private void checkCandidates(Map<UUID, Instant> candidates, String where, Run run) throws SQLException {
        if (candidates.isEmpty()) {
            return;
        }
        Map<UUID, Instant> known = new HashMap<>();
        try (Connection p = outboxDatabase.getConnection();
             PreparedStatement ps = p.prepareStatement("SELECT event_id, min(created_at) FROM "
                     + tables.intent() + " WHERE event_id = ANY (?) GROUP BY event_id")) {
            ps.setArray(1, p.createArrayOf("uuid", candidates.keySet().toArray()));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    known.put(rs.getObject(1, UUID.class), rs.getTimestamp(2).toInstant());
                }
            }
        }
        for (Map.Entry<UUID, Instant> e : candidates.entrySet()) {
            Instant created = known.get(e.getKey());
            if (created == null) {
                if (run.counts.getOrDefault(Finding.Kind.PHANTOM, 0L) < maxFindingsPerKind) {
                    run.add(new Finding(Finding.Kind.PHANTOM, where, e.getKey().toString(), "applied " + e.getValue()
                            + ", no intent with this id in the ledger"));
                }
                run.count(Finding.Kind.PHANTOM, 1);
            } else if (Duration.between(created, e.getValue()).compareTo(dedupeWindow) > 0) {
                if (run.counts.getOrDefault(Finding.Kind.LATE_ARRIVAL, 0L) < maxFindingsPerKind) {
                    run.add(lateArrival(where, e.getKey(), created, e.getValue()));
                }
                run.count(Finding.Kind.LATE_ARRIVAL, 1);
            }
        }
        candidates.clear();
    }

    private void externalEffects(Connection c, String effects, String where, Run run) throws SQLException {
        String duplicates = "SELECT effect_name, event_id, attempt, finished_at, count(*) OVER () FROM " + effects
                + " WHERE claimed_at >= ? AND attempt > 1 AND state = 'succeeded'"
                + " ORDER BY claimed_at LIMIT " + maxFindingsPerKind;
        try (PreparedStatement ps = c.prepareStatement(duplicates)) {
            ps.setTimestamp(1, Timestamp.from(run.since));
            try (ResultSet rs = ps.executeQuery()) {
                boolean first = true;
                while (rs.next()) {
                    if (first) {
                        run.count(Finding.Kind.DUPLICATE_EFFECT, rs.getLong(5));
                        first = false;
                    }
                    run.add(new Finding(Finding.Kind.DUPLICATE_EFFECT, where, rs.getString(1) + "/" + rs.getString(2),
                            "succeeded on attempt " + rs.getInt(3) + " after an attempt with an unknown outcome:"
                                    + " performed twice unless the downstream honoured the idempotency key"));
                }
            }
        }
        String unknown = "SELECT effect_name, event_id, state, lease_until, count(*) OVER () FROM " + effects
                + " WHERE state = 'unknown' OR (state = 'in_progress' AND lease_until < ?)"
                + " ORDER BY lease_until LIMIT " + maxFindingsPerKind;
        try (PreparedStatement ps = c.prepareStatement(unknown)) {
            ps.setTimestamp(1, Timestamp.from(run.until));
            try (ResultSet rs = ps.executeQuery()) {
                boolean first = true;
                while (rs.next()) {
                    if (first) {
                        run.count(Finding.Kind.UNKNOWN_OUTCOME, rs.getLong(5));
                        first = false;
                    }
                    run.add(new Finding(Finding.Kind.UNKNOWN_OUTCOME, where, rs.getString(1) + "/" + rs.getString(2),
                            "external effect " + rs.getString(3) + ", lease ended " + rs.getTimestamp(4).toInstant()));
                }
            }
        }
    }

    /**
     * Configuration; {@link #build()} validates it. The outbox database and schema ({@link #outboxDatabase}, required)
     * hold {@code outbox_intent}, {@code outbox_event} and {@code idempotency_key}; the {@link #clock}'s now ends the
     * reconciled window; the {@link #meterRegistry} receives the {@code outbox.reconcile.*} meters.
     */
    public static final class Builder extends OpsBuilder<Builder> {
        private final List<ConsumerSource> consumers = new ArrayList<>();
        private Duration lookback = DEFAULT_LOOKBACK;
        private Duration grace = DEFAULT_GRACE;
        private Duration dedupeWindow = DEFAULT_DEDUPE_WINDOW;
        private int batchSize = 10_000;
        private int maxFindingsPerKind = 100;

        private String actorName;

        private Builder() {
        }

        /** A consumer database with its groups (repeatable; at least one). */
        public Builder consumer(ConsumerSource consumer) {
            consumers.add(Objects.requireNonNull(consumer, "consumer"));
            return this;
        }

        /** How far back intents and effects are scanned. Default 24 h; must exceed grace and stay below the processed_event retention. */
        public Builder lookback(Duration lookback) {
            this.lookback = lookback;
            return this;
        }

        /** How old an intent must be before a missing effect counts as lost. Default 15 min. */
        public Builder grace(Duration grace) {
            this.grace = grace;
            return this;
        }

        /** The consumers' dedupe window (processed_event retention): an effect later than this after its intent is a late arrival. Default 7 days. */
        public Builder dedupeWindow(Duration dedupeWindow) {
            this.dedupeWindow = dedupeWindow;
            return this;
        }

        /** Rows per fetch and per insert when copying intents. Default 10000. */
        public Builder batchSize(int batchSize) {
            this.batchSize = batchSize;
            return this;
        }

        /** Findings listed per kind (counts stay exact). Default 100. */
        public Builder maxFindingsPerKind(int maxFindingsPerKind) {
            this.maxFindingsPerKind = maxFindingsPerKind;
            return this;
        }

        public Reconciler build() {
            Resolved resolved = resolveSettings();
            if (consumers.isEmpty()) {
                throw new IllegalArgumentException("at least one consumer is required");
            }
            Checks.requirePositive("lookback", lookback);
            Checks.requirePositive("grace", grace);
            Checks.requirePositive("dedupeWindow", dedupeWindow);
            if (grace.compareTo(lookback) >= 0) {
                throw new IllegalArgumentException("grace must be shorter than lookback, got grace " + grace
                        + " and lookback " + lookback);
            }
            if (batchSize < 1 || batchSize > 100_000) {
                throw new IllegalArgumentException("batchSize must be between 1 and 100000, got " + batchSize);
            }
            if (maxFindingsPerKind < 1 || maxFindingsPerKind > 100_000) {
                throw new IllegalArgumentException("maxFindingsPerKind must be between 1 and 100000, got " + maxFindingsPerKind);
            }
            actorName = resolvedActor();
            return new Reconciler(this, resolved);
        }
    }
}
