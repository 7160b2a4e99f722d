package dev.outboxkit.devtools;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The main job, as a user runs it: {@code bin/outbox demo} on the packaged jar, in a short mode. */
class DemoIT {

    @ParameterizedTest(name = "relay {0}")
    @ValueSource(strings = {"poll", "cdc"})
    void demoHoldsEveryInvariant(String relay) throws Exception {
        Path root = Path.of("..").toAbsolutePath().normalize();
        Path log = Files.createTempFile("outbox-demo-" + relay, ".log");
        Process demo = new ProcessBuilder(List.of(root.resolve("bin/outbox").toString(), "demo", "--relay", relay,
                "--events", "2000", "--rate", "1000"))
                .directory(root.toFile())
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        boolean finished = demo.waitFor(8, TimeUnit.MINUTES);
        String output = Files.readString(log, StandardCharsets.UTF_8);
        System.out.println(output);
        if (!finished) {
            demo.destroyForcibly();
        }
        assertThat(finished).as("demo finished in time:\n" + output).isTrue();
        assertThat(demo.exitValue()).as(output).isZero();
        assertThat(output).contains("outbox demo report")
                .containsPattern("lost\\s+0\\n")
                .containsPattern("applied twice\\s+0\\n")
                .contains("ledger vs projection          EQUAL")
                .contains("kill -9 the relay")
                // the failover it saw, measured (never a fixed figure)
                .containsPattern("failover gap\\s+[0-9,]+ ms from the kill -9 to the survivor's first record of the"
                        + " killed relay's work; worst event delay around it [0-9,]+ ms")
                .contains("RESULT: OK");
        new File(log.toString()).delete();
    }
}
