package dev.outboxkit.benchmarks.load;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

class CoreWaitTest {

    @Test
    void readsTheTimeOnACpuAndTheWaitForOneFromASchedstatLine() {
        assertThat(CoreWait.times("189316159 15951444 493\n")).containsExactly(189_316_159L, 15_951_444L);
        assertThat(CoreWait.times(null)).as("a task that is gone").isNull();
        assertThatThrownBy(() -> CoreWait.times("42")).hasMessageContaining("'42'");
    }

    @Test
    void threadNamesAreCutShortAsTheKernelShowsThem() {
        assertThat(CoreWait.comm("outbox-poll-relay-0")).isEqualTo("outbox-poll-rel");
        assertThat(CoreWait.comm("main")).isEqualTo("main");
        assertThat(CoreWait.comm("open-loop-writer-3")).hasSize(CoreWait.COMM_LENGTH);
    }

    @Test
    void moreBusyThreadsThanCoresWaitForOne() throws Exception {
        int cores = Runtime.getRuntime().availableProcessors();
        int spinners = cores + 2;
        long spinNanos = 400_000_000L;
        Map<String, CoreWait.Task> start = CoreWait.snapshot(comm -> comm.startsWith("core-wait-spin") ? "spin" : "rest",
                Map.of(ProcessHandle.current().pid(), "this process's main thread"));
        assertThat(start).as("this machine kind keeps scheduler statistics (/proc/<pid>/task/<tid>/schedstat)")
                .isNotEmpty().containsKey(ProcessHandle.current().pid() + "/");

        CountDownLatch go = new CountDownLatch(1);
        // the spinners live until the end snapshot: an ended thread's times are gone
        CountDownLatch measured = new CountDownLatch(1);
        CountDownLatch spun = new CountDownLatch(spinners);
        List<Thread> threads = new ArrayList<>();
        long[] deadline = new long[1];
        for (int i = 0; i < spinners; i++) {
            Thread t = new Thread(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    return;
                }
                while (System.nanoTime() < deadline[0]) {
                    Thread.onSpinWait();
                }
                spun.countDown();
                try {
                    measured.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, "core-wait-spin-" + i);
            t.start();
            threads.add(t);
        }
        deadline[0] = System.nanoTime() + spinNanos; // published to the spinners by the latch
        go.countDown();
        spun.await(); // every spinner saw the deadline pass
        Map<String, CoreWait.Task> end = CoreWait.snapshot(comm -> comm.startsWith("core-wait-spin") ? "spin" : "rest",
                Map.of());
        measured.countDown();
        for (Thread t : threads) {
            t.join();
        }

        CoreWait.Use spin = CoreWait.between(start, end).stream().filter(u -> u.label().equals("spin")).findFirst()
                .orElseThrow();
        // cores + 2 threads runnable for 400 ms on `cores` CPUs: together they wait at least 2 × 400 ms less the
        // time they took to start; a quarter of that is a bound no scheduler can get under
        assertThat(spin.waitNanos()).as("the spinners' wait for a core").isGreaterThan(2 * spinNanos / 4);
        assertThat(spin.runNanos()).as("their time on a CPU, at most all cores for the window")
                .isPositive().isLessThanOrEqualTo(cores * (spinNanos + 200_000_000L));
        assertThat(spin.waitShare()).isBetween(0.0, 1.0);
    }
}
