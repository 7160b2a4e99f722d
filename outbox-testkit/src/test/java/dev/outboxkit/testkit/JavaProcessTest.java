package dev.outboxkit.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class JavaProcessTest {

    /** A child that counts until it is stopped. */
    public static final class Counter {
        public static void main(String[] args) throws Exception {
            Runtime.getRuntime().addShutdownHook(new Thread(() -> System.out.println("shutdown hook ran")));
            System.out.println("started " + args[0] + " " + System.getenv("GREETING"));
            for (long i = 0; ; i++) {
                System.out.println("tick " + i);
                Thread.sleep(50); // pacing: a tick every 50 ms, so a frozen child shows as a gap
            }
        }
    }

    /** A child that prints a burst of lines and exits at once. */
    public static final class Burst {
        public static void main(String[] args) {
            for (int i = 0; i < 20_000; i++) {
                System.out.println("line " + i);
            }
            System.out.println("last line");
        }
    }

    @Test
    void everyLineAnExitedChildPrintedIsInItsOutput() {
        try (JavaProcess child = JavaProcess.start("burst", Burst.class, List.of(), List.of(), Map.of())) {
            assertThat(child.waitForExit(Duration.ofSeconds(60))).isZero();
            assertThat(child.output()).endsWith("last line\n");
        }
        try (JavaProcess child = JavaProcess.start("burst", Burst.class, List.of(), List.of(), Map.of())) {
            assertThat(child.awaitOutput("never printed", Duration.ofSeconds(60))).isFalse();
            assertThat(child.output()).endsWith("last line\n");
        }
    }

    @Test
    void startsWithTheTestClassPathAndIsKilledWithoutItsShutdownHook() {
        try (JavaProcess child = JavaProcess.start("counter", Counter.class, List.of("arg1"), List.of(), Map.of("GREETING", "hello"))) {
            assertThat(child.awaitOutput("started arg1 hello", Duration.ofSeconds(30))).as(child.output()).isTrue();
            assertThat(child.awaitOutput("tick 2", Duration.ofSeconds(30))).isTrue();
            child.kill9();
            assertThat(child.isAlive()).isFalse();
            assertThat(child.output()).doesNotContain("shutdown hook ran");
        }
    }

    @Test
    void pausedChildMakesNoProgressAndTerminateRunsItsShutdownHook() throws Exception {
        try (JavaProcess child = JavaProcess.start("counter", Counter.class, List.of("x"), List.of(), Map.of())) {
            assertThat(child.awaitOutput("tick 1", Duration.ofSeconds(30))).isTrue();
            child.pause();
            // Let output already in the pipe drain (unchanged for a second), then check that none follows while stopped.
            AtomicReference<String> seen = new AtomicReference<>(child.output());
            await("the paused child's output to settle").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100))
                    .during(Duration.ofSeconds(1)).until(() -> seen.getAndSet(child.output()).equals(seen.get()));
            String settled = child.output();
            Thread.sleep(300); // the fault under test: time passes while the child is frozen
            assertThat(child.output()).isEqualTo(settled);
            child.resume();
            int ticks = settled.split("tick").length;
            assertThat(child.awaitOutput("tick " + ticks, Duration.ofSeconds(30))).isTrue();
            assertThat(child.terminate(Duration.ofSeconds(30))).isEqualTo(143);
            assertThat(child.output()).contains("shutdown hook ran");
        }
    }
}
