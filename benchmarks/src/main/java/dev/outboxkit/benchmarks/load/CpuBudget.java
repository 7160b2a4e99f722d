package dev.outboxkit.benchmarks.load;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * CPU time (user + system) spent on one machine between two snapshots, split by who spent it, so a drain's
 * events/s comes with what each event cost the embedded PostgreSQL server, the in-JVM Kafka broker and the system
 * under test (the measurement that bounds a target). Linux only: {@code /proc} and {@code getconf}.
 *
 * <ul>
 *   <li>{@link Part#POSTGRES}: the postmaster and every process whose parent it is (backends, walsender,
 *       walwriter, checkpointer …), {@code utime + stime + cutime + cstime} of each from {@code /proc/<pid>/stat}.
 *       A child that exits between two snapshots is not lost: the postmaster waits for it at once, and its
 *       time moves into the postmaster's {@code cutime}/{@code cstime}.</li>
 *   <li>{@link Part#KAFKA}, {@link Part#PRODUCER}, {@link Part#DEBEZIUM}, {@link Part#CLIENT}: the live threads
 *       of this JVM ({@link ThreadMXBean#getThreadCpuTime}), by name (see {@link Part#of}).</li>
 *   <li>{@link Part#GC}, {@link Part#JIT}: the JVM's own garbage collector and JIT compiler threads, which
 *       {@link ThreadMXBean} does not list, from {@code /proc/self/task/<tid>/stat} by their native names.</li>
 *   <li>{@link Part#JVM}: the rest of this process's CPU: the VM thread (safepoints), other VM threads, and threads
 *       that ended between the snapshots (their time is no longer readable per thread).</li>
 * </ul>
 *
 * <p>The whole machine comes from the first line of {@code /proc/stat}: busy = user + nice + system + irq +
 * softirq + steal (steal: time the hypervisor gave away, not available to us either), over cores × wall time.
 * Per-process figures are clock ticks ({@code getconf CLK_TCK}, read once), 10 ms at 100 Hz per process: fine over
 * windows of seconds, coarse below a tenth of one.
 */
public final class CpuBudget {

    /** Who spent the CPU. Every thread of this JVM is in exactly one of the thread parts. */
    public enum Part {
        POSTGRES("postgres"),
        KAFKA("kafka"),
        PRODUCER("producer"),
        DEBEZIUM("debezium"),
        CLIENT("client"),
        GC("gc"),
        JIT("jit"),
        JVM("jvm");

        /**
         * The in-JVM broker's threads (KRaft broker and controller in one {@code KafkaClusterTestKit}), by the
         * names Kafka 4 gives them: network and request handler threads ({@code data-plane-kafka-…}), raft and
         * metadata ({@code kafka-<node>-…}, {@code quorum-controller-…}, {@code controller-<node>-…},
         * {@code broker-<node>-…}), the log, scheduler and coordinator threads, purgatory reapers, and the
         * broker's metrics ticker. A Kafka upgrade that adds a name shows up as a broker thread under
         * {@link #CLIENT} in the drain's profile line (and in {@code CpuBudgetTest}).
         */
        static final Pattern BROKER = Pattern.compile("^(data-plane-kafka-|kafka-\\d+-|kafka-scheduler-"
                + "|kafka-log-cleaner-thread-|kafka-cluster-test-kit-|quorum-controller-|controller-\\d+-|broker-\\d+-"
                + "|group-coordinator-|share-|transaction-log-manager-|TxnMarkerSenderThread-"
                + "|AddPartitionsToTxnSenderThread-|ExpirationReaper-|raft-expiration-reaper"
                + "|persister-state-manager-reaper|PersisterStateManager|network-partition-metadata-client-reaper"
                + "|client-metrics-reaper|LogDirFailureHandler|metrics-meter-tick-thread)");

        private final String key;

        Part(String key) {
            this.key = key;
        }

        /** The suffix of this part's metric keys ({@code …_cpu_us_per_event_<key>}). */
        public String key() {
            return key;
        }

        /**
         * The part a thread of this JVM belongs to, by its name: the broker's threads ({@link #BROKER});
         * {@code kafka-producer-network-thread | <client id>}, the Kafka producers' sender threads (the relays',
         * stock Debezium's, the benchmark's); {@code debezium-…}, Debezium's connector threads (the WAL reader and
         * decoder, keep-alive, LSN flush); everything else is the client: the relays' own threads, the Debezium
         * engine thread that runs converters, SMTs and the handler, consumers, JDBC, the benchmark's waiting.
         */
        public static Part of(String threadName) {
            if (BROKER.matcher(threadName).find()) {
                return KAFKA;
            }
            if (threadName.startsWith("kafka-producer-network-thread")) {
                return PRODUCER;
            }
            if (threadName.startsWith("debezium-")) {
                return DEBEZIUM;
            }
            return CLIENT;
        }

        /**
         * The part of a JVM-internal thread by its native name ({@code /proc/self/task/<tid>/comm}, 15 characters
         * at most): HotSpot's {@code GC Thread#N} and {@code G1 …} threads are {@link #GC}, {@code C1/C2
         * CompilerThre…} are {@link #JIT}; null for anything else.
         */
        static Part ofNative(String comm) {
            if (comm.startsWith("GC Thread") || comm.startsWith("G1 ")) {
                return GC;
            }
            if (comm.contains("CompilerThre")) {
                return JIT;
            }
            return null;
        }
    }

    private static final Path PROC = Path.of("/proc");
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    /** The key of the postmaster's waited-for children in {@link Snapshot#postgres()}: no process has pid 0 here. */
    private static final long EXITED = 0;

    private final long postmasterPid;
    private final long ticksPerSecond;
    private final Map<Long, String> titles = new java.util.concurrent.ConcurrentHashMap<>();

    private CpuBudget(long postmasterPid, long ticksPerSecond) {
        this.postmasterPid = postmasterPid;
        this.ticksPerSecond = ticksPerSecond;
    }

    /**
     * A budget for the PostgreSQL server behind {@code c}: its postmaster is the parent of {@code c}'s backend
     * ({@code pg_backend_pid()}). The server must run on this machine, in this PID namespace.
     */
    public static CpuBudget forServerOf(Connection c) throws SQLException {
        long backend;
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT pg_backend_pid()")) {
            rs.next();
            backend = rs.getLong(1);
        }
        return forBackend(backend);
    }

    /** A budget for the server whose postmaster is the parent of backend process {@code backend}. */
    static CpuBudget forBackend(long backend) {
        ProcStat stat = ProcStat.readOrNull(backend);
        if (stat == null || !stat.name().startsWith("postgres")) {
            throw new IllegalStateException("PostgreSQL backend " + backend + " is not a local postgres process ("
                    + (stat == null ? "no /proc/" + backend + "/stat" : "it is '" + stat.name() + "'")
                    + "): CPU budgets need the benchmark's embedded server on this machine");
        }
        if (!THREADS.isThreadCpuTimeSupported()) {
            throw new IllegalStateException("this JVM cannot measure CPU time per thread (ThreadMXBean)");
        }
        if (!THREADS.isThreadCpuTimeEnabled()) {
            THREADS.setThreadCpuTimeEnabled(true);
        }
        return new CpuBudget(stat.ppid(), ClockTicks.PER_SECOND);
    }

    /** Everything a difference needs, at one instant. */
    public record Snapshot(long wallNanos, Map<Long, ThreadTime> postgres, long processNanos, Map<Long, ThreadTime> threads,
                           Map<Long, ThreadTime> vmThreads, MachineTicks machine) {
    }

    /**
     * One live thread's or process's name and CPU time: nanoseconds for Java threads, clock ticks for the JVM's own
     * threads and the PostgreSQL processes.
     */
    public record ThreadTime(String name, long cpuNanos) {
    }

    /** CPU time of all CPUs from {@code /proc/stat}: busy and total ticks, and the number of CPUs. */
    public record MachineTicks(long busy, long total, int cpus) {
    }

    /** Reads the processes, then the threads and this process, then the machine, then the clock. */
    public Snapshot snapshot() {
        Map<Long, ThreadTime> postgres = postgresTicks();
        Map<Long, ThreadTime> threads = threadTimes();
        Map<Long, ThreadTime> vmThreads = vmThreadTicks();
        long process = processCpuNanos();
        MachineTicks machine = parseMachine(readLines(PROC.resolve("stat")));
        return new Snapshot(System.nanoTime(), postgres, process, threads, vmThreads, machine);
    }

    /** What was spent from {@code start} to {@code end}. */
    public Usage between(Snapshot start, Snapshot end) {
        Map<Part, Long> nanos = new EnumMap<>(Part.class);
        for (Part part : Part.values()) {
            nanos.put(part, 0L);
        }
        List<ThreadUse> threads = new ArrayList<>();
        nanos.put(Part.POSTGRES, postgresDelta(start.postgres(), end.postgres(), threads));
        long threadSum = 0;
        for (var entry : end.threads().entrySet()) {
            ThreadTime before = start.threads().get(entry.getKey());
            // a thread born in the window spent all of its time in it
            long spent = entry.getValue().cpuNanos() - (before == null ? 0 : before.cpuNanos());
            Part part = Part.of(entry.getValue().name());
            nanos.merge(part, spent, Long::sum);
            threadSum += spent;
            threads.add(new ThreadUse(entry.getValue().name(), part, spent));
        }
        for (var entry : end.vmThreads().entrySet()) {
            ThreadTime before = start.vmThreads().get(entry.getKey());
            long spent = ticksToNanos(entry.getValue().cpuNanos() - (before == null ? 0 : before.cpuNanos()));
            Part part = Part.ofNative(entry.getValue().name());
            nanos.merge(part, spent, Long::sum);
            threadSum += spent;
            threads.add(new ThreadUse(entry.getValue().name(), part, spent));
        }
        nanos.put(Part.JVM, end.processNanos() - start.processNanos() - threadSum);
        double wall = (end.wallNanos() - start.wallNanos()) / 1e9;
        int cpus = end.machine().cpus();
        double capacity = cpus * wall;
        double busy = ticksToNanos(end.machine().busy() - start.machine().busy()) / 1e9;
        double ours = (nanos.get(Part.POSTGRES) + end.processNanos() - start.processNanos()) / 1e9;
        threads.sort(Comparator.comparingLong(ThreadUse::cpuNanos).reversed());
        return new Usage(wall, cpus, nanos, busy / capacity, (busy - ours) / capacity, threads);
    }

    /** One thread's or server process's share of a window. */
    public record ThreadUse(String name, Part part, long cpuNanos) {
    }

    /**
     * A window's CPU: wall seconds, the machine's CPUs, CPU nanoseconds per {@link Part}, the machine's busy
     * fraction (0..1), the part of it neither the PostgreSQL server nor this JVM used, and the threads by CPU.
     */
    public record Usage(double wallSeconds, int cpus, Map<Part, Long> nanos, double machineBusy, double othersBusy,
                        List<ThreadUse> threads) {

        /** CPU microseconds of {@code part} per event, for {@code events} handled in the window. */
        public double microsPerEvent(Part part, long events) {
            return nanos.get(part) / 1e3 / events;
        }

        /** All parts together per event. */
        public double totalMicrosPerEvent(long events) {
            return nanos.values().stream().mapToLong(Long::longValue).sum() / 1e3 / events;
        }

        /** One log line: the parts in ms, busy, and the {@code n} busiest threads and server processes with their part. */
        public String profile(int n) {
            String parts = nanos.entrySet().stream()
                    .map(e -> e.getKey().key() + " " + Math.round(e.getValue() / 1e6) + " ms")
                    .collect(Collectors.joining(", "));
            String top = threads.stream().limit(n)
                    .map(t -> t.name() + " [" + t.part().key() + "] " + Math.round(t.cpuNanos() / 1e6) + " ms")
                    .collect(Collectors.joining("; "));
            return String.format("%.2f s wall on %d CPUs, busy %.2f (others %.2f): %s; busiest: %s",
                    wallSeconds, cpus, machineBusy, othersBusy, parts, top);
        }
    }

    private long ticksToNanos(long ticks) {
        return ticks * 1_000_000_000L / ticksPerSecond;
    }

    /**
     * The server's processes by pid, in clock ticks: the postmaster's own time, its waited-for children's (under
     * {@link #EXITED}), and every live child's (its own and its waited-for children's), named by its process title.
     */
    private Map<Long, ThreadTime> postgresTicks() {
        // a child waited for between reading the postmaster and listing the children would be in neither (a backend
        // exits just as a drain's clock stops, when its connection closes): list again until no child was waited for
        ProcStat postmaster = postmaster();
        for (int attempt = 1; ; attempt++) {
            Map<Long, ThreadTime> ticks = postgresTicks(postmaster);
            ProcStat after = postmaster();
            if (after.cutime() + after.cstime() == postmaster.cutime() + postmaster.cstime() || attempt == 10) {
                return ticks;
            }
            postmaster = after;
        }
    }

    private ProcStat postmaster() {
        ProcStat postmaster = ProcStat.readOrNull(postmasterPid);
        if (postmaster == null) {
            throw new IllegalStateException("the PostgreSQL postmaster (pid " + postmasterPid + ") is gone");
        }
        return postmaster;
    }

    private Map<Long, ThreadTime> postgresTicks(ProcStat postmaster) {
        Map<Long, ThreadTime> ticks = new HashMap<>();
        ticks.put(postmasterPid, new ThreadTime("postmaster", postmaster.utime() + postmaster.stime()));
        ticks.put(EXITED, new ThreadTime("exited server processes", postmaster.cutime() + postmaster.cstime()));
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(PROC, "[0-9]*")) {
            for (Path entry : entries) {
                long pid = Long.parseLong(entry.getFileName().toString());
                ProcStat child = ProcStat.readOrNull(pid);
                if (child != null && child.ppid() == postmasterPid) {
                    ticks.put(pid, new ThreadTime(titles.computeIfAbsent(pid, CpuBudget::processTitle), child.totalTicks()));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list " + PROC, e);
        }
        titles.keySet().retainAll(ticks.keySet()); // a pid used again later is another process
        return ticks;
    }

    /**
     * The server's CPU from {@code start} to {@code end}, in nanoseconds; adds each process's share to
     * {@code into}. A child gone by {@code end} was waited for: its whole time moved into {@link #EXITED}, so its
     * share of the window is that growth less what it had at {@code start}.
     */
    private long postgresDelta(Map<Long, ThreadTime> start, Map<Long, ThreadTime> end, List<ThreadUse> into) {
        long total = 0;
        long exited = end.get(EXITED).cpuNanos() - start.get(EXITED).cpuNanos();
        for (var entry : start.entrySet()) {
            if (!end.containsKey(entry.getKey())) {
                exited -= entry.getValue().cpuNanos();
            }
        }
        for (var entry : end.entrySet()) {
            ThreadTime before = start.get(entry.getKey());
            long spent = entry.getKey() == EXITED ? exited
                    : entry.getValue().cpuNanos() - (before == null ? 0 : before.cpuNanos());
            into.add(new ThreadUse(entry.getValue().name(), Part.POSTGRES, ticksToNanos(spent)));
            total += spent;
        }
        return ticksToNanos(total);
    }

    /** {@code postgres: checkpointer}, {@code postgres: postgres t42_1 127.0.0.1(5432) idle}, …: for the profile only. */
    private static String processTitle(long pid) {
        try {
            String title = Files.readString(PROC.resolve(Long.toString(pid)).resolve("cmdline"), StandardCharsets.UTF_8)
                    .replace('\0', ' ').trim();
            return title.isEmpty() ? "pid " + pid : title;
        } catch (IOException e) {
            return "pid " + pid; // gone meanwhile
        }
    }

    private static Map<Long, ThreadTime> threadTimes() {
        Map<Long, ThreadTime> times = new HashMap<>();
        for (ThreadInfo info : THREADS.getThreadInfo(THREADS.getAllThreadIds())) {
            if (info == null) {
                continue; // ended since getAllThreadIds
            }
            long cpu = THREADS.getThreadCpuTime(info.getThreadId());
            if (cpu >= 0) {
                times.put(info.getThreadId(), new ThreadTime(info.getThreadName(), cpu));
            }
        }
        return times;
    }

    /** The GC and JIT threads of this JVM by thread id, in clock ticks ({@link Part#ofNative}). */
    private static Map<Long, ThreadTime> vmThreadTicks() {
        Map<Long, ThreadTime> ticks = new HashMap<>();
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Path.of("/proc/self/task"))) {
            for (Path task : tasks) {
                ProcStat stat = ProcStat.readOrNull(task.resolve("stat"));
                if (stat != null && Part.ofNative(stat.name()) != null) {
                    ticks.put(stat.pid(), new ThreadTime(stat.name(), stat.utime() + stat.stime()));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list /proc/self/task", e);
        }
        return ticks;
    }

    private static long processCpuNanos() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            return os.getProcessCpuTime();
        }
        throw new IllegalStateException("this JVM does not report its process CPU time (com.sun.management)");
    }

    /** The first {@code cpu} line of {@code /proc/stat}, and the number of {@code cpuN} lines. */
    static MachineTicks parseMachine(List<String> procStat) {
        long busy = -1;
        long total = 0;
        int cpus = 0;
        for (String line : procStat) {
            if (line.startsWith("cpu ")) {
                String[] f = line.trim().split("\\s+");
                if (f.length < 9) {
                    throw new IllegalStateException("unexpected /proc/stat line: " + line);
                }
                long[] v = new long[8]; // user nice system idle iowait irq softirq steal; guest is inside user
                for (int i = 0; i < 8; i++) {
                    v[i] = Long.parseLong(f[i + 1]);
                    total += v[i];
                }
                busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
            } else if (line.matches("cpu\\d+ .*")) {
                cpus++;
            }
        }
        if (busy < 0 || cpus == 0) {
            throw new IllegalStateException("/proc/stat has no 'cpu' totals or no 'cpuN' lines");
        }
        return new MachineTicks(busy, total, cpus);
    }

    /** The fields of {@code /proc/<pid>/stat} a budget needs. */
    record ProcStat(long pid, String name, long ppid, long utime, long stime, long cutime, long cstime) {

        long totalTicks() {
            return utime + stime + cutime + cstime;
        }

        /** The process's stat, or null when it is gone (it may exit between listing and reading). */
        static ProcStat readOrNull(long pid) {
            return readOrNull(PROC.resolve(Long.toString(pid)).resolve("stat"));
        }

        /** A {@code stat} file ({@code /proc/<pid>/stat}, {@code /proc/<pid>/task/<tid>/stat}), or null when gone. */
        static ProcStat readOrNull(Path stat) {
            String line = readProcOrNull(stat);
            return line == null ? null : parse(line);
        }

        /**
         * {@code pid (comm) state ppid … utime stime cutime cstime …} (proc(5)): comm may hold spaces and
         * parentheses, so the fields after it start after the last {@code ')'}.
         */
        static ProcStat parse(String line) {
            int open = line.indexOf('(');
            int close = line.lastIndexOf(')');
            if (open < 0 || close < open) {
                throw new IllegalStateException("unexpected /proc/<pid>/stat line: " + line);
            }
            String[] f = line.substring(close + 1).trim().split("\\s+");
            if (f.length < 15) {
                throw new IllegalStateException("too few fields in /proc/<pid>/stat line: " + line);
            }
            // f[0] is field 3 (state): ppid is field 4, utime..cstime fields 14..17
            return new ProcStat(Long.parseLong(line.substring(0, open).trim()), line.substring(open + 1, close),
                    Long.parseLong(f[1]), Long.parseLong(f[11]), Long.parseLong(f[12]), Long.parseLong(f[13]),
                    Long.parseLong(f[14]));
        }
    }

    /** Clock ticks per second of {@code /proc} times ({@code getconf CLK_TCK}), read once per JVM. */
    static final class ClockTicks {
        static final long PER_SECOND = read();

        private ClockTicks() {
        }

        private static long read() {
            try {
                Process p = new ProcessBuilder("getconf", "CLK_TCK").redirectErrorStream(true).start();
                String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                if (!p.waitFor(10, TimeUnit.SECONDS) || p.exitValue() != 0) {
                    throw new IllegalStateException("'getconf CLK_TCK' failed: " + out.trim());
                }
                return parse(out);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot run 'getconf CLK_TCK' (CPU budgets need Linux)", e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while running 'getconf CLK_TCK'", e);
            }
        }

        static long parse(String getconfOutput) {
            String s = getconfOutput.trim();
            if (!s.matches("[1-9][0-9]*")) {
                throw new IllegalStateException("'getconf CLK_TCK' printed '" + s + "', not a positive number");
            }
            return Long.parseLong(s);
        }
    }

    /** A file under {@code /proc}, or null when its process or thread is gone (it may end between listing and reading). */
    static String readProcOrNull(Path file) {
        try {
            return Files.readString(file, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            return null;
        } catch (IOException e) {
            if (!Files.exists(file)) {
                return null; // ended while being read (ESRCH)
            }
            throw new UncheckedIOException("cannot read " + file, e);
        }
    }

    private static List<String> readLines(Path file) {
        try {
            return Files.readAllLines(file);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
    }
}
