import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.zip.ZipFile;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;

/**
 * The sidecar jar before and after, side by side in one run (benchmarks/sidecar/run.sh starts it): for each jar the
 * polling relay as the sidecar runs it ({@code java <the sidecar's JVM options> -jar JAR relay poll}) on an empty table,
 * until ready; then a backlog in one transaction, drained to empty. Children in the order A B B A (A = before).
 * Reports jar size and entries, classes loaded at ready, start → ready, peak RSS (VmHWM at the empty table) and the
 * drain rate (backlog ÷ seconds from its commit to the empty table); then one more child of the after-jar with NMT.
 *
 * <p>Arguments: BEFORE_JAR AFTER_JAR ROWS OUT_FILE, and the environment of {@code outbox dev} (OUTBOX_JDBC_URL,
 * OUTBOX_USER, OUTBOX_PASSWORD, OUTBOX_BOOTSTRAP_SERVERS). JVM options: SIDECAR_JVM_OPTS.
 */
public class SidecarCompare {

    static final String URL = System.getenv("OUTBOX_JDBC_URL");
    static final String USER = System.getenv("OUTBOX_USER");
    static final String PASSWORD = System.getenv("OUTBOX_PASSWORD");
    static final String BOOTSTRAP = System.getenv("OUTBOX_BOOTSTRAP_SERVERS");
    static final List<String> JVM = List.of(System.getenv().getOrDefault("SIDECAR_JVM_OPTS",
            "-XX:+UseSerialGC -Xms32m -Xmx512m").trim().split("\\s+"));
    /** Options of the after-children only, to compare JVM options on one jar (default: SIDECAR_JVM_OPTS). */
    static final List<String> AFTER_JVM = System.getenv("AFTER_JVM_OPTS") == null ? JVM
            : List.of(System.getenv("AFTER_JVM_OPTS").trim().split("\\s+"));
    /** glibc's MALLOC_ARENA_MAX for the after-children only (unset: glibc's default, 8 per core). */
    static final String AFTER_ARENAS = System.getenv("AFTER_MALLOC_ARENA_MAX");
    static final String TOPIC = "sidecar.compare";

    record Run(String jar, double readyS, long classes, double peakMb, double drainEps) {}

    public static void main(String[] args) throws Exception {
        Path before = Path.of(args[0]);
        Path after = Path.of(args[1]);
        int rows = Integer.parseInt(args[2]);
        Path out = Path.of(args[3]);
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", BOOTSTRAP))) {
            admin.createTopics(List.of(new NewTopic(TOPIC, 8, (short) 1))).all().get(60, TimeUnit.SECONDS);
        }
        System.out.println("JVM options: before " + JVM + ", after " + AFTER_JVM
                + (AFTER_ARENAS == null ? "" : ", after MALLOC_ARENA_MAX=" + AFTER_ARENAS));
        run(after, rows / 10, false, "warm-up");   // the topic's metadata, the database's caches: paid by neither side
        List<Run> runs = new ArrayList<>();
        runs.add(run(before, rows, false, "A1"));
        runs.add(run(after, rows, false, "B1"));
        runs.add(run(after, rows, false, "B2"));
        runs.add(run(before, rows, false, "A2"));
        Run nmt = run(after, rows, true, "NMT");

        StringBuilder md = new StringBuilder();
        md.append("| measure | before | after | after ÷ before |\n|---|---|---|---|\n");
        row(md, "jar size (MB)", mb(Files.size(before)), mb(Files.size(after)));
        row(md, "jar entries", entries(before), entries(after));
        List<Run> a = runs.stream().filter(r -> r.jar().equals(before.toString())).toList();
        List<Run> b = runs.stream().filter(r -> r.jar().equals(after.toString())).toList();
        row(md, "classes loaded at ready (mean of 2)", mean(a, Run::classes), mean(b, Run::classes));
        row(md, "start → /health/ready (s, mean of 2)", mean(a, Run::readyS), mean(b, Run::readyS));
        row(md, "peak RSS while draining (MB, higher of 2)", max(a, Run::peakMb), max(b, Run::peakMb));
        row(md, "drain (events/s, mean of 2)", mean(a, Run::drainEps), mean(b, Run::drainEps));
        md.append("\nEach child: ").append(runs).append("\nNMT child: ").append(nmt).append('\n');
        Files.writeString(out, md.toString());
        System.out.println(md);
    }

    interface Field { double of(Run r); }

    static double mean(List<Run> runs, Field f) {
        return runs.stream().mapToDouble(f::of).average().orElseThrow();
    }

    static double max(List<Run> runs, Field f) {
        return runs.stream().mapToDouble(f::of).max().orElseThrow();
    }

    static void row(StringBuilder md, String name, double before, double after) {
        md.append(String.format(Locale.ROOT, "| %s | %.1f | %.1f | %.2f |%n", name, before, after, after / before));
    }

    static double mb(long bytes) {
        return bytes / 1e6;
    }

    static double entries(Path jar) throws IOException {
        try (ZipFile z = new ZipFile(jar.toFile())) {
            return z.size();
        }
    }

    static Run run(Path jar, int rows, boolean nmt, String label) throws Exception {
        clear();
        int port;
        try (var s = new java.net.ServerSocket(0)) {
            port = s.getLocalPort();
        }
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        boolean isAfter = label.startsWith("B") || label.equals("NMT") || label.equals("warm-up");
        cmd.addAll(isAfter ? AFTER_JVM : JVM);
        if (nmt) {
            cmd.add("-XX:NativeMemoryTracking=summary");
        }
        cmd.addAll(List.of("-jar", jar.toString(), "relay", "poll", "--http-port", Integer.toString(port),
                "--route", TOPIC, "--instance-id", "compare-" + label));
        Path log = Files.createTempFile("sidecar-" + label, ".log");
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().put("OUTBOX_JDBC_URL", URL);
        pb.environment().put("OUTBOX_USER", USER);
        pb.environment().put("OUTBOX_PASSWORD", PASSWORD);
        pb.environment().put("OUTBOX_BOOTSTRAP_SERVERS", BOOTSTRAP);
        if (isAfter && AFTER_ARENAS != null) {
            pb.environment().put("MALLOC_ARENA_MAX", AFTER_ARENAS);
        }
        long t0 = System.nanoTime();
        Process p = pb.start();
        try {
            HttpClient http = HttpClient.newHttpClient();
            while (true) {
                if (!p.isAlive()) {
                    throw new IllegalStateException(label + " exited: " + Files.readString(log));
                }
                try {
                    if (http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/health/ready"))
                            .timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.discarding()).statusCode() == 200) {
                        break;
                    }
                } catch (IOException notYet) {
                    // not listening yet
                }
                Thread.sleep(20);
            }
            double readyS = (System.nanoTime() - t0) / 1e9;
            long classes = loadedClasses(p.pid());
            long commit = fill(rows);
            while (count() > 0) {
                Thread.sleep(50);
            }
            double drainS = (System.nanoTime() - commit) / 1e9;
            double peak = status(p.pid(), "VmHWM");
            if (nmt) {
                System.out.println("NMT of the after-jar at the empty table (VmRSS " + status(p.pid(), "VmRSS") + " MB, RssAnon "
                        + status(p.pid(), "RssAnon") + " MB, RssFile " + status(p.pid(), "RssFile") + " MB, VmHWM " + peak + " MB):");
                System.out.println(exec("jcmd", Long.toString(p.pid()), "VM.native_memory", "summary"));
            }
            Run r = new Run(jar.toString(), readyS, classes, peak, rows / drainS);
            System.out.printf(Locale.ROOT, "%s %s: ready %.2f s, %d classes, peak RSS %.1f MB, drain %.0f events/s (%d rows)%n",
                    label, jar, readyS, classes, peak, rows / drainS, rows);
            return r;
        } finally {
            p.destroy();   // SIGTERM: the clean stop
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
            }
        }
    }

    static long loadedClasses(long pid) throws Exception {
        // "Loaded  Bytes  Unloaded  Bytes     Time" then the figures
        String[] lines = exec("jstat", "-class", Long.toString(pid)).trim().split("\n");
        return Long.parseLong(lines[lines.length - 1].trim().split("\\s+")[0]);
    }

    static String exec(String... cmd) throws Exception {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String s = new String(p.getInputStream().readAllBytes());
        p.waitFor();
        return s;
    }

    static double status(long pid, String field) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
            if (line.startsWith(field + ":")) {
                return Long.parseLong(line.substring(field.length() + 1).trim().split("\\s+")[0]) / 1024.0;
            }
        }
        throw new IllegalStateException(field);
    }

    static Connection connect() throws Exception {
        Properties p = new Properties();
        p.setProperty("user", USER);
        p.setProperty("password", PASSWORD);
        return DriverManager.getConnection(URL, p);
    }

    static void clear() throws Exception {
        try (Connection c = connect(); Statement s = c.createStatement()) {
            s.execute("TRUNCATE outbox_event");
            s.execute("VACUUM ANALYZE outbox_event");
        }
    }

    /** {@code rows} events of 200 B of JSON in one transaction; returns the nanoTime its commit returned. */
    static long fill(int rows) throws Exception {
        try (Connection c = connect(); Statement s = c.createStatement()) {
            c.setAutoCommit(false);
            s.execute("INSERT INTO outbox_event (id, aggregate_type, aggregate_id, event_type, payload)"
                    + " SELECT gen_random_uuid(), 'bench', 'a-' || (i % 1000), 'Happened',"
                    + " jsonb_build_object('i', i, 'pad', substr(md5(i::text) || md5((i+1)::text) || md5((i+2)::text)"
                    + " || md5((i+3)::text) || md5((i+4)::text) || md5((i+5)::text), 1, 180))"
                    + " FROM generate_series(1, " + rows + ") i");
            c.commit();
            return System.nanoTime();
        }
    }

    static long count() throws Exception {
        try (Connection c = connect(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT count(*) FROM outbox_event")) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
