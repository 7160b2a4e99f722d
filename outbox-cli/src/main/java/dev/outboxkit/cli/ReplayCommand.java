package dev.outboxkit.cli;

import com.zaxxer.hikari.HikariDataSource;
import dev.outboxkit.core.Identifiers;
import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * Re-publishes events for recovery (a consumer restored from a backup, a topic recreated). Only
 * rows that are still kept can be replayed: with {@code --after-publish MARK} the relay keeps
 * published rows in {@code outbox_event} (the outbox archive), so replay clears their
 * {@code published_at} and the relay sends them again under their original ids — consumers that
 * already applied them skip them. With the default DELETE, the payload is gone after publication;
 * the intent ledger keeps only its hash, so such ids are reported, not guessed.
 */
@Command(name = "replay", mixinStandardHelpOptions = true,
        description = {"Publish kept events again, by id or by time range (rows kept by a relay in MARK mode).",
                "Each replayed event is logged as an audit line. Events already applied are skipped by consumer-dedupe."})
final class ReplayCommand implements Callable<Integer> {

    @Spec
    CommandLine.Model.CommandSpec spec;

    @Mixin
    Options.Database db;

    @Option(names = "--id", paramLabel = "EVENT_ID", description = "Event id to replay (repeatable).")
    List<UUID> ids;

    @Option(names = "--from", paramLabel = "INSTANT", description = "Replay events created at or after this instant (ISO-8601, e.g. 2026-11-29T08:00:00Z).")
    Instant from;

    @Option(names = "--to", paramLabel = "INSTANT", description = "…and before this instant (default: now).")
    Instant to;

    @Option(names = "--dry-run", description = "Only count what would be replayed.")
    boolean dryRun;

    @Override
    public Integer call() throws SQLException {
        boolean byId = ids != null && !ids.isEmpty();
        if (byId == (from != null)) {
            throw new CommandLine.ParameterException(spec.commandLine(), "Name the events with --id (repeatable) or with --from [--to], not both");
        }
        if (to != null && from == null) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--to needs --from");
        }
        String outbox = Identifiers.qualified(db.schema, "outbox_event");
        String where = byId ? "id = ANY (?)" : "created_at >= ? AND created_at < ?";
        String sql = dryRun
                ? "SELECT id, aggregate_type, aggregate_id FROM " + outbox + " WHERE published_at IS NOT NULL AND " + where
                : "UPDATE " + outbox + " SET published_at = NULL, attempts = 0 WHERE published_at IS NOT NULL AND " + where
                        + " RETURNING id, aggregate_type, aggregate_id";
        PrintWriter out = spec.commandLine().getOut();
        Set<UUID> replayed = new HashSet<>();
        String who = DeadLettersCommand.operator();
        try (HikariDataSource ds = db.dataSource("outbox-replay", 1); Connection c = ds.getConnection();
             PreparedStatement ps = c.prepareStatement(sql)) {
            if (byId) {
                ps.setArray(1, c.createArrayOf("uuid", ids.toArray()));
            } else {
                ps.setTimestamp(1, Timestamp.from(from));
                ps.setTimestamp(2, Timestamp.from(to == null ? Instant.now() : to));
            }
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    UUID id = rs.getObject(1, UUID.class);
                    replayed.add(id);
                    if (!dryRun) {
                        DeadLettersCommand.AUDIT.info("replay id={} aggregate={}/{} by={}", id, rs.getString(2), rs.getString(3), who);
                    }
                }
            }
            out.printf("%s %d event%s%n", dryRun ? "would replay" : "replayed", replayed.size(), replayed.size() == 1 ? "" : "s");
            if (byId && replayed.size() < ids.size()) {
                reportMissing(c, ids, replayed, out);
                return Main.FAILED;
            }
        }
        return Main.OK;
    }

    /** Says, for each id not replayed, where it is instead (unpublished, parked, or not kept). */
    private void reportMissing(Connection c, List<UUID> wanted, Set<UUID> replayed, PrintWriter out) throws SQLException {
        for (UUID id : wanted) {
            if (replayed.contains(id)) {
                continue;
            }
            out.printf("  %s: %s%n", id, whereIs(c, id));
        }
    }

    private String whereIs(Connection c, UUID id) throws SQLException {
        if (exists(c, "SELECT 1 FROM " + Identifiers.qualified(db.schema, "outbox_event") + " WHERE id = ?", id)) {
            return "not yet published (the relay will send it; nothing to replay)";
        }
        if (exists(c, "SELECT 1 FROM " + Identifiers.qualified(db.schema, "outbox_dead_letter") + " WHERE id = ?", id)) {
            return "parked as a dead letter: use 'outbox dead-letters retry --id " + id + "'";
        }
        return "not kept: its row was deleted after publication (relays keep rows only with --after-publish MARK); "
                + "the intent ledger has its payload hash, not its payload";
    }

    private static boolean exists(Connection c, String sql, UUID id) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setObject(1, id);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next();
            }
        }
    }
}
