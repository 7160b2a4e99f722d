package dev.outboxkit.cli;

import com.zaxxer.hikari.HikariDataSource;
import dev.outboxkit.ops.admin.DeadLetter;
import dev.outboxkit.ops.admin.DeadLetterChange;
import dev.outboxkit.ops.admin.DeadLetterFilter;
import dev.outboxkit.ops.admin.OutboxAdmin;
import java.io.PrintWriter;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code outbox dead-letters list | retry | discard}: flags and printing over {@link OutboxAdmin}, which holds
 * the semantics (retry at the original seq, one transaction, audit lines on {@value OutboxAdmin#AUDIT_LOGGER}).
 */
@Command(name = "dead-letters", mixinStandardHelpOptions = true,
        description = "Rows Kafka refused for good, parked in outbox_dead_letter: list, retry or discard them.",
        subcommands = {DeadLettersCommand.ListCommand.class, DeadLettersCommand.RetryCommand.class,
                DeadLettersCommand.DiscardCommand.class})
final class DeadLettersCommand {

    /**
     * Who runs the command, for the audit lines and the operations journal: {@code outbox-cli <os user>@<host>} (so an
     * entry tells the CLI from an operator in the console).
     */
    static String operator() {
        return "outbox-cli " + System.getProperty("user.name", "?") + "@" + hostName();
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

        DeadLetterFilter filter() {
            return all ? DeadLetterFilter.all() : DeadLetterFilter.ids(ids);
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
            List<DeadLetter> rows;
            try (HikariDataSource ds = db.dataSource("outbox-dead-letters", 1)) {
                rows = db.admin(ds).deadLetters(DeadLetterFilter.all(), limit, null).items();
            }
            for (DeadLetter d : rows) {
                // parked_at as java.sql.Timestamp prints it, as this list always has
                out.printf("%s %s/%s %s seq=%d attempts=%d parked_at=%s by=%s payload=%d bytes%n  %s: %s%n",
                        d.id(), d.aggregateType(), d.aggregateId(), d.eventType(), d.seq(), d.attempts(),
                        Timestamp.from(d.parkedAt()), d.parkedBy(), d.payloadBytes(), d.errorClass(), d.errorMessage());
            }
            out.printf("%d parked row%s shown%n", rows.size(), rows.size() == 1 ? "" : "s");
            return Main.OK;
        }
    }

    /** What retry and discard share: the rows named, one pool, the change through {@link OutboxAdmin}, the report. */
    abstract static class Change implements Callable<Integer> {
        @Spec
        CommandLine.Model.CommandSpec spec;
        @Mixin
        Options.Database db;
        @Mixin
        Selection selection;

        /** Checks what only this change needs, before any connection is made. */
        void check() {
        }

        abstract DeadLetterChange apply(OutboxAdmin admin, DeadLetterFilter filter) throws SQLException;

        @Override
        public Integer call() throws SQLException {
            selection.require(spec.commandLine());
            check();
            try (HikariDataSource ds = db.dataSource("outbox-dead-letters", 1)) {
                return report(spec, selection, apply(db.admin(ds), selection.filter()));
            }
        }
    }

    @Command(name = "retry", mixinStandardHelpOptions = true,
            description = {"Move parked rows back into outbox_event so the relay tries them again.",
                    "They keep their original seq: under the polling relay's HOLD_AGGREGATE policy a retried event is "
                            + "published before the events of its aggregate that waited behind it."})
    static final class RetryCommand extends Change {
        @Override
        DeadLetterChange apply(OutboxAdmin admin, DeadLetterFilter filter) throws SQLException {
            // A DeadLetterConflictException is described with the database's message (naming the key) by Main.
            return admin.retryDeadLetters(filter, operator());
        }
    }

    @Command(name = "discard", mixinStandardHelpOptions = true,
            description = "Delete parked rows for good (each logged as an audit line). Needs --yes.")
    static final class DiscardCommand extends Change {
        @Option(names = "--yes", description = "Confirm: the events are gone afterwards.")
        boolean yes;

        @Override
        void check() {
            if (!yes) {
                throw new CommandLine.ParameterException(spec.commandLine(),
                        "discard deletes events for good: add --yes to confirm");
            }
        }

        @Override
        DeadLetterChange apply(OutboxAdmin admin, DeadLetterFilter filter) throws SQLException {
            return admin.discardDeadLetters(filter, null, operator());
        }
    }

    /** Prints what was retried or discarded; exit 1 when some of the given ids were not parked. */
    private static int report(CommandLine.Model.CommandSpec spec, Selection selection, DeadLetterChange change) {
        PrintWriter out = spec.commandLine().getOut();
        String action = change.action().name().toLowerCase(Locale.ROOT);
        for (DeadLetterChange.Row r : change.rows()) {
            out.printf("%s %s (%s/%s) seq %d%n", action, r.id(), r.aggregateType(), r.aggregateId(), r.seq());
        }
        int n = change.rows().size();
        out.printf("%s: %d row%s%n", action, n, n == 1 ? "" : "s");
        if (!selection.all && n < selection.ids.size()) {
            spec.commandLine().getErr().printf("outbox: %d of the given ids were not parked%n", selection.ids.size() - n);
            return Main.FAILED;
        }
        return Main.OK;
    }
}
