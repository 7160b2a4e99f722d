package dev.outboxkit.cli;

import static dev.outboxkit.relay.RelayOption.Importance.ESSENTIAL;
import static dev.outboxkit.relay.RelayOption.Importance.RARELY_NEEDED;
import static dev.outboxkit.relay.RelayOption.Importance.TUNING;

import dev.outboxkit.relay.RelayOption;
import dev.outboxkit.relay.RelayOption.Importance;
import dev.outboxkit.relay.RelayOptions;
import dev.outboxkit.relay.cdc.CdcRelay;
import dev.outboxkit.relay.poller.PollingRelay;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * Prints the configuration reference (Markdown) from the option definitions, each command's options grouped by
 * importance (essential, tuning, rarely needed). docs/build-readme.sh writes it between the {@code config-reference}
 * markers of outbox-cli/README.md (all commands), outbox-dev-tools/README.md ({@code dev} and {@code demo}) and the
 * relay READMEs ({@code --relay-readme poll|cdc}: one relay's options as builder methods); {@code GeneratedReferencesTest}
 * and {@code DevToolsReadmeTest} fail when a copy differs.
 *
 * <p>A relay setting takes its group from its definition ({@link RelayOption#importance()}); every other option's group
 * is in {@link #GROUPS}, and the reference refuses an option that has none.
 */
@Command(name = "config-reference", hidden = true, description = "Print the configuration reference as Markdown.")
final class ConfigReferenceCommand implements Callable<Integer> {

    /**
     * The group of each option that is not a relay setting, by flag; a key prefixed by a command's qualified name
     * ({@code outbox purge --group}) applies to that command and its subcommands and wins over the bare flag.
     */
    private static final Map<String, Importance> GROUPS = Map.ofEntries(
            // every command that reaches the database or Kafka
            Map.entry("--jdbc-url", ESSENTIAL),
            Map.entry("--user", ESSENTIAL),
            Map.entry("--password", ESSENTIAL),
            Map.entry("--bootstrap-servers", ESSENTIAL),
            Map.entry("--kafka", ESSENTIAL),
            Map.entry("--config", RARELY_NEEDED),
            // the relay sidecars
            Map.entry("--http-port", RARELY_NEEDED),
            Map.entry("--shutdown-deadline", RARELY_NEEDED),
            Map.entry("--retention-interval", RARELY_NEEDED),
            Map.entry("--console", RARELY_NEEDED),
            Map.entry("--console-write-actions", RARELY_NEEDED),
            Map.entry("--console-show-payloads", RARELY_NEEDED),
            Map.entry("--console-trace-url", RARELY_NEEDED),
            Map.entry("--console-token-file", RARELY_NEEDED),
            Map.entry("--console-token-env", RARELY_NEEDED),
            Map.entry("--console-operator", RARELY_NEEDED),
            // retention windows (purge, and the sidecars' --retention-interval job)
            Map.entry("--partitions-ahead", RARELY_NEEDED),
            Map.entry("--intent-retention", RARELY_NEEDED),
            Map.entry("--processed-retention", RARELY_NEEDED),
            Map.entry("--idempotency-retention", RARELY_NEEDED),
            Map.entry("--dead-letter-retention", RARELY_NEEDED),
            Map.entry("--archive-retention", RARELY_NEEDED),
            Map.entry("--journal-retention", RARELY_NEEDED),
            Map.entry("--group", ESSENTIAL),
            Map.entry("--consumer-jdbc-url", ESSENTIAL),
            Map.entry("outbox relay --group", RARELY_NEEDED), // only with --retention-interval
            Map.entry("outbox relay --consumer-jdbc-url", RARELY_NEEDED),
            Map.entry("--lock-wait", RARELY_NEEDED),
            // what a one-shot command acts on, and how it reports
            Map.entry("--id", ESSENTIAL),
            Map.entry("--all", ESSENTIAL),
            Map.entry("--yes", ESSENTIAL),
            Map.entry("--from", ESSENTIAL),
            Map.entry("--to", RARELY_NEEDED),
            Map.entry("--dry-run", RARELY_NEEDED),
            Map.entry("--json", RARELY_NEEDED),
            Map.entry("--limit", RARELY_NEEDED),
            Map.entry("--consumer", ESSENTIAL),
            Map.entry("--consumer-schema", RARELY_NEEDED),
            Map.entry("--aggregate-type", ESSENTIAL),
            Map.entry("--lookback", TUNING),
            Map.entry("--grace", TUNING),
            Map.entry("--dedupe-window", TUNING),
            Map.entry("--batch-size", TUNING),
            Map.entry("--max-findings", RARELY_NEEDED),
            // dev and demo (outbox-dev-tools)
            Map.entry("--pg-port", RARELY_NEEDED),
            Map.entry("--database", RARELY_NEEDED),
            Map.entry("--relay", ESSENTIAL),
            Map.entry("--events", TUNING),
            Map.entry("--rate", TUNING),
            Map.entry("--clients", TUNING),
            Map.entry("--accounts", TUNING),
            Map.entry("--lost-ack-rate", RARELY_NEEDED),
            Map.entry("--double-send-rate", RARELY_NEEDED),
            Map.entry("--seed", RARELY_NEEDED));

    @Spec
    CommandSpec spec;

    @Parameters(paramLabel = "COMMAND", arity = "0..*",
            description = "Only these commands, named without 'outbox' (dev, demo, 'relay poll'); default: every command.")
    List<String> only = new ArrayList<>();

    @Option(names = "--relay-readme", paramLabel = "poll|cdc",
            description = "Print the options of one relay as its README's table of builder methods instead.")
    String relayReadme;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        if (relayReadme != null) {
            out.print(relayTable(switch (relayReadme) {
                case "poll" -> PollingRelay.builder().options();
                case "cdc" -> CdcRelay.builder().options();
                default -> throw new CommandLine.ParameterException(spec.commandLine(),
                        "--relay-readme: expected poll or cdc, got '" + relayReadme + "'");
            }));
        } else {
            out.print(markdown(Main.commandLine(Settings.load(new String[0], Map.of())).getCommandSpec(), only));
        }
        out.flush();
        return Main.OK;
    }

    static String markdown(CommandSpec root) {
        return markdown(root, List.of());
    }

    /** One table: per command (all, or those {@code only} names), its options by group, in declaration order within. */
    static String markdown(CommandSpec root, List<String> only) {
        StringBuilder sb = new StringBuilder();
        sb.append("| command | group | flag | environment | default | meaning |\n|---|---|---|---|---|---|\n");
        List<CommandSpec> commands = new ArrayList<>();
        collect(root, commands);
        for (CommandSpec command : commands) {
            String name = command.qualifiedName();
            if (!only.isEmpty() && !only.contains(name.substring(name.indexOf(' ') + 1))) {
                continue;
            }
            List<OptionSpec> options = new ArrayList<>();
            for (OptionSpec option : command.options()) {
                if (option.usageHelp() || option.versionHelp() || option.hidden()) {
                    continue;
                }
                if (command != root && option.inherited()) {
                    continue;
                }
                options.add(option);
            }
            options.sort(Comparator.comparing(o -> importance(command, o))); // stable: declaration order within a group
            for (OptionSpec option : options) {
                String flag = option.longestName();
                String def = option.showDefaultValue() == CommandLine.Help.Visibility.NEVER ? "" : nullToEmpty(option.defaultValue());
                sb.append("| `").append(name).append("` | ").append(importance(command, option).label()).append(" | `")
                        .append(flag).append("` | `")
                        .append(flag.equals("--config") ? Settings.CONFIG_ENV : Settings.envName(flag)).append("` | ")
                        .append(def.isEmpty() ? "" : "`" + def + "`").append(" | ")
                        .append(cell(String.join(" ", option.description()))).append(" |\n");
            }
        }
        return sb.toString();
    }

    /**
     * A relay's options as its README lists them: by group, then in definition order; the builder method, the default,
     * the accepted values and the definition's doc.
     */
    static String relayTable(List<RelayOption<?>> options) {
        StringBuilder sb = new StringBuilder("| group | builder method | default | accepted | meaning |\n|---|---|---|---|---|\n");
        options.stream().sorted(Comparator.comparing(RelayOption::importance)).forEach(o -> sb
                .append("| ").append(o.importance().label())
                .append(" | `").append(o.name()).append('(').append(typeName(o.type())).append(")` | ")
                .append(o.defaultValue() != null ? "`" + o.defaultText() + "`" : cell(o.defaultText())).append(" | ")
                .append(cell(o.accepted())).append(" | ")
                .append(cell(o.doc())).append(" |\n"));
        return sb.toString();
    }

    /** The group of a command's option: a relay setting's own, else {@link #GROUPS}'. */
    static Importance importance(CommandSpec command, OptionSpec option) {
        if (option.userObject() instanceof RelayOption<?> definition) {
            return definition.importance();
        }
        String flag = option.longestName();
        if (flag.equals("--schema")) {
            return RelayOptions.SCHEMA.importance(); // the database options' --schema is the relays' schema setting
        }
        for (CommandSpec c = command; c != null; c = c.parent()) {
            Importance group = GROUPS.get(c.qualifiedName() + " " + flag);
            if (group != null) {
                return group;
            }
        }
        Importance group = GROUPS.get(flag);
        if (group == null) {
            throw new IllegalStateException(command.qualifiedName() + " " + flag + " has no group: give it one in "
                    + "ConfigReferenceCommand.GROUPS (essential, tuning or rarely needed)");
        }
        return group;
    }

    private static String typeName(Class<?> type) {
        return type == Boolean.class ? "boolean" : type == Integer.class ? "int" : type.getSimpleName();
    }

    private static String cell(String text) {
        return text.replace("|", "\\|");
    }

    private static void collect(CommandSpec spec, List<CommandSpec> out) {
        if (spec.usageMessage().hidden() || spec.name().equals("help")) {
            return;
        }
        out.add(spec);
        spec.subcommands().values().stream().map(CommandLine::getCommandSpec).distinct().forEach(s -> collect(s, out));
    }

    private static String nullToEmpty(String s) {
        return s == null ? "" : s;
    }
}
