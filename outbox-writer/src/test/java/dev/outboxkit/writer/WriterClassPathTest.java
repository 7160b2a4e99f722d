package dev.outboxkit.writer;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * What a service brings onto its class path by embedding the writer: the contract, the PostgreSQL driver, Jackson for
 * the JSON checks, and the metrics and logging APIs — no Kafka client and no connection pool. Reads the runtime
 * dependencies Maven resolved for this module ({@code target/runtime-dependencies.txt}, written by
 * {@code dependency:list} before the tests run).
 */
class WriterClassPathTest {

    private static final Pattern ARTIFACT = Pattern.compile("^\\s+([\\w.-]+):([\\w.-]+):jar:");

    /** Group ids allowed on the writer's runtime class path, each with the reason it is there. */
    private static final List<String> ALLOWED = List.of(
            "dev.outboxkit",                 // outbox-core, the contract
            "org.postgresql",                // the driver the caller's transaction runs on
            "org.checkerframework",          // the driver's annotations
            "com.fasterxml.jackson.core",    // the JSON checks
            "io.micrometer", "org.hdrhistogram", "org.jspecify", // the writer's meters and their annotations
            "org.slf4j");                    // logging API

    @Test
    void theWriterBringsNoKafkaClientAndNoConnectionPool() throws Exception {
        List<String> artifacts = resolved();
        assertThat(artifacts).as("the writer's resolved runtime dependencies").isNotEmpty()
                .contains("dev.outboxkit:outbox-core", "org.postgresql:postgresql");
        assertThat(artifacts).as("a service embedding the writer must not get Kafka's client or HikariCP")
                .noneMatch(a -> a.startsWith("org.apache.kafka:"))
                .noneMatch(a -> a.startsWith("com.zaxxer:"))
                .doesNotContain("dev.outboxkit:outbox-runtime");
        assertThat(artifacts).as("every runtime dependency of the writer is one we chose (add it to ALLOWED with why)")
                .allMatch(a -> ALLOWED.contains(a.substring(0, a.indexOf(':'))));
    }

    /** {@code group:artifact} of every runtime dependency, transitive ones included. */
    static List<String> resolved() throws Exception {
        Path list = Path.of("target", "runtime-dependencies.txt");
        assertThat(list).as("written by maven-dependency-plugin's list goal (outbox-writer/pom.xml)").exists();
        return Files.readAllLines(list).stream()
                .map(ARTIFACT::matcher).filter(Matcher::find)
                .map(m -> m.group(1) + ":" + m.group(2))
                .toList();
    }
}
