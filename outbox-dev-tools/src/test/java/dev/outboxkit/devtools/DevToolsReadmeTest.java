package dev.outboxkit.devtools;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxkit.cli.Main;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** With this module on the class path the outbox command has the real dev and demo, and README.md lists their options. */
class DevToolsReadmeTest {

    private static String run(String... args) {
        StringWriter out = new StringWriter();
        int code = Main.execute(Map.of(), new PrintWriter(out, true), new PrintWriter(new StringWriter(), true), args);
        assertThat(code).as(out.toString()).isZero();
        return out.toString();
    }

    @Test
    void devAndDemoAreTheRealCommands() {
        assertThat(run("dev", "--help")).contains("Embedded PostgreSQL 17").contains("--pg-port");
        assertThat(run("demo", "--help")).contains("--lost-ack-rate");
    }

    @Test
    void theReadmeListsTheOptionsOfDevAndDemo() throws Exception {
        String readme = Files.readString(Path.of("README.md"));
        String start = "<!-- config-reference:start";
        String end = "<!-- config-reference:end -->";
        int from = readme.indexOf(start);
        int to = readme.indexOf(end);
        assertThat(from).isNotNegative();
        assertThat(to).isGreaterThan(from);
        String copy = readme.substring(readme.indexOf('\n', from) + 1, to);
        String expected = run("config-reference", "dev", "demo");
        assertThat(copy).as("outbox-dev-tools/README.md's reference differs from the option definitions"
                + " (`outbox config-reference dev demo`): run"
                + " ./mvnw -B -DskipTests -pl outbox-dev-tools -am package && docs/build-readme.sh").isEqualTo(expected);
        assertThat(expected).contains("`--pg-port`", "`--lost-ack-rate`").doesNotContain("`outbox relay");
    }
}
