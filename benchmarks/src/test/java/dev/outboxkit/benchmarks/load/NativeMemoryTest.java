package dev.outboxkit.benchmarks.load;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxkit.testkit.JavaProcess;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class NativeMemoryTest {

    /** Part of what JDK 17.0.15's {@code jcmd <pid> VM.native_memory summary scale=KB} printed here. */
    private static final String SUMMARY = """
            16383:

            Native Memory Tracking:

            (Omitting categories weighting less than 1KB)

            Total: reserved=7590418KB, committed=67574KB
                   malloc: 5082KB #62461
                   mmap:   reserved=7585336KB, committed=62492KB

            -                 Java Heap (reserved=6172672KB, committed=32768KB)
                                        (mmap: reserved=6172672KB, committed=32768KB)\s
            \s
            -                     Class (reserved=1048794KB, committed=1370KB)
                                        (classes #2493)
                                        (malloc=218KB #4064) (at peak)\s
                                        (mmap: reserved=1048576KB, committed=1152KB)\s
            \s
            -                  Compiler (reserved=186KB, committed=186KB)
                                        (malloc=22KB #98) (peak=37KB #123)\s
                                        (arena=165KB #5) (peak=2545KB #14)
            \s
            -    Native Memory Tracking (reserved=988KB, committed=988KB)
                                        (malloc=12KB #198) (at peak)\s
                                        (tracking overhead=976KB)
            \s
            -                 Metaspace (reserved=65574KB, committed=8038KB)
                                        (malloc=38KB #14) (at peak)\s
                                        (mmap: reserved=65536KB, committed=8000KB)\s
            """;

    @Test
    void parsesCommittedPerCategoryAndTheMallocAndArenaPeaks() {
        NativeMemory.Summary s = NativeMemory.parse(SUMMARY);

        assertThat(s.totalCommittedKb()).isEqualTo(67574);
        assertThat(s.committedKb()).containsExactly(Map.entry("Java Heap", 32768L), Map.entry("Class", 1370L),
                Map.entry("Compiler", 186L), Map.entry("Native Memory Tracking", 988L), Map.entry("Metaspace", 8038L));
        assertThat(s.committedMb("Class", "Metaspace")).isEqualTo((1370 + 8038) / 1024.0);
        assertThat(s.committedMb("Thread")).as("a category not printed").isZero();
        assertThat(s.peakKb()).containsEntry("Compiler", 37L + 2545L).containsEntry("Class", 218L)
                .containsEntry("Java Heap", 0L);
    }

    @Test
    void aSummaryWithoutTrackingSaysHowToTurnItOn() {
        assertThatThrownBy(() -> NativeMemory.parse("16383:\nNative memory tracking is not enabled\n"))
                .hasMessageContaining("-XX:NativeMemoryTracking=summary");
    }

    @Test
    void readsTheSummaryOfARunningChildJvm() {
        try (JavaProcess child = JavaProcess.start("nmt-child", AllocatingChild.class, List.of("64"),
                List.of("-XX:NativeMemoryTracking=summary", "-Xms16m"), Map.of())) {
            assertThat(child.awaitOutput(AllocatingChild.READY, Duration.ofSeconds(60))).as(child.output()).isTrue();

            NativeMemory.Summary s = NativeMemory.summary(child.pid());

            assertThat(s.committedMb("Java Heap")).as("64 MiB of arrays live in the heap").isGreaterThan(64);
            assertThat(s.committedKb()).containsKeys("Class", "Thread", "Code", "GC", "Native Memory Tracking");
            assertThat(s.totalCommittedMb()).isGreaterThan(s.committedMb("Java Heap"));
        }
    }
}
