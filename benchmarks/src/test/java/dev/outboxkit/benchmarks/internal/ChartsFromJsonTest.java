package dev.outboxkit.benchmarks.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The committed run report draws every chart again without a run ({@code benchmarks/run.sh --charts-only}). */
class ChartsFromJsonTest {

    @Test
    void drawsEveryChartFromTheCommittedReport(@TempDir Path dir) throws Exception {
        Files.copy(Path.of("results", "latest.json"), dir.resolve("latest.json"));

        Report report = ChartsFromJson.read(dir.resolve("latest.json"));
        var charts = Charts.write(report, dir);

        assertThat(report.row("poller_drain_eps").stat()).isNotNull();
        assertThat(report.latencies()).isNotEmpty();
        assertThat(charts).containsKeys(Charts.THROUGHPUT, Charts.RATIOS, Charts.LATENCY, Charts.CRASH, Charts.PEERS);
        for (String name : charts.keySet()) {
            BufferedImage image = ImageIO.read(dir.resolve(name).toFile());
            assertThat(image).as("%s decodes", name).isNotNull();
            assertThat(image.getWidth()).isGreaterThan(100);
        }
    }
}
