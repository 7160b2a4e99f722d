package dev.outboxkit.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxkit.testkit.internal.SidecarContent;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.Test;

/**
 * The sidecar's jar, {@code target/outbox.jar} (after the shade step): no Kafka broker, no PostgreSQL server, no
 * servlet container ({@link SidecarContent}); the relays and the operations are there, and {@code dev}/{@code demo}
 * answer where they are.
 */
class SidecarJarIT {

    private static final Path JAR = Path.of("target/outbox.jar");

    @Test
    void holdsNoBrokerNoDatabaseAndNoServletContainer() throws Exception {
        assertThat(JAR).exists();
        assertThat(SidecarContent.violations(JAR)).isEmpty();
        try (ZipFile zip = new ZipFile(JAR.toFile())) {
            for (String needed : List.of("dev/outboxkit/cli/Main.class", "dev/outboxkit/relay/poller/PollingRelay.class",
                    "dev/outboxkit/relay/cdc/CdcRelay.class", "io/debezium/connector/postgresql/PostgresConnector.class",
                    "org/apache/kafka/clients/producer/KafkaProducer.class", "org/postgresql/Driver.class",
                    "io/micrometer/prometheusmetrics/PrometheusMeterRegistry.class")) {
                assertThat(zip.getEntry(needed)).as(needed).isNotNull();
            }
            assertThat(zip.getEntry("dev/outboxkit/testkit/OutboxTestkit.class")).isNull();
            assertThat(zip.getEntry("META-INF/services/dev.outboxkit.cli.CommandProvider")).isNull();
        }
    }

    @Test
    void devAndDemoSayWhereTheyAre() throws Exception {
        for (String command : List.of("dev", "demo")) {
            Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-jar", JAR.toString(), command, "--pg-port", "5432").redirectErrorStream(true).start();
            String output = new String(p.getInputStream().readAllBytes());
            assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
            assertThat(p.exitValue()).as(output).isEqualTo(Main.USAGE);
            assertThat(output).contains("'outbox " + command + "' is not in this jar")
                    .contains("bin/outbox " + command).contains("outbox-dev-tools");
        }
    }
}
