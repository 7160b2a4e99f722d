package dev.outboxkit.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxkit.benchmarks.scenarios.RelayRss;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** relay_rss_mb is only the sidecar's figure while the benchmark starts the relay the way bin/outbox does. */
class SidecarJvmOptionsTest {

    @Test
    void relayRssUsesTheLaunchersDefaultJvmOptions() throws Exception {
        String launcher = Files.readString(Path.of("..", "bin", "outbox"));
        assertThat(launcher).contains("default_java_opts=\"" + String.join(" ", RelayRss.SIDECAR_JVM_OPTIONS) + "\"")
                .contains("${JAVA_OPTS:-$default_java_opts}");
    }
}
