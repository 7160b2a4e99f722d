package dev.outboxkit.testkit;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.Uuid;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A real KRaft Kafka node (broker and controller in one; in a {@link KafkaProcessCluster} with dedicated
 * controllers, a broker or a controller alone) in a child JVM, which a test can
 * {@link #kill9() SIGKILL}, {@link #pause() SIGSTOP} / {@link #resume() SIGCONT} and
 * {@link #start() start again} on the same ports and data directory: the broker failures of a
 * production cluster, which an in-JVM broker cannot show. About 5–15 s to start on a small
 * machine. For three nodes, see {@link KafkaProcessCluster}.
 *
 * <p>Each node has three listeners on 127.0.0.1: {@code EXTERNAL} for clients (what
 * {@link #bootstrapServers()} names), {@code INTERNAL} for replication between brokers and for
 * the test kit's own readiness checks, and {@code CONTROLLER} for the KRaft quorum. Kafka tells a
 * client the addresses advertised for the listener it connected to, so to put a
 * {@code TcpFaultProxy} between clients and a broker, advertise the proxy for
 * {@code EXTERNAL}: clients then go through the proxy for every request, while replication and
 * the controller quorum stay direct.
 *
 * <pre>{@code
 * int brokerPort = Ports.free();
 * try (TcpFaultProxy proxy = TcpFaultProxy.start("kafka", "127.0.0.1", brokerPort);
 *      KafkaProcess kafka = KafkaProcess.builder().port(brokerPort)
 *              .advertisedAddress(proxy.host(), proxy.port()).build()) {
 *     // clients use kafka.bootstrapServers() (= the proxy)
 *     kafka.kill9();
 *     kafka.start();
 * }
 * }</pre>
 *
 * <p>Settings: internal topics get replication factor {@code min(nodes, 3)},
 * {@code group.initial.rebalance.delay.ms=0}, 4 partitions by default, and a broker session
 * timeout of 6 s so a killed node is fenced (and leaves the ISRs) quickly; anything can be
 * overridden with {@link Builder#config}.
 */
public final class KafkaProcess extends TestKafka {

    private static final Logger log = LoggerFactory.getLogger(KafkaProcess.class);

    static final String COMBINED = "broker,controller";
    static final String BROKER = "broker";
    static final String CONTROLLER = "controller";

    private final String name;
    private final int nodeId;
    private final int port;
    private final int internalPort;
    private final int controllerPort;
    private final String advertisedHost;
    private final int advertisedPort;
    private final Path dataDir;
    private final boolean ownsDataDir;
    private final Path configFile;
    private final List<String> jvmOptions;
    private final Duration startupTimeout;
    /** {@code process.roles}: {@code broker,controller} (default), {@code broker} or {@code controller}. */
    private final String roles;
    private volatile JavaProcess process;

    private KafkaProcess(Builder b, int clusterSize, String voters, String clusterId) {
        this.roles = b.roles;
        this.name = b.name != null ? b.name : "kafka-" + b.nodeId;
        this.nodeId = b.nodeId;
        this.port = b.port > 0 ? b.port : Ports.freeForRestarts();
        this.internalPort = b.internalPort > 0 ? b.internalPort : Ports.freeForRestarts();
        this.controllerPort = b.controllerPort > 0 ? b.controllerPort : Ports.freeForRestarts();
        this.advertisedHost = b.advertisedHost != null ? b.advertisedHost : "127.0.0.1";
        this.advertisedPort = b.advertisedPort > 0 ? b.advertisedPort : port;
        this.jvmOptions = List.copyOf(b.jvmOptions);
        this.startupTimeout = b.startupTimeout;
        try {
            this.ownsDataDir = b.dataDir == null;
            this.dataDir = ownsDataDir ? Files.createTempDirectory("outboxkit-kafka-" + nodeId + "-") : b.dataDir;
            Files.createDirectories(dataDir);
            this.configFile = dataDir.resolve("server.properties");
            writeConfig(b.config, clusterSize, voters != null ? voters : nodeId + "@127.0.0.1:" + controllerPort);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot prepare the data directory of Kafka node " + b.nodeId + ": " + e.getMessage(), e);
        }
        if (!Files.exists(dataDir.resolve("logs").resolve("meta.properties"))) {
            format(clusterId != null ? clusterId : Uuid.randomUuid().toString());
        }
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Settings of a {@link KafkaProcess}. */
    public static final class Builder {

        private String name;
        private int nodeId = 1;
        private int port;
        private int internalPort;
        private int controllerPort;
        private String advertisedHost;
        private int advertisedPort;
        private Path dataDir;
        private final Map<String, String> config = new LinkedHashMap<>();
        private final List<String> jvmOptions = new ArrayList<>();
        private Duration startupTimeout = Duration.ofSeconds(120);
        private String roles = COMBINED;

        private Builder() {
        }

        /** Name of the child process and its log file. Default {@code kafka-<node id>}. */
        public Builder name(String name) {
            this.name = Objects.requireNonNull(name, "name");
            return this;
        }

        /** The client ({@code EXTERNAL}) listener's port on 127.0.0.1; 0 (default) picks a free one. */
        public Builder port(int port) {
            this.port = Ports.check("port", port);
            return this;
        }

        /**
         * What the node tells clients to connect to for its client listener — a proxy in front of
         * it. Default: 127.0.0.1 and {@link #port(int)}.
         */
        public Builder advertisedAddress(String host, int port) {
            this.advertisedHost = Objects.requireNonNull(host, "host");
            this.advertisedPort = Ports.check("advertised port", port);
            return this;
        }

        /** An existing directory to keep the logs in (kept on close). Default: a new temporary one, deleted on close. */
        public Builder dataDirectory(Path dir) {
            this.dataDir = Objects.requireNonNull(dir, "dir");
            return this;
        }

        /** A broker setting ({@code server.properties}), over the defaults. */
        public Builder config(String key, String value) {
            config.put(Objects.requireNonNull(key, "key"), Objects.requireNonNull(value, "value"));
            return this;
        }

        /** A broker settings map, over the defaults. */
        public Builder config(Map<String, String> settings) {
            settings.forEach(this::config);
            return this;
        }

        /** An option for the child JVM (after the test kit's {@code -Xmx512m -XX:+UseSerialGC}). */
        public Builder jvmOption(String option) {
            jvmOptions.add(Objects.requireNonNull(option, "option"));
            return this;
        }

        /** How long {@link KafkaProcess#start()} waits for the node to serve. Default 120 s. */
        public Builder startupTimeout(Duration timeout) {
            if (timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("startupTimeout must be positive, got " + timeout);
            }
            this.startupTimeout = timeout;
            return this;
        }

        Builder nodeId(int nodeId) {
            this.nodeId = nodeId;
            return this;
        }

        Builder internalPort(int port) {
            this.internalPort = port;
            return this;
        }

        Builder controllerPort(int port) {
            this.controllerPort = port;
            return this;
        }

        /** {@code process.roles}: {@link #COMBINED}, {@link #BROKER} or {@link #CONTROLLER}. */
        Builder roles(String roles) {
            this.roles = roles;
            return this;
        }

        /** Formats the storage, starts the node and waits until it serves. */
        public KafkaProcess build() {
            KafkaProcess kafka = new KafkaProcess(this, 1, null, null);
            try {
                kafka.start();
            } catch (RuntimeException e) {
                kafka.close();
                throw e;
            }
            return kafka;
        }

        /** A formatted member of a cluster, not started. */
        KafkaProcess member(int clusterSize, String voters, String clusterId) {
            return new KafkaProcess(this, clusterSize, voters, clusterId);
        }
    }

    private void writeConfig(Map<String, String> overrides, int clusterSize, String voters) throws IOException {
        int replicas = Math.min(clusterSize, 3);
        Map<String, String> c = new LinkedHashMap<>();
        c.put("process.roles", roles);
        c.put("node.id", Integer.toString(nodeId));
        c.put("controller.quorum.voters", voters);
        c.put("controller.listener.names", "CONTROLLER");
        String brokerListeners = "EXTERNAL://127.0.0.1:" + port + ",INTERNAL://127.0.0.1:" + internalPort;
        String controllerListener = "CONTROLLER://127.0.0.1:" + controllerPort;
        c.put("listeners", roles.equals(BROKER) ? brokerListeners
                : roles.equals(CONTROLLER) ? controllerListener : brokerListeners + "," + controllerListener);
        if (!roles.equals(CONTROLLER)) {
            c.put("advertised.listeners", "EXTERNAL://" + advertisedHost + ":" + advertisedPort + ",INTERNAL://127.0.0.1:" + internalPort);
            c.put("inter.broker.listener.name", "INTERNAL");
        }
        c.put("listener.security.protocol.map", "EXTERNAL:PLAINTEXT,INTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT");
        c.put("log.dirs", dataDir.resolve("logs").toString());
        c.put("num.partitions", "4");
        c.put("default.replication.factor", Integer.toString(replicas));
        c.put("offsets.topic.replication.factor", Integer.toString(replicas));
        c.put("offsets.topic.num.partitions", "4");
        c.put("transaction.state.log.replication.factor", Integer.toString(replicas));
        c.put("transaction.state.log.min.isr", Integer.toString(Math.min(clusterSize, 2)));
        c.put("transaction.state.log.num.partitions", "4");
        c.put("group.initial.rebalance.delay.ms", "0");
        c.put("auto.create.topics.enable", "true");
        c.put("broker.heartbeat.interval.ms", "1000");
        c.put("broker.session.timeout.ms", "6000");
        c.putAll(overrides);
        StringBuilder text = new StringBuilder("# written by outboxkit's KafkaProcess\n");
        c.forEach((k, v) -> text.append(k).append('=').append(v).append('\n'));
        Files.writeString(configFile, text, StandardCharsets.UTF_8);
    }

    /** {@code kafka-storage format}, in this JVM (Kafka's {@code StorageTool} returns instead of exiting). */
    private void format(String clusterId) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int code;
        try (PrintStream print = new PrintStream(out, true, StandardCharsets.UTF_8)) {
            code = kafka.tools.StorageTool.execute(new String[] {"format", "-t", clusterId, "-c", configFile.toString()}, print);
        } catch (RuntimeException e) {
            throw new IllegalStateException("cannot format the storage of Kafka node " + nodeId + " in " + dataDir + ": "
                    + e.getMessage() + "\n" + out.toString(StandardCharsets.UTF_8), e);
        }
        if (code != 0) {
            throw new IllegalStateException("formatting the storage of Kafka node " + nodeId + " in " + dataDir
                    + " failed (" + code + "):\n" + out.toString(StandardCharsets.UTF_8));
        }
    }

    /** Starts the node (again) on its ports and data directory and waits until it serves. */
    public void start() {
        launch();
        awaitReady();
    }

    /** Starts the child JVM without waiting: a cluster's nodes must all start before any is ready. */
    synchronized void launch() {
        if (process != null && process.isAlive()) {
            throw new IllegalStateException(name + " is already running (pid " + process.pid() + ")");
        }
        List<String> options = new ArrayList<>(jvmOptions);
        options.add("-Dkafka.logs.dir=" + dataDir.resolve("app-logs"));
        process = JavaProcess.start(name, kafka.Kafka.class, List.of(configFile.toString()), options, Map.of());
    }

    /**
     * Waits until the node lists itself among the cluster's live brokers, asked on its INTERNAL listener; a dedicated
     * controller, until its controller listener accepts connections (the brokers' readiness then shows the quorum).
     */
    void awaitReady() {
        long begin = System.nanoTime();
        long deadline = begin + startupTimeout.toNanos();
        JavaProcess child = process;
        if (roles.equals(CONTROLLER)) {
            while (!acceptsConnections(controllerPort)) {
                checkAlive(child, deadline);
                sleep(100);
            }
            log.info("{} listening in {} ms", describe(), (System.nanoTime() - begin) / 1_000_000);
            return;
        }
        while (!acceptsConnections(internalPort)) {
            checkAlive(child, deadline);
            sleep(100);
        }
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, internalBootstrapServers());
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 5_000);
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 10_000);
        try (Admin admin = Admin.create(p)) {
            while (true) {
                checkAlive(child, deadline);
                try {
                    var nodes = admin.describeCluster(new DescribeClusterOptions().timeoutMs(5_000)).nodes()
                            .get(10, TimeUnit.SECONDS);
                    if (nodes.stream().map(Node::id).anyMatch(id -> id == nodeId)) {
                        break;
                    }
                } catch (Exception e) {
                    if (e instanceof InterruptedException) {
                        Thread.currentThread().interrupt();
                        throw new IllegalStateException("interrupted waiting for " + name, e);
                    }
                }
                sleep(200);
            }
        }
        log.info("{} ready in {} ms", describe(), (System.nanoTime() - begin) / 1_000_000);
    }

    private void checkAlive(JavaProcess child, long deadline) {
        if (!child.isAlive()) {
            throw new IllegalStateException(name + " exited during start-up; its output (" + child.logFile() + "):\n"
                    + tail(child.output()));
        }
        if (System.nanoTime() > deadline) {
            throw new IllegalStateException(name + " did not serve within " + startupTimeout + " (log " + child.logFile()
                    + "):\n" + tail(child.output()));
        }
    }

    private static String tail(String output) {
        return output.length() <= 4000 ? output : "..." + output.substring(output.length() - 4000);
    }

    private static boolean acceptsConnections(int port) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 1_000);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    private JavaProcess running(String action) {
        JavaProcess p = process;
        if (p == null || !p.isAlive()) {
            throw new IllegalStateException("cannot " + action + " " + name + ": it is not running");
        }
        return p;
    }

    /** SIGKILL: no controlled shutdown, nothing flushed beyond what the OS already has. */
    public void kill9() {
        running("kill").kill9();
        log.info("{} killed (SIGKILL)", name);
    }

    /** SIGSTOP: the node freezes with its sockets open, as in a long GC pause. */
    public void pause() {
        running("pause").pause();
        log.info("{} paused (SIGSTOP)", name);
    }

    /** SIGCONT after {@link #pause()}. */
    public void resume() {
        running("resume").resume();
        log.info("{} resumed (SIGCONT)", name);
    }

    /** SIGTERM: a controlled shutdown (leadership moves away first in a cluster); waits for the exit. */
    public void stop() {
        running("stop").terminate(Duration.ofSeconds(120));
        log.info("{} stopped (SIGTERM)", name);
    }

    /** Whether the child JVM is alive (a paused one is). */
    public boolean isRunning() {
        JavaProcess p = process;
        return p != null && p.isAlive();
    }

    public int nodeId() {
        return nodeId;
    }

    /** The client listener's own port (not the advertised one). */
    public int port() {
        return port;
    }

    /** The INTERNAL listener's port: replication, and clients that must bypass a proxy. */
    public int internalPort() {
        return internalPort;
    }

    /** The advertised client address: the proxy when one was configured. */
    @Override
    public String bootstrapServers() {
        return advertisedHost + ":" + advertisedPort;
    }

    /** The INTERNAL listener: a client bootstrapped here is told INTERNAL addresses and bypasses any proxy. */
    public String internalBootstrapServers() {
        return "127.0.0.1:" + internalPort;
    }

    public Path dataDirectory() {
        return dataDir;
    }

    /** The current child JVM (its output and log file), or null before the first start. */
    public JavaProcess process() {
        return process;
    }

    @Override
    public String describe() {
        if (roles.equals(CONTROLLER)) {
            return "Kafka controller " + nodeId + " in child process " + name + " at 127.0.0.1:" + controllerPort;
        }
        return "Kafka " + (roles.equals(BROKER) ? "broker " : "node ") + nodeId + " in child process " + name + " at 127.0.0.1:" + port
                + (advertisedPort != port || !"127.0.0.1".equals(advertisedHost) ? " (advertised " + bootstrapServers() + ")" : "");
    }

    /** Kills the child if it runs; deletes the data directory when this object made it. */
    @Override
    public void close() {
        JavaProcess p = process;
        if (p != null) {
            p.close();
        }
        if (ownsDataDir) {
            Dirs.deleteTree(dataDir);
        }
    }
}
