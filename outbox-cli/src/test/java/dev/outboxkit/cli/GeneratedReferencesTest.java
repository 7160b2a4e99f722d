package dev.outboxkit.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxkit.relay.RelayOption;
import dev.outboxkit.relay.RelayOption.Importance;
import dev.outboxkit.relay.cdc.CdcRelay;
import dev.outboxkit.relay.poller.PollingRelay;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The option tables of the READMEs are generated from the definitions (docs/build-readme.sh runs
 * {@code outbox config-reference}); each copy must equal what the command prints now, so an option's doc, default or
 * group never differs between a README and its definition. outbox-dev-tools/README.md: {@code DevToolsReadmeTest}.
 */
class GeneratedReferencesTest {

    /** The repository root: the tests run in outbox-cli/. */
    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

    private static final String START = "<!-- config-reference:start";
    private static final String END = "<!-- config-reference:end -->";

    @Test
    void theSidecarsReferenceInOutboxCliReadmeMatchesTheDefinitions() throws Exception {
        assertRegionIsCurrent("outbox-cli/README.md");
    }

    @Test
    void thePollingRelaysOptionTableMatchesItsDefinitions() throws Exception {
        assertRegionIsCurrent("relay-poller/README.md", "--relay-readme", "poll");
    }

    @Test
    void theCdcRelaysOptionTableMatchesItsDefinitions() throws Exception {
        assertRegionIsCurrent("relay-debezium/README.md", "--relay-readme", "cdc");
    }

    private static void assertRegionIsCurrent(String readme, String... args) throws Exception {
        String text = Files.readString(ROOT.resolve(readme));
        int from = text.indexOf(START);
        int to = text.indexOf(END);
        assertThat(from).as("%s has no line starting with '%s'", readme, START).isNotNegative();
        assertThat(to).as("%s has no '%s' after the start marker", readme, END).isGreaterThan(from);
        assertThat(text.indexOf(START, from + 1)).as("%s has more than one generated region", readme).isNegative();
        String copy = text.substring(text.indexOf('\n', from) + 1, to);
        String[] command = new String[args.length + 1];
        command[0] = "config-reference";
        System.arraycopy(args, 0, command, 1, args.length);
        CliRun reference = CliRun.run(Map.of(), command);
        assertThat(reference.exitCode()).as(reference.all()).isZero();
        assertThat(copy.strip())
                .as("the generated option table in %s differs from the option definitions (`outbox %s`): run"
                        + " ./mvnw -B -DskipTests -pl outbox-dev-tools -am package && docs/build-readme.sh",
                        readme, String.join(" ", command))
                .isEqualTo(reference.out().strip());
    }

    @Test
    void eachCommandsOptionsComeEssentialsFirstWithTheirGroupAndVariable() {
        CliRun r = CliRun.run(Map.of(), "config-reference");
        assertThat(r.exitCode()).as(r.all()).isZero();
        assertThat(r.out()).contains("| `outbox migrate` | essential | `--jdbc-url` | `OUTBOX_JDBC_URL` |")
                .contains("| `outbox relay cdc` | essential | `--slot-name` | `OUTBOX_SLOT_NAME` | `outboxkit_slot` |")
                .contains("`--schema` | `OUTBOX_SCHEMA` | `public`");
        for (String command : List.of("outbox relay poll", "outbox relay cdc", "outbox reconcile", "outbox purge")) {
            List<Importance> groups = Arrays.stream(r.out().split("\n"))
                    .filter(line -> line.startsWith("| `" + command + "` |"))
                    .map(line -> line.split(" \\| ")[1])
                    .map(label -> Arrays.stream(Importance.values()).filter(i -> i.label().equals(label)).findFirst()
                            .orElseThrow(() -> new AssertionError("no group '" + label + "' in " + command)))
                    .toList();
            assertThat(groups).as(command).isNotEmpty().isSorted().startsWith(Importance.ESSENTIAL);
        }
    }

    @Test
    void theRelayTablesListEveryOptionOnceEssentialsFirst() {
        for (List<RelayOption<?>> options : List.of(PollingRelay.builder().options(), CdcRelay.builder().options())) {
            String table = ConfigReferenceCommand.relayTable(options);
            List<String> rows = Arrays.stream(table.split("\n")).skip(2).toList();
            assertThat(rows).hasSameSizeAs(options);
            assertThat(rows.get(0)).startsWith("| essential | `schema(String)` | `public` |");
            for (RelayOption<?> option : options) {
                assertThat(rows).filteredOn(row -> row.contains("| `" + option.name() + "("))
                        .singleElement().asString().startsWith("| " + option.importance().label() + " |");
            }
        }
    }
}
