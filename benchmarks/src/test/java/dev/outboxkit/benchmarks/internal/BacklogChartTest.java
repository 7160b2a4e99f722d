package dev.outboxkit.benchmarks.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxkit.benchmarks.load.DrainSeries;
import dev.outboxkit.benchmarks.scenarios.BacklogAfterOutage;
import java.awt.image.BufferedImage;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The backlog mode's chart is drawn from the series files beside the report, with one relay's or both. */
class BacklogChartTest {

    private static DrainSeries series(String relay, String label, double rate) {
        List<DrainSeries.Sample> samples = new ArrayList<>();
        for (int s = 0; s <= 50; s++) {
            samples.add(new DrainSeries.Sample(s, Math.min(1_000_000, Math.round(s * rate)), 0, 0, 1 << 20, 0,
                    80 + s));
        }
        return new DrainSeries(relay, label, 1_000_000, samples);
    }

    @Test
    void drawsTheRatePerStepBesideTheResidentMemoryOfEachRelayWithASeries(@TempDir Path dir) throws Exception {
        Path png = dir.resolve("backlog.png");
        Charts.writeBacklog(dir, png); // no series yet: the panels say so
        assertThat(ImageIO.read(png.toFile())).isNotNull();

        series("poller", "polling relay", 25_000).write(BacklogAfterOutage.seriesFile(dir, "poller"));
        series("cdc", "CDC relay", 40_000).write(BacklogAfterOutage.seriesFile(dir, "cdc"));
        Charts.writeBacklog(dir, png);

        BufferedImage image = ImageIO.read(png.toFile());
        assertThat(image.getWidth()).isGreaterThan(1000);
        assertThat(image.getHeight()).isGreaterThan(300);
    }
}
