package dev.outboxkit.ops.reconcile;

import dev.outboxkit.core.Identifiers;
import dev.outboxkit.core.OutboxTables;
import dev.outboxkit.core.spi.Transactions;
import dev.outboxkit.ops.internal.ChunkedDelete;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The intent ledger {@code outbox_intent}: switching its triggers on and off, creating day
 * partitions ahead, and dropping expired ones whole. Day partitions are named
 * {@code outbox_intent_pYYYYMMDD} (UTC days); rows for a day without a partition land in
 * {@code outbox_intent_default}, so a writer's insert never fails because of the ledger.
 */
public final class IntentLedger {

    private static final Logger log = LoggerFactory.getLogger(IntentLedger.class);
    private static final Pattern DAY = Pattern.compile("outbox_intent_p(\\d{8})");
    private static final DateTimeFormatter BASIC = DateTimeFormatter.BASIC_ISO_DATE;

    private static final String RECORD_TRIGGER = "outbox_intent_record";
    private static final List<String> EVENT_TRIGGERS = List.of(RECORD_TRIGGER, "outbox_intent_forgotten", "outbox_intent_marked");
    private static final String PARKED_TRIGGER = "outbox_intent_parked";

    private final DataSource dataSource;
    private final String schema;

    public IntentLedger(DataSource dataSource, String schema) {
        this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
        this.schema = Identifiers.requireValid("schema", schema);
    }

    /** What {@link #purge} did (or, in a dry run, would do). */
    public record Purge(List<String> dropped, List<String> keptForBacklog, long defaultRowsDeleted) {
        public Purge {
            dropped = List.copyOf(dropped);
            keptForBacklog = List.copyOf(keptForBacklog);
        }
    }

    /**
     * Switches the ledger on: the V6 trigger that records intents and the V7 triggers that record
     * publication ({@code outbox_intent_forgotten}, {@code outbox_intent_marked} on
     * {@code outbox_event}, {@code outbox_intent_parked} on {@code outbox_dead_letter}), all in one
     * transaction.
     */
    public void enable() throws SQLException {
        alterTriggers("ENABLE");
    }

    /** Switches the ledger off (all four triggers); reconcile then reports every new effect as a phantom, so stop it too. */
    public void disable() throws SQLException {
        alterTriggers("DISABLE");
    }

    private void alterTriggers(String action) throws SQLException {
        StringBuilder events = new StringBuilder();
        for (String trigger : EVENT_TRIGGERS) {
            events.append(events.length() == 0 ? " " : ", ").append(action).append(" TRIGGER ").append(trigger);
        }
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            Transactions.inTransaction(c, tx -> {
                s.execute("ALTER TABLE " + OutboxTables.in(schema).outboxEvent() + events);
                return s.execute("ALTER TABLE " + OutboxTables.in(schema).deadLetter() + " " + action
                        + " TRIGGER " + PARKED_TRIGGER);
            });
        }
    }

    /** Whether the trigger filling the ledger is enabled (the publication triggers follow it: {@link #triggers()}). */
    public boolean enabled() throws SQLException {
        Boolean record = triggers().get(RECORD_TRIGGER);
        if (record == null) {
            throw new IllegalStateException("trigger " + RECORD_TRIGGER + " is missing on " + schema
                    + ".outbox_event: run outbox migrate (schema version 6)");
        }
        return record;
    }

    /**
     * Each ledger trigger with whether it is enabled: {@code outbox_intent_record} (V6, intents),
     * {@code outbox_intent_forgotten}, {@code outbox_intent_marked}, {@code outbox_intent_parked}
     * (V7, published_at). A trigger missing from the map is missing from the schema.
     */
    public Map<String, Boolean> triggers() throws SQLException {
        Map<String, Boolean> state = new LinkedHashMap<>();
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(
                "SELECT t.tgname, t.tgenabled <> 'D' FROM pg_trigger t JOIN pg_class r ON r.oid = t.tgrelid"
                        + " JOIN pg_namespace n ON n.oid = r.relnamespace"
                        + " WHERE n.nspname = ? AND r.relname IN ('outbox_event', 'outbox_dead_letter')"
                        + " AND t.tgname LIKE 'outbox\\_intent\\_%' ORDER BY t.tgname")) {
            ps.setString(1, schema);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    state.put(rs.getString(1), rs.getBoolean(2));
                }
            }
        }
        return state;
    }

    /** Creates the day partitions from {@code today} for {@code days} days (existing ones are kept); returns how many were created. */
    public int createPartitions(LocalDate today, int days) throws SQLException {
        if (days < 1 || days > 366) {
            throw new IllegalArgumentException("days must be between 1 and 366, got " + days);
        }
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(
                "SELECT " + Identifiers.qualified(schema, "outbox_intent_create_partitions") + "(?, ?)")) {
            ps.setObject(1, today);
            ps.setInt(2, days);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }

    /** The day partitions that exist, oldest first. */
    public List<LocalDate> partitions() throws SQLException {
        List<LocalDate> days = new ArrayList<>();
        for (String name : partitionNames()) {
            Matcher m = DAY.matcher(name);
            if (m.matches()) {
                days.add(LocalDate.parse(m.group(1), BASIC));
            }
        }
        days.sort(null);
        return days;
    }

    private List<String> partitionNames() throws SQLException {
        List<String> names = new ArrayList<>();
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(
                "SELECT ch.relname FROM pg_inherits i JOIN pg_class ch ON ch.oid = i.inhrelid"
                        + " JOIN pg_class par ON par.oid = i.inhparent JOIN pg_namespace n ON n.oid = par.relnamespace"
                        + " WHERE n.nspname = ? AND par.relname = 'outbox_intent' ORDER BY ch.relname")) {
            ps.setString(1, schema);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    names.add(rs.getString(1));
                }
            }
        }
        return names;
    }

    /**
     * Drops every day partition that ends at or before {@code cutoff}, and deletes the default
     * partition's rows older than it. Safety rule: a partition is kept while {@code outbox_event}
     * still holds an unpublished event created before the partition's end (its intent must outlive
     * the backlog, or its late effect would look like a phantom).
     */
    public Purge purge(Instant cutoff, boolean dryRun) throws SQLException {
        Objects.requireNonNull(cutoff, "cutoff");
        List<String> dropped = new ArrayList<>();
        List<String> kept = new ArrayList<>();
        Instant oldestUnpublished = oldestUnpublished();
        for (LocalDate day : partitions()) {
            Instant end = day.plusDays(1).atStartOfDay(ZoneOffset.UTC).toInstant();
            if (end.isAfter(cutoff)) {
                continue;
            }
            String name = "outbox_intent_p" + day.format(BASIC);
            if (oldestUnpublished != null && oldestUnpublished.isBefore(end)) {
                kept.add(name);
                continue;
            }
            if (!dryRun) {
                try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
                    c.setAutoCommit(false);
                    // DROP needs a short exclusive lock on the parent: give up rather than stall writers.
                    s.execute("SET LOCAL lock_timeout = '5s'");
                    s.execute("DROP TABLE " + Identifiers.qualified(schema, name));
                    c.commit();
                }
                log.info("dropped intent ledger partition {}.{}", schema, name);
            }
            dropped.add(name);
        }
        Instant defaultCutoff = oldestUnpublished != null && oldestUnpublished.isBefore(cutoff) ? oldestUnpublished : cutoff;
        long deleted = ChunkedDelete.olderThan(dataSource, Identifiers.qualified(schema, "outbox_intent_default"), "ctid", "created_at",
                defaultCutoff, dryRun);
        return new Purge(dropped, kept, deleted);
    }

    private Instant oldestUnpublished() throws SQLException {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT min(created_at) FROM " + OutboxTables.in(schema).outboxEvent()
                     + " WHERE published_at IS NULL")) {
            rs.next();
            Timestamp t = rs.getTimestamp(1);
            return t == null ? null : t.toInstant();
        }
    }
}
