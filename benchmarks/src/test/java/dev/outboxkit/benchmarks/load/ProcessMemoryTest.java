package dev.outboxkit.benchmarks.load;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxkit.testkit.JavaProcess;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ProcessMemoryTest {

    @Test
    void readsTheResidentSetOfAChildJvm() {
        try (JavaProcess child = JavaProcess.start("rss-child", AllocatingChild.class, List.of("160"), List.of(), Map.of())) {
            assertThat(child.awaitOutput(AllocatingChild.READY, Duration.ofSeconds(60))).as(child.output()).isTrue();

            double rss = ProcessMemory.rssMb(child.pid());
            double peak = ProcessMemory.peakRssMb(child.pid());

            assertThat(rss).as("160 MiB touched").isGreaterThan(160);
            assertThat(peak).isGreaterThanOrEqualTo(rss);
            assertThat(ProcessMemory.rssAnonMb(child.pid())).as("the arrays are anonymous memory").isGreaterThan(160);
            assertThat(ProcessMemory.rssFileMb(child.pid())).as("libjvm.so is mapped from a file").isPositive();
        }
    }

    @Test
    void parsesStatusLinesAndRefusesOthers() {
        assertThat(ProcessMemory.parseKb("VmRSS:\t  123456 kB")).isEqualTo(123456);
        assertThatThrownBy(() -> ProcessMemory.parseKb("VmRSS: 12 MB")).hasMessageContaining("VmRSS: 12 MB");
    }

    @Test
    void aProcessThatIsGoneIsNamed() {
        assertThatThrownBy(() -> ProcessMemory.rssMb(Integer.MAX_VALUE)).hasMessageContaining("is gone");
    }
}
