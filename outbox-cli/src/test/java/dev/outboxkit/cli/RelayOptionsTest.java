package dev.outboxkit.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxkit.relay.RelayOption;
import dev.outboxkit.relay.RelayOptions;
import dev.outboxkit.relay.cdc.CdcRelay;
import dev.outboxkit.relay.poller.PollingRelay;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/** The sidecars' relay options are the library's definitions: same names, defaults, checks and docs. */
class RelayOptionsTest {

    /** Sidecar options that are not relay settings: connection, HTTP, retention, config file, help. */
    private static final Set<String> NOT_RELAY_SETTINGS = Set.of("--jdbc-url", "--user", "--password", "--schema",
            "--bootstrap-servers", "--kafka", "--http-port", "--config", "--retention-interval", "--partitions-ahead",
            "--intent-retention", "--group", "--consumer-jdbc-url", "--processed-retention", "--idempotency-retention",
            "--dead-letter-retention", "--archive-retention", "--journal-retention", "--shutdown-deadline", "--help", "--version",
            "--console", "--console-write-actions", "--console-show-payloads", "--console-trace-url",
            "--console-token-file", "--console-token-env", "--console-operator");

    private static CommandSpec relay(String kind) {
        CommandLine root = Main.commandLine(Settings.load(new String[0], Map.of()));
        return root.getSubcommands().get("relay").getSubcommands().get(kind).getCommandSpec();
    }

    @Test
    void everyPollerSettingIsASidecarOptionWithTheLibrarysDefaultAndDoc() {
        assertMatches(relay("poll"), PollingRelay.builder().options());
    }

    @Test
    void everyCdcRelaySettingIsASidecarOptionWithTheLibrarysDefaultAndDoc() {
        assertMatches(relay("cdc"), CdcRelay.builder().options());
    }

    private static void assertMatches(CommandSpec command, List<RelayOption<?>> definitions) {
        for (RelayOption<?> definition : definitions) {
            OptionSpec option = command.findOption("--" + definition.kebabName());
            assertThat(option).as("%s has no option for %s", command.qualifiedName(), definition.name()).isNotNull();
            String cliDefault = option.defaultValue() == null ? "" : option.defaultValue().replace("$${", "${");
            if (definition.defaultValue() != null) {
                assertThat(cliDefault).as(definition.name()).isEqualTo(definition.defaultText());
            } else {
                assertThat(cliDefault).as(definition.name()).isEmpty();
            }
            if (definition != RelayOptions.SCHEMA) { // the database mixin's, shared with every command
                assertThat(String.join(" ", option.description()).replace("$${", "${").replace("%%", "%"))
                        .as(definition.name()).startsWith(definition.description());
            }
        }
        Set<String> defined = definitions.stream().map(d -> "--" + d.kebabName()).collect(Collectors.toSet());
        List<String> strays = command.options().stream().map(OptionSpec::longestName)
                .filter(name -> !defined.contains(name) && !NOT_RELAY_SETTINGS.contains(name)).toList();
        assertThat(strays).as("relay options of %s without a library definition", command.qualifiedName()).isEmpty();
    }

    /** The retention windows' CLI defaults are the library's (Retention's), on every command that has them. */
    @Test
    void retentionDefaultsAreTheLibrarys() {
        CommandLine root = Main.commandLine(Settings.load(new String[0], Map.of()));
        List<CommandSpec> commands = List.of(relay("poll"), relay("cdc"), root.getSubcommands().get("purge").getCommandSpec());
        for (CommandSpec command : commands) {
            assertThat(java.time.Duration.parse(command.findOption("--journal-retention").defaultValue()))
                    .as(command.qualifiedName()).isEqualTo(dev.outboxkit.ops.retention.Retention.DEFAULT_JOURNAL_RETENTION);
            assertThat(java.time.Duration.parse(command.findOption("--intent-retention").defaultValue()))
                    .as(command.qualifiedName()).isEqualTo(dev.outboxkit.ops.retention.Retention.DEFAULT_INTENT_RETENTION);
            assertThat(Integer.parseInt(command.findOption("--partitions-ahead").defaultValue()))
                    .as(command.qualifiedName()).isEqualTo(dev.outboxkit.ops.retention.Retention.DEFAULT_PARTITIONS_AHEAD);
        }
    }

    @Test
    void aValueTheDefinitionRefusesIsAUsageErrorNamingTheOptionAndTheRule() {
        CliRun lease = CliRun.run(Map.of(), "relay", "poll", "--lease-duration", "PT1S", "--jdbc-url",
                "jdbc:postgresql://127.0.0.1:1/db", "--bootstrap-servers", "127.0.0.1:1");
        assertThat(lease.exitCode()).isEqualTo(Main.USAGE);
        assertThat(lease.err()).contains("Invalid value for option '--lease-duration'")
                .contains("leaseDuration must be between PT2S and PT10M, got PT1S");

        CliRun slot = CliRun.run(Map.of("OUTBOX_SLOT_NAME", "Bad-Slot"), "relay", "cdc", "--jdbc-url",
                "jdbc:postgresql://127.0.0.1:1/db", "--bootstrap-servers", "127.0.0.1:1");
        assertThat(slot.exitCode()).isEqualTo(Main.USAGE);
        assertThat(slot.err()).contains("--slot-name").contains("slotName 'Bad-Slot' is not a legal identifier");

        CliRun policy = CliRun.run(Map.of(), "relay", "poll", "--park-policy", "sometimes");
        assertThat(policy.exitCode()).isEqualTo(Main.USAGE);
        assertThat(policy.err()).contains("--park-policy").contains("CONTINUE, HOLD_AGGREGATE");
    }

    @Test
    void onePartitionNeedsNoClaimLoopsFlagButTwoLoopsGivenAreAUsageError() {
        List<String> args = List.of("relay", "poll", "--jdbc-url", "jdbc:postgresql://127.0.0.1:1/x", "--user", "x",
                "--bootstrap-servers", "127.0.0.1:1", "--http-port", "0", "--start-timeout", "PT0S", "--partitions", "1");
        List<String> two = new java.util.ArrayList<>(args);
        two.addAll(List.of("--claim-loops", "2"));
        CliRun refused = CliRun.run(Map.of(), two.toArray(new String[0]));
        assertThat(refused.exitCode()).as(refused.all()).isEqualTo(Main.USAGE);
        assertThat(refused.err()).contains("claimLoops must be at most partitions (1), got 2");
        // unset, the default fits the one partition: the relay is built and only the absent database stops it
        CliRun untold = CliRun.run(Map.of(), args.toArray(new String[0]));
        assertThat(untold.exitCode()).as(untold.all()).isEqualTo(Main.FAILED);
        assertThat(untold.all()).doesNotContain("must be at most partitions").contains("127.0.0.1:1");
    }

    @Test
    void theConfigFileAndTheEnvironmentUseTheDerivedNames(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
        Path file = dir.resolve("relay.properties");
        Files.writeString(file, "batch-size=0\n");
        CliRun fromFile = CliRun.run(Map.of(), "relay", "poll", "--config", file.toString());
        assertThat(fromFile.exitCode()).isEqualTo(Main.USAGE);
        assertThat(fromFile.err()).contains("batchSize must be between 1 and 50000, got 0");

        CliRun fromEnv = CliRun.run(Map.of("OUTBOX_DELETE_AFTER_PUBLISH", "maybe"), "relay", "cdc");
        assertThat(fromEnv.exitCode()).isEqualTo(Main.USAGE);
        assertThat(fromEnv.err()).contains("--delete-after-publish").contains("deleteAfterPublish: 'maybe' is not valid");
    }

    @Test
    void everyDefaultReadsBackFromItsOwnTextAndBuildersStartFromIt() {
        for (RelayOption<?> definition : PollingRelay.builder().options()) {
            assertRoundTrip(definition);
        }
        for (RelayOption<?> definition : CdcRelay.builder().options()) {
            assertRoundTrip(definition);
        }
        assertThat(PollingRelay.builder().options()).startsWith(RelayOptions.all().toArray(new RelayOption<?>[0]));
    }

    private static <T> void assertRoundTrip(RelayOption<T> definition) {
        if (definition.defaultValue() != null) {
            assertThat(definition.parse(definition.defaultText())).as(definition.name()).isEqualTo(definition.defaultValue());
        }
    }

    @Test
    void theSchemaOptionEveryCommandTakesHasTheRelaysDefault() {
        for (String kind : List.of("poll", "cdc")) {
            assertThat(relay(kind).findOption("--schema").defaultValue()).isEqualTo(RelayOptions.SCHEMA.defaultText());
        }
        CommandLine root = Main.commandLine(Settings.load(new String[0], Map.of()));
        assertThat(root.getSubcommands().get("status").getCommandSpec().findOption("--schema").defaultValue())
                .isEqualTo(RelayOptions.SCHEMA.defaultText());
    }
}
