package dev.outboxkit.testkit;

import java.util.Map;
import kafka.server.BrokerServer;
import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.apache.kafka.common.test.TestKitNodes;
import org.apache.kafka.common.utils.Exit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * KRaft brokers inside this JVM (Kafka's own test kit): about 2.5 s to start one, 3 s for three.
 * Combined broker+controller nodes.
 */
public final class EmbeddedKafka extends TestKafka {

    private static final Logger log = LoggerFactory.getLogger(EmbeddedKafka.class);

    static {
        // A broker halts its JVM on what it takes for a fatal fault (every log directory failed, an Error in a request
        // handler). In a shared JVM - a test runner's fork, the benchmark, 'outbox dev' - that ends the host with
        // status 1, for example when the broker is still closing while the JVM exits, and the test runner then fails
        // a build whose tests all passed. Here the fault is logged loudly instead; the host decides when to exit.
        Exit.setHaltProcedure((status, message) -> log.error("in-JVM Kafka asked to halt the JVM (status {}): {}; "
                + "not halted, the broker is left as it is", status, message));
        Exit.setExitProcedure((status, message) -> log.error("in-JVM Kafka asked to exit the JVM (status {}): {}; "
                + "not exited, the broker is left as it is", status, message));
    }

    private final KafkaClusterTestKit cluster;
    private final int brokers;

    public EmbeddedKafka(int brokers) {
        this(brokers, Map.of());
    }

    public EmbeddedKafka(int brokers, Map<String, String> brokerConfig) {
        this.brokers = brokers;
        try {
            TestKitNodes nodes = new TestKitNodes.Builder()
                    .setCombined(true)
                    .setNumBrokerNodes(brokers)
                    .setNumControllerNodes(brokers)
                    .build();
            KafkaClusterTestKit.Builder builder = new KafkaClusterTestKit.Builder(nodes)
                    .setConfigProp("auto.create.topics.enable", "true")
                    .setConfigProp("num.partitions", "4")
                    .setConfigProp("group.initial.rebalance.delay.ms", "0")
                    .setConfigProp("offsets.topic.replication.factor", Integer.toString(Math.min(brokers, 3)))
                    .setConfigProp("offsets.topic.num.partitions", "4")
                    .setConfigProp("transaction.state.log.replication.factor", Integer.toString(Math.min(brokers, 3)))
                    .setConfigProp("transaction.state.log.min.isr", "1")
                    .setConfigProp("default.replication.factor", Integer.toString(Math.min(brokers, 3)))
                    .setConfigProp("log.flush.interval.messages", Long.toString(Long.MAX_VALUE));
            brokerConfig.forEach(builder::setConfigProp);
            cluster = builder.build();
            formatQuietly(cluster);
            cluster.startup();
            cluster.waitForReadyBrokers();
        } catch (Exception e) {
            throw new IllegalStateException("cannot start an in-JVM Kafka cluster of " + brokers + ": " + e, e);
        }
    }

    /** Kafka's storage formatter prints to System.out; keep that off our callers' output. */
    private static void formatQuietly(KafkaClusterTestKit cluster) throws Exception {
        java.io.PrintStream original = System.out;
        synchronized (System.class) {
            System.setOut(new java.io.PrintStream(java.io.OutputStream.nullOutputStream()));
            try {
                cluster.format();
            } finally {
                System.setOut(original);
            }
        }
    }

    @Override
    public String bootstrapServers() {
        return cluster.bootstrapServers();
    }

    /** The brokers by node id, for broker-failure tests ({@code shutdown()} / {@code startup()}). */
    public Map<Integer, BrokerServer> brokers() {
        return cluster.brokers();
    }

    @Override
    public String describe() {
        return "in-JVM Kafka (" + brokers + " KRaft node" + (brokers == 1 ? "" : "s") + ") at " + bootstrapServers();
    }

    @Override
    public void close() {
        try {
            cluster.close();
        } catch (Exception e) {
            throw new IllegalStateException("cannot stop in-JVM Kafka", e);
        }
    }
}
