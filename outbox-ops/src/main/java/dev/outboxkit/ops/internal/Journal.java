package dev.outboxkit.ops.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.outboxkit.core.OutboxTables;
import dev.outboxkit.core.Secret;
import dev.outboxkit.ops.admin.JournalEntry;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Not API: public for {@code Reconciler}, {@code Retention} and {@code OutboxAdmin}.
 *
 * <p>Writes one row of {@code outbox_ops_journal} (schema version 12) per reconciliation run, retention round and
 * operator action. The detail is bounded: at most {@value #MAX_LISTED} items per list, strings cut at
 * {@value #MAX_STRING} characters, and the whole at most {@value #MAX_DETAIL} characters (beyond that the lists go and
 * {@code truncated} says so). Callers put no payload in it.
 *
 * <p>A schema older than version 12 has no journal: the write is skipped with one WARN per instance naming the fix
 * ({@code outbox migrate}), so a run's own result is never lost to its journal. The table's presence is looked up
 * until it is found, then remembered (a table does not go away under a running tool).
 */
public final class Journal {

    /** Items kept per list in the detail (findings, ids). */
    public static final int MAX_LISTED = 20;
    /** Characters kept of each string in the detail. */
    public static final int MAX_STRING = 300;
    /** Characters of the whole detail's JSON. */
    public static final int MAX_DETAIL = 16_384;
    /** Characters of the summary. */
    public static final int MAX_SUMMARY = 500;

    private static final Logger log = LoggerFactory.getLogger(Journal.class);
    private static final ObjectMapper JSON = new ObjectMapper();

    private final DataSource dataSource;
    private final OutboxTables tables;
    private final AtomicBoolean present = new AtomicBoolean();
    private final AtomicBoolean warned = new AtomicBoolean();

    public Journal(DataSource dataSource, OutboxTables tables) {
        this.dataSource = dataSource;
        this.tables = tables;
    }

    /** Who runs a tool when its builder names nobody: {@code <os user>@<host>}. */
    public static String defaultActor() {
        String host;
        try {
            host = java.net.InetAddress.getLocalHost().getHostName();
        } catch (java.net.UnknownHostException e) {
            host = "unknown-host";
        }
        return System.getProperty("user.name", "?") + "@" + host;
    }

    /**
     * Writes an entry in its own transaction. Never throws: a failure is logged at WARN (the run it records has its own
     * result to return or throw).
     */
    public void record(JournalEntry.Kind kind, Instant started, Instant finished, String actor, boolean success,
                       String summary, Map<String, Object> detail) {
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(true);
            record(c, kind, started, finished, actor, success, summary, detail);
        } catch (SQLException | RuntimeException e) {
            log.warn("could not write the {} entry of the operations journal ({}) in schema {}: {} (SQLState {}). The {}"
                            + " itself is not affected.", kind.code(), OutboxTables.OPS_JOURNAL, tables.schema(),
                    e.getClass().getSimpleName(), e instanceof SQLException s ? s.getSQLState() : "-", kind.code());
            log.debug("journal write failure", e);
        }
    }

    /**
     * Writes an entry on {@code c}, inside the caller's transaction when it has one (an action and its entry commit
     * together). Returns false, after one WARN, when the schema has no journal yet.
     *
     * @throws SQLException when the insert fails (the caller's transaction then fails with it)
     */
    public boolean record(Connection c, JournalEntry.Kind kind, Instant started, Instant finished, String actor,
                          boolean success, String summary, Map<String, Object> detail) throws SQLException {
        if (!present(c)) {
            return false;
        }
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + tables.opsJournal()
                + " (kind, started_at, finished_at, actor, outcome, summary, detail) VALUES (?, ?, ?, ?, ?, ?, ?::jsonb)")) {
            ps.setString(1, kind.code());
            ps.setTimestamp(2, Timestamp.from(started));
            ps.setTimestamp(3, Timestamp.from(finished));
            ps.setString(4, cut(actor == null || actor.isBlank() ? "?" : actor, 200));
            ps.setString(5, (success ? JournalEntry.Outcome.SUCCESS : JournalEntry.Outcome.FAILURE).code());
            ps.setString(6, cut(summary, MAX_SUMMARY));
            ps.setString(7, detail == null ? null : json(detail));
            ps.executeUpdate();
        }
        return true;
    }

    /** Whether the schema has the journal (version 12); logs the WARN the first time it has not. */
    public boolean present(Connection c) throws SQLException {
        if (present.get()) {
            return true;
        }
        try (PreparedStatement ps = c.prepareStatement("SELECT to_regclass(?) IS NOT NULL")) {
            ps.setString(1, tables.opsJournal());
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                if (rs.getBoolean(1)) {
                    present.set(true);
                    return true;
                }
            }
        }
        if (warned.compareAndSet(false, true)) {
            log.warn("schema {} has no operations journal ({}, schema version 12): reconciliation runs, retention rounds"
                    + " and dead-letter actions go on without their journal entries. Fix: run 'outbox migrate' on this"
                    + " schema.", tables.schema(), OutboxTables.OPS_JOURNAL);
        }
        return false;
    }

    /**
     * Whether the journal's table exists now, looked up again (after a statement on it failed with "undefined table"),
     * without the WARN of {@link #present(Connection)}.
     */
    public boolean existsNow() throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement("SELECT to_regclass(?) IS NOT NULL")) {
            ps.setString(1, tables.opsJournal());
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                present.set(rs.getBoolean(1));
                return present.get();
            }
        }
    }

    /** Whether the schema has the journal, on a connection of its own. */
    public boolean present() throws SQLException {
        if (present.get()) {
            return true;
        }
        try (Connection c = dataSource.getConnection()) {
            return present(c);
        }
    }

    /** What a failure comes to in the detail: its class and a message with credentials in URLs masked, cut short. */
    public static Map<String, Object> failure(Throwable e) {
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("error", e.getClass().getName());
        d.put("message", cut(firstLine(e), MAX_STRING));
        if (e instanceof SQLException s && s.getSQLState() != null) {
            d.put("sqlState", s.getSQLState());
        }
        return d;
    }

    /** The one-line summary of a failure. */
    public static String failureSummary(String what, Throwable e) {
        String message = firstLine(e);
        return what + " failed: " + e.getClass().getSimpleName() + (message.isEmpty() ? "" : ": " + message);
    }

    /**
     * The message's first line, passwords in URLs masked. Only the first: the PostgreSQL driver appends the server's
     * detail on the next lines, and for a constraint violation that is "Failing row contains (…)", a payload.
     */
    private static String firstLine(Throwable e) {
        String m = e.getMessage();
        if (m == null) {
            return "";
        }
        int nl = m.indexOf('\n');
        return Secret.maskUrl(nl < 0 ? m : m.substring(0, nl)).strip();
    }

    static String json(Map<String, Object> detail) {
        try {
            String s = JSON.writeValueAsString(bounded(detail));
            if (s.length() <= MAX_DETAIL) {
                return s;
            }
            Map<String, Object> scalars = new LinkedHashMap<>();
            detail.forEach((k, v) -> {
                if (!(v instanceof List<?>)) {
                    scalars.put(k, v);
                }
            });
            scalars.put("truncated", true);
            s = JSON.writeValueAsString(bounded(scalars));
            return s.length() <= MAX_DETAIL ? s : "{\"truncated\":true}";
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("journal detail is not serialisable: " + e.getOriginalMessage(), e);
        }
    }

    private static Object bounded(Object v) {
        if (v instanceof String s) {
            return cut(s, MAX_STRING);
        }
        if (v instanceof Map<?, ?> m) {
            Map<String, Object> out = new LinkedHashMap<>();
            m.forEach((k, x) -> out.put(String.valueOf(k), bounded(x)));
            return out;
        }
        if (v instanceof List<?> l) {
            List<Object> out = new ArrayList<>();
            for (int i = 0; i < Math.min(MAX_LISTED, l.size()); i++) {
                out.add(bounded(l.get(i)));
            }
            return out;
        }
        if (v instanceof Number || v instanceof Boolean || v == null) {
            return v;
        }
        return cut(String.valueOf(v), MAX_STRING);
    }

    private static String cut(String s, int max) {
        return s.length() <= max ? s : s.substring(0, max - 1) + "…";
    }

    /** Reads {@code detail}'s JSON back as maps, lists and scalars. */
    @SuppressWarnings("unchecked")
    public static Map<String, Object> parse(String json) {
        if (json == null) {
            return Map.of();
        }
        try {
            return JSON.readValue(json, Map.class);
        } catch (JsonProcessingException e) {
            return Map.of("unreadable", true);
        }
    }
}
