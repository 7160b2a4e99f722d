package dev.outboxkit.cli;

import com.zaxxer.hikari.HikariDataSource;
import dev.outboxkit.core.Identifiers;
import java.io.PrintWriter;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Callable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(name = "dead-letters", mixinStandardHelpOptions = true,
        description = "Rows Kafka refused for good, parked in outbox_dead_letter: list, retry or discard them.",
        subcommands = {DeadLettersCommand.ListCommand.class, DeadLettersCommand.RetryCommand.class,
                DeadLettersCommand.DiscardCommand.class})
final class DeadLettersCommand {

    /** Audit lines go to their own logger so operators can route them (never payloads). */
    static final Logger AUDIT = LoggerFactory.getLogger("outboxkit.audit");

    static String operator() {
        return System.getProperty("user.name", "?") + "@" + hostName();
    }

    private static String hostName() {
        try {
            return java.net.InetAddress.getLocalHost().getHostName();
        } catch (java.net.UnknownHostException e) {
            return "unknown-host";
        }
    }

    /** Which rows: --id (repeatable) or --all. */
    static final class Selection {
        @Option(names = "--id", paramLabel = "EVENT_ID", description = "Event id of a parked row (repeatable).")
        List<UUID> ids;

        @Option(names = "--all", description = "Every parked row.")
        boolean all;

        void require(CommandLine cl) {
            if ((ids == null || ids.isEmpty()) == !all) {
                throw new CommandLine.ParameterException(cl, "Name the rows with --id EVENT_ID (repeatable) or --all, not both");
            }
        }

        String where() {
            return all ? "" : " WHERE id = ANY (?)";
        }

        void bind(Connection c, PreparedStatement ps) throws SQLException {
            if (!all) {
                Array array = c.createArrayOf("uuid", ids.toArray());
                ps.setArray(1, array);
            }
        }
    }

    @Command(name = "list", mixinStandardHelpOptions = true, showDefaultValues = true, description = "List parked rows (no payloads).")
    static final class ListCommand implements Callable<Integer> {
        @Spec
        CommandLine.Model.CommandSpec spec;
        @Mixin
        Options.Database db;
        @Option(names = "--limit", defaultValue = "100", description = "At most this many rows, oldest first.")
        int limit;

        @Override
        public Integer call() throws SQLException {
            PrintWriter out = spec.commandLine().getOut();
            try (HikariDataSource ds = db.dataSource("outbox-dead-letters", 1); Connection c = ds.getConnection();
                 PreparedStatement ps = c.prepareStatement("SELECT id, aggregate_type, aggregate_id, event_type, attempts, parked_at, "
                         + "parked_by, error_class, error_message, coalesce(octet_length(payload_bytes), octet_length(payload::text)), seq FROM "
                         + Identifiers.qualified(db.schema, "outbox_dead_letter") + " ORDER BY parked_at, seq LIMIT ?")) {
                ps.setInt(1, limit);
                int n = 0;
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        n++;
                        out.printf("%s %s/%s %s seq=%d attempts=%d parked_at=%s by=%s payload=%d bytes%n  %s: %s%n",
                                rs.getString(1), rs.getString(2), rs.getString(3), rs.getString(4), rs.getLong(11), rs.getInt(5),
                                rs.getObject(6), rs.getString(7), rs.getLong(10), rs.getString(8), rs.getString(9));
                    }
                }
                out.printf("%d parked row%s shown%n", n, n == 1 ? "" : "s");
            }
            return Main.OK;
        }
    }

    @Command(name = "retry", mixinStandardHelpOptions = true,
            description = {"Move parked rows back into outbox_event so the relay tries them again.",
                    "They keep their original seq: under the polling relay's HOLD_AGGREGATE policy a retried event is "
                            + "published before the events of its aggregate that waited behind it."})
    static final class RetryCommand implements Callable<Integer> {
        @Spec
        CommandLine.Model.CommandSpec spec;
        @Mixin
        Options.Database db;
        @Mixin
        Selection selection;

        @Override
        public Integer call() throws SQLException {
            selection.require(spec.commandLine());
            try {
                return move(spec, db, selection, retrySql(db.schema, selection.where()), "retry");
            } catch (SQLException e) {
                if (UNIQUE_VIOLATION.equals(e.getSQLState())) {
                    // Described with the database's message (which names the key) by Main.
                    throw new IllegalStateException("nothing was moved: an event with the same seq or id is still in "
                            + "outbox_event. That row either waits for the relay already (then discard the dead letter) or "
                            + "is a copy inserted by hand (delete it, then retry)", e);
                }
                throw e;
            }
        }
    }

    static final String UNIQUE_VIOLATION = "23505";

    /**
     * Moves the selected dead letters back into {@code outbox_event} in one statement, each at its original
     * {@code seq} ({@code OVERRIDING SYSTEM VALUE}), because the polling relay publishes in seq order: with a
     * new seq a retried event would go out after the events of its aggregate that HOLD_AGGREGATE kept waiting
     * behind it.
     *
     * <p>Reusing the seq cannot collide with another event: {@code seq} is an identity column, whose sequence
     * never hands a value out twice, and a relay removes the row from {@code outbox_event} in the transaction
     * that parks it (the polling relay always; the WAL relay with {@code deleteAfterPublish}, and otherwise the
     * writer's transient and emit-message modes never keep the row). If the row is there all the same (a CDC
     * relay with {@code deleteAfterPublish(false)} on a table that keeps its rows, or a copy inserted by hand),
     * the primary key or the unique id refuses the insert, the whole statement rolls back and the dead letters
     * stay parked. Dead letters without a row ({@code seq} 0: the WAL relay parked a logical decoding message)
     * get a new seq, in the order they were created.
     */
    static String retrySql(String schema, String where) {
        String dl = Identifiers.qualified(schema, "outbox_dead_letter");
        String outbox = Identifiers.qualified(schema, "outbox_event");
        // payload_bytes and content_type: a binary event goes back as it was parked (schema version 10).
        String columns = "id, aggregate_type, aggregate_id, event_type, payload, payload_bytes, content_type, headers, topic,"
                + " created_at";
        String returning = " RETURNING id, aggregate_type, aggregate_id, seq";
        return "WITH moved AS (DELETE FROM " + dl + where + " RETURNING *), "
                + "kept AS (INSERT INTO " + outbox + " (seq, " + columns + ") OVERRIDING SYSTEM VALUE "
                + "SELECT seq, " + columns + " FROM moved WHERE seq > 0" + returning + "), "
                + "renumbered AS (INSERT INTO " + outbox + " (" + columns + ") "
                + "SELECT " + columns + " FROM moved WHERE seq <= 0 ORDER BY created_at, id" + returning + ") "
                + "SELECT id, aggregate_type, aggregate_id, seq FROM kept UNION ALL SELECT id, aggregate_type, aggregate_id, seq "
                + "FROM renumbered ORDER BY seq";
    }

    @Command(name = "discard", mixinStandardHelpOptions = true,
            description = "Delete parked rows for good (each logged as an audit line). Needs --yes.")
    static final class DiscardCommand implements Callable<Integer> {
        @Spec
        CommandLine.Model.CommandSpec spec;
        @Mixin
        Options.Database db;
        @Mixin
        Selection selection;
        @Option(names = "--yes", description = "Confirm: the events are gone afterwards.")
        boolean yes;

        @Override
        public Integer call() throws SQLException {
            selection.require(spec.commandLine());
            if (!yes) {
                throw new CommandLine.ParameterException(spec.commandLine(),
                        "discard deletes events for good: add --yes to confirm");
            }
            String sql = "DELETE FROM " + Identifiers.qualified(db.schema, "outbox_dead_letter") + selection.where()
                    + " RETURNING id, aggregate_type, aggregate_id, seq";
            return move(spec, db, selection, sql, "discard");
        }
    }

    private static int move(CommandLine.Model.CommandSpec spec, Options.Database db, Selection selection, String sql, String action)
            throws SQLException {
        PrintWriter out = spec.commandLine().getOut();
        String who = operator();
        int n = 0;
        try (HikariDataSource ds = db.dataSource("outbox-dead-letters", 1); Connection c = ds.getConnection()) {
            c.setAutoCommit(false);
            try (PreparedStatement ps = c.prepareStatement(sql)) {
                selection.bind(c, ps);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        n++;
                        AUDIT.info("dead-letter {} id={} aggregate={}/{} seq={} by={}", action, rs.getString(1),
                                rs.getString(2), rs.getString(3), rs.getLong(4), who);
                        out.printf("%s %s (%s/%s) seq %d%n", action, rs.getString(1), rs.getString(2), rs.getString(3),
                                rs.getLong(4));
                    }
                }
                c.commit();
            } catch (SQLException e) {
                c.rollback();
                throw e;
            }
        }
        out.printf("%s: %d row%s%n", action, n, n == 1 ? "" : "s");
        if (!selection.all && n < selection.ids.size()) {
            spec.commandLine().getErr().printf("outbox: %d of the given ids were not parked%n", selection.ids.size() - n);
            return Main.FAILED;
        }
        return Main.OK;
    }
}
