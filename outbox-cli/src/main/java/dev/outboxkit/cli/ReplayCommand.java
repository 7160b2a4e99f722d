package dev.outboxkit.cli;

import com.zaxxer.hikari.HikariDataSource;
import dev.outboxkit.ops.admin.ReplayResult;
import dev.outboxkit.ops.admin.ReplaySelection;
import java.io.PrintWriter;
import java.sql.SQLException;
import java.time.Instant;
import java.util.List;
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
        ReplaySelection selection = byId ? ReplaySelection.ids(ids) : ReplaySelection.createdBetween(from, to);
        ReplayResult result;
        try (HikariDataSource ds = db.dataSource("outbox-replay", 1)) {
            result = db.admin(ds).replay(selection, dryRun, DeadLettersCommand.operator());
        }
        PrintWriter out = spec.commandLine().getOut();
        int n = result.replayed().size();
        out.printf("%s %d event%s%n", dryRun ? "would replay" : "replayed", n, n == 1 ? "" : "s");
        if (byId && n < ids.size()) {
            // for each id not replayed, where it is instead
            for (UUID id : ids) {
                ReplayResult.NotReplayed why = result.notReplayed().get(id);
                if (why != null) {
                    out.printf("  %s: %s%n", id, describe(id, why));
                }
            }
            return Main.FAILED;
        }
        return Main.OK;
    }

    private static String describe(UUID id, ReplayResult.NotReplayed why) {
        return switch (why) {
            case UNPUBLISHED -> "not yet published (the relay will send it; nothing to replay)";
            case PARKED -> "parked as a dead letter: use 'outbox dead-letters retry --id " + id + "'";
            case NOT_KEPT -> "not kept: its row was deleted after publication (relays keep rows only with --after-publish MARK); "
                    + "the intent ledger has its payload hash, not its payload";
        };
    }
}
