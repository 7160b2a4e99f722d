package dev.outboxkit.testkit;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.kafka.common.Uuid;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A KRaft cluster of {@link KafkaProcess} nodes (each broker and controller, one child JVM
 * each), for "one of three brokers killed": with three nodes the controller quorum and a topic
 * with replication factor 3 and {@code min.insync.replicas=2} both survive one node being
 * SIGKILLed, paused or stopped, and the node can {@link KafkaProcess#start() start again}.
 *
 * <pre>{@code
 * try (KafkaProcessCluster kafka = KafkaProcessCluster.start(3, Map.of())) {
 *     kafka.createTopic(topic, 3, (short) 3, Map.of("min.insync.replicas", "2"));
 *     kafka.broker(2).kill9();
 *     // producers with acks=all keep going on the two others
 *     kafka.broker(2).start();
 * }
 * }</pre>
 *
 * Node ids are 1..n. Internal topics get replication factor {@code min(n, 3)} and
 * {@code transaction.state.log.min.isr} {@code min(n, 2)}. An in-JVM alternative that starts
 * faster but cannot be SIGKILLed is {@code new EmbeddedKafka(3)} with
 * {@code brokers().get(id).shutdown()}.
 *
 * <p>With combined nodes, losing two of three loses the controller quorum too: nothing can change
 * leaders or in-sync replicas any more. Managed Kafka runs its controllers apart from the brokers,
 * so there two brokers down leave a working quorum that shrinks the in-sync replicas below
 * {@code min.insync.replicas} and refuses acks=all writes. For that, {@link #startWithControllers}
 * starts brokers and dedicated controllers as separate child JVMs.
 */
public final class KafkaProcessCluster extends TestKafka {

    private static final Logger log = LoggerFactory.getLogger(KafkaProcessCluster.class);

    private final Map<Integer, KafkaProcess> nodes;
    /** Dedicated controllers (none with combined nodes), by id. */
    private final Map<Integer, KafkaProcess> controllers = new LinkedHashMap<>();

    private KafkaProcessCluster(Map<Integer, KafkaProcess> nodes) {
        this.nodes = nodes;
    }

    /**
     * Formats and starts {@code brokers} broker-only nodes (ids 1..brokers) and {@code controllers} dedicated
     * controllers (ids 101..100+controllers, the quorum's voters), each in its own child JVM, with
     * {@code config} over the defaults on every node, and waits until every broker serves. Cluster-wide defaults
     * that the controllers apply (for example {@code min.insync.replicas}, {@code default.replication.factor})
     * belong in {@code config}, which reaches the controllers too. Internal topics get replication factor
     * {@code min(brokers, 3)}.
     *
     * <pre>{@code
     * try (KafkaProcessCluster kafka = KafkaProcessCluster.startWithControllers(3, 1,
     *         Map.of("min.insync.replicas", "2"))) {
     *     kafka.broker(2).pause();
     *     kafka.broker(3).pause(); // the controller fences both: in-sync replicas 1, acks=all refused
     * }
     * }</pre>
     */
    public static KafkaProcessCluster startWithControllers(int brokers, int controllers, Map<String, String> config) {
        if (brokers < 1 || brokers > 9) {
            throw new IllegalArgumentException("brokers must be between 1 and 9, got " + brokers);
        }
        if (controllers < 1 || controllers > 5) {
            throw new IllegalArgumentException("controllers must be between 1 and 5, got " + controllers);
        }
        long begin = System.nanoTime();
        String clusterId = Uuid.randomUuid().toString();
        Map<Integer, Integer> controllerPorts = new LinkedHashMap<>();
        for (int i = 1; i <= controllers; i++) {
            controllerPorts.put(100 + i, Ports.freeForRestarts());
        }
        String voters = controllerPorts.entrySet().stream().map(e -> e.getKey() + "@127.0.0.1:" + e.getValue())
                .collect(Collectors.joining(","));
        Map<Integer, KafkaProcess> nodes = new LinkedHashMap<>();
        KafkaProcessCluster cluster = new KafkaProcessCluster(nodes);
        try {
            for (Map.Entry<Integer, Integer> c : controllerPorts.entrySet()) {
                cluster.controllers.put(c.getKey(), KafkaProcess.builder().nodeId(c.getKey()).name("kafka-controller-" + c.getKey())
                        .controllerPort(c.getValue()).roles(KafkaProcess.CONTROLLER).config(config)
                        .member(brokers, voters, clusterId));
            }
            for (int id = 1; id <= brokers; id++) {
                nodes.put(id, KafkaProcess.builder().nodeId(id).roles(KafkaProcess.BROKER).config(config)
                        .member(brokers, voters, clusterId));
            }
            cluster.controllers.values().forEach(KafkaProcess::launch);
            nodes.values().forEach(KafkaProcess::launch);
            cluster.controllers.values().forEach(KafkaProcess::awaitReady);
            nodes.values().forEach(KafkaProcess::awaitReady);
        } catch (RuntimeException e) {
            cluster.close();
            throw e;
        }
        log.info("{} ready in {} ms", cluster.describe(), (System.nanoTime() - begin) / 1_000_000);
        return cluster;
    }

    /** The dedicated controllers ({@link #startWithControllers}), by id; empty with combined nodes. */
    public List<KafkaProcess> controllers() {
        return List.copyOf(controllers.values());
    }

    /**
     * Formats and starts {@code size} nodes with {@code brokerConfig} over the defaults and waits
     * until every one serves.
     */
    public static KafkaProcessCluster start(int size, Map<String, String> brokerConfig) {
        if (size < 1 || size > 9) {
            throw new IllegalArgumentException("size must be between 1 and 9 nodes, got " + size);
        }
        long begin = System.nanoTime();
        String clusterId = Uuid.randomUuid().toString();
        int[] controllerPorts = new int[size + 1];
        for (int id = 1; id <= size; id++) {
            controllerPorts[id] = Ports.freeForRestarts();
        }
        List<String> voters = new ArrayList<>();
        for (int id = 1; id <= size; id++) {
            voters.add(id + "@127.0.0.1:" + controllerPorts[id]);
        }
        Map<Integer, KafkaProcess> nodes = new LinkedHashMap<>();
        KafkaProcessCluster cluster = new KafkaProcessCluster(nodes);
        try {
            for (int id = 1; id <= size; id++) {
                nodes.put(id, KafkaProcess.builder().nodeId(id).controllerPort(controllerPorts[id]).config(brokerConfig)
                        .member(size, String.join(",", voters), clusterId));
            }
            nodes.values().forEach(KafkaProcess::launch);
            nodes.values().forEach(KafkaProcess::awaitReady);
        } catch (RuntimeException e) {
            cluster.close();
            throw e;
        }
        log.info("{} ready in {} ms", cluster.describe(), (System.nanoTime() - begin) / 1_000_000);
        return cluster;
    }

    /** The node (broker, or broker and controller) with this id (1..n). */
    public KafkaProcess broker(int nodeId) {
        KafkaProcess node = nodes.get(nodeId);
        if (node == null) {
            throw new IllegalArgumentException("no node " + nodeId + "; node ids are " + nodes.keySet());
        }
        return node;
    }

    /** All brokers (combined nodes, or broker-only nodes), by id. */
    public List<KafkaProcess> brokers() {
        return List.copyOf(nodes.values());
    }

    /** Every node's client address (killed ones too: clients skip those). */
    @Override
    public String bootstrapServers() {
        return nodes.values().stream().map(KafkaProcess::bootstrapServers).collect(Collectors.joining(","));
    }

    @Override
    public String describe() {
        return controllers.isEmpty() ? "Kafka cluster of " + nodes.size() + " child-process KRaft nodes at " + bootstrapServers()
                : "Kafka cluster of " + nodes.size() + " child-process brokers at " + bootstrapServers() + " and "
                + controllers.size() + " dedicated controller" + (controllers.size() == 1 ? "" : "s");
    }

    /** Kills every node and deletes the data directories. */
    @Override
    public void close() {
        nodes.values().forEach(KafkaProcess::close);
        controllers.values().forEach(KafkaProcess::close);
    }
}
