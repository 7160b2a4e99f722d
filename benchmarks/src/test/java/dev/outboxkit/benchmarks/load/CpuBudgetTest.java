package dev.outboxkit.benchmarks.load;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.outboxkit.benchmarks.load.CpuBudget.Part;
import dev.outboxkit.benchmarks.load.CpuBudget.ProcStat;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(OutboxTestkitExtension.class)
class CpuBudgetTest {

    @Test
    void parsesAStatLineWhoseNameHoldsSpacesAndParentheses() {
        // fields after the name: state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime …
        ProcStat stat = ProcStat.parse("4242 (postgres: bench (x) ) idle) S 4200 4242 4242 0 -1 4194560 96 0 0 0 "
                + "37 12 5 3 20 0 1 0 2319347 3133440 382");

        assertThat(stat.pid()).isEqualTo(4242);
        assertThat(stat.name()).isEqualTo("postgres: bench (x) ) idle");
        assertThat(stat.ppid()).isEqualTo(4200);
        assertThat(stat.utime()).isEqualTo(37);
        assertThat(stat.stime()).isEqualTo(12);
        assertThat(stat.cutime()).isEqualTo(5);
        assertThat(stat.cstime()).isEqualTo(3);
        assertThat(stat.totalTicks()).isEqualTo(57);
        assertThatThrownBy(() -> ProcStat.parse("4242 postgres S 1")).hasMessageContaining("4242 postgres S 1");
        assertThatThrownBy(() -> ProcStat.parse("4242 (postgres) S 1 2 3")).hasMessageContaining("too few fields");
    }

    @Test
    void readsThisProcessFromProc() throws Exception {
        ProcStat self = ProcStat.readOrNull(ProcessHandle.current().pid());

        assertThat(self).isNotNull();
        assertThat(self.name()).isEqualTo(Files.readString(Path.of("/proc/self/comm")).trim());
        assertThat(self.ppid()).isEqualTo(ProcessHandle.current().parent().orElseThrow().pid());
        assertThat(ProcStat.readOrNull(Integer.MAX_VALUE)).as("a process that is not there").isNull();
    }

    @Test
    void clockTicksComeFromGetconfAndMustBeAPositiveNumber() {
        assertThat(CpuBudget.ClockTicks.parse("100\n")).isEqualTo(100);
        assertThat(CpuBudget.ClockTicks.PER_SECOND).isPositive();
        assertThatThrownBy(() -> CpuBudget.ClockTicks.parse("undefined")).hasMessageContaining("'undefined'");
        assertThatThrownBy(() -> CpuBudget.ClockTicks.parse("0")).hasMessageContaining("not a positive number");
    }

    @Test
    void machineTicksCountBusyFieldsAndCpus() {
        CpuBudget.MachineTicks m = CpuBudget.parseMachine(List.of(
                "cpu  100 1 20 500 7 2 3 4 50 0",
                "cpu0 50 1 10 250 3 1 2 2 25 0",
                "cpu1 50 0 10 250 4 1 1 2 25 0",
                "intr 12345"));

        assertThat(m.busy()).as("user nice system irq softirq steal; guest is in user").isEqualTo(100 + 1 + 20 + 2 + 3 + 4);
        assertThat(m.total()).isEqualTo(100 + 1 + 20 + 500 + 7 + 2 + 3 + 4);
        assertThat(m.cpus()).isEqualTo(2);
        assertThatThrownBy(() -> CpuBudget.parseMachine(List.of("intr 1"))).hasMessageContaining("/proc/stat");
    }

    @Test
    void threadsArePartsByTheNamesTheBrokerAndClientsGiveThem() {
        for (String broker : List.of("data-plane-kafka-request-handler-3", "data-plane-kafka-network-thread-0-EXTERNAL-PLAINTEXT-1",
                "kafka-0-raft-io-thread", "kafka-0-metadata-loader-event-handler", "kafka-scheduler-7",
                "quorum-controller-0-event-handler", "broker-0-lifecycle-manager-event-handler",
                "controller-0-ThrottledChannelReaper-Fetch", "group-coordinator-event-processor-1",
                "ExpirationReaper-0-Produce", "kafka-log-cleaner-thread-0", "kafka-cluster-test-kit-2",
                "metrics-meter-tick-thread-1", "TxnMarkerSenderThread-0")) {
            assertThat(Part.of(broker)).as(broker).isEqualTo(Part.KAFKA);
        }
        assertThat(Part.of("kafka-producer-network-thread | outboxkit-poll-vm-1")).isEqualTo(Part.PRODUCER);
        assertThat(Part.of("debezium-postgresconnector-outboxkit-change-event-source-coordinator")).isEqualTo(Part.DEBEZIUM);
        for (String client : List.of("outboxkit-cdc-engine-bench_cdc_1", "outbox-poll-relay", "stock-debezium", "main",
                "kafka-admin-client-thread | adminclient-1", "kafka-coordinator-heartbeat-thread | g", "pool-3-thread-1")) {
            assertThat(Part.of(client)).as(client).isEqualTo(Part.CLIENT);
        }
        assertThat(Part.ofNative("GC Thread#1")).isEqualTo(Part.GC);
        assertThat(Part.ofNative("G1 Conc#0")).isEqualTo(Part.GC);
        assertThat(Part.ofNative("C2 CompilerThre")).isEqualTo(Part.JIT);
        assertThat(Part.ofNative("VM Thread")).isNull();
        assertThat(Part.ofNative("outbox-poll-rel")).as("a Java thread's native name").isNull();
    }

    @Test
    void theJvmsOwnGcAndJitThreadsAreSeenByTheirNativeNames() {
        List<String> names = new java.util.ArrayList<>();
        try (var tasks = Files.newDirectoryStream(Path.of("/proc/self/task"))) {
            tasks.forEach(t -> names.add(ProcStat.readOrNull(t.resolve("stat")).name()));
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        assertThat(names).as("native thread names").anyMatch(n -> Part.ofNative(n) == Part.GC)
                .anyMatch(n -> Part.ofNative(n) == Part.JIT);
    }

    /**
     * Work whose CPU is known from where it ran lands in its part: a spinning client thread, a spinning thread with
     * a broker's name, and a query loop in a PostgreSQL backend that has exited (and been waited for) before the
     * second snapshot. Each part must hold at least what its worker measured of itself; the machine at least all.
     */
    @Test
    void spinningThreadsAndAnExitedBackendShowUpInTheirParts(TestDatabase db) throws Exception {
        CpuBudget budget;
        try (Connection c = db.connect()) {
            budget = CpuBudget.forServerOf(c);
        }
        CountDownLatch measured = new CountDownLatch(1);
        Spinner client = new Spinner("cpu-budget-test-spinner", measured);
        Spinner broker = new Spinner("kafka-scheduler-99", measured);

        CpuBudget.Snapshot start = budget.snapshot();
        client.start();
        broker.start();
        long backend;
        long backendNanos;
        try (Connection c = db.connect(); Statement s = c.createStatement()) {
            backend = backendPid(s);
            // until the backend has used 20 ticks of CPU, however long that takes on a busy machine
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (ProcStat.readOrNull(backend).totalTicks() < 20 && System.nanoTime() < deadline) {
                s.execute("SELECT count(*) FROM generate_series(1, 300000)");
            }
            backendNanos = ProcStat.readOrNull(backend).totalTicks() * 1_000_000_000L / CpuBudget.ClockTicks.PER_SECOND;
        }
        Await.until("backend " + backend + " exited and reaped", () -> ProcStat.readOrNull(backend) == null,
                Duration.ofSeconds(10), 10, () -> null);
        Await.until("both spinners measured themselves", () -> client.spent.get() > 0 && broker.spent.get() > 0,
                Duration.ofSeconds(40), 10, () -> null);
        CpuBudget.Usage usage = budget.between(start, budget.snapshot());
        measured.countDown();

        long tick = 1_000_000_000L / CpuBudget.ClockTicks.PER_SECOND;
        assertThat(backendNanos).as("the query loop used the backend's CPU").isGreaterThan(10 * tick);
        assertThat(usage.nanos().get(Part.POSTGRES)).as(usage.profile(5)).isGreaterThanOrEqualTo(backendNanos);
        assertThat(usage.nanos().get(Part.CLIENT)).as(usage.profile(5)).isGreaterThanOrEqualTo(client.spent.get());
        assertThat(usage.nanos().get(Part.KAFKA)).as(usage.profile(5)).isGreaterThanOrEqualTo(broker.spent.get());
        assertThat(client.spent.get()).as("the spinner ran").isGreaterThan(Duration.ofMillis(50).toNanos());
        assertThat(usage.nanos().get(Part.PRODUCER)).isZero();
        assertThat(usage.nanos().get(Part.DEBEZIUM)).isZero();
        double ours = (backendNanos + client.spent.get() + broker.spent.get()) / 1e9;
        // a share of the machine: /proc/stat's ticks over this half-second window overshoot on a busy VM (1.09 seen
        // while two Maven builds ran), and counting the per-CPU lines as well as the total would give about 2
        assertThat(usage.machineBusy()).as(usage.profile(5))
                .isGreaterThanOrEqualTo(0.9 * ours / (usage.cpus() * usage.wallSeconds()) - 0.02)
                .isLessThanOrEqualTo(1.25);
        assertThat(usage.microsPerEvent(Part.CLIENT, 1000)).isCloseTo(usage.nanos().get(Part.CLIENT) / 1e6, within(1e-9));
    }

    @Test
    void aServerThatIsNotLocalIsRefused() {
        // a backend pid this machine does not have: the budget cannot see the server's processes
        assertThatThrownBy(() -> CpuBudget.forBackend(Integer.MAX_VALUE))
                .hasMessageContaining("is not a local postgres process");
    }

    private static long backendPid(Statement s) throws Exception {
        try (ResultSet rs = s.executeQuery("SELECT pg_backend_pid()")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /**
     * Spins for 300 ms of wall time, notes its own CPU, then stays alive until the second snapshot is taken (a
     * thread that has ended is no longer readable per thread: its time would count as {@link Part#JVM}).
     */
    private static final class Spinner extends Thread {
        static volatile long sink;
        final AtomicLong spent = new AtomicLong();
        private final CountDownLatch measured;

        Spinner(String name, CountDownLatch measured) {
            super(name);
            this.measured = measured;
            setDaemon(true);
        }

        @Override
        public void run() {
            // until this thread has used 100 ms of CPU, however long that takes on a busy machine
            ThreadMXBean threads = ManagementFactory.getThreadMXBean();
            long cpu = threads.getCurrentThreadCpuTime();
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            long x = 0;
            while (threads.getCurrentThreadCpuTime() - cpu < Duration.ofMillis(100).toNanos()
                    && System.nanoTime() < deadline) {
                x += Long.numberOfTrailingZeros(x + System.nanoTime());
            }
            sink = x;
            spent.set(threads.getCurrentThreadCpuTime() - cpu);
            try {
                measured.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
