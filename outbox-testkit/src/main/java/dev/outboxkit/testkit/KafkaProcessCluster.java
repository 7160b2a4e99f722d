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
 */
public final class KafkaProcessCluster extends TestKafka {

    private static final Logger log = LoggerFactory.getLogger(KafkaProcessCluster.class);

    private final Map<Integer, KafkaProcess> nodes;

    private KafkaProcessCluster(Map<Integer, KafkaProcess> nodes) {
        this.nodes = nodes;
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
            controllerPorts[id] = Ports.free();
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

    /** The node with this id (1..n). */
    public KafkaProcess broker(int nodeId) {
        KafkaProcess node = nodes.get(nodeId);
        if (node == null) {
            throw new IllegalArgumentException("no node " + nodeId + "; node ids are " + nodes.keySet());
        }
        return node;
    }

    /** All nodes, by id. */
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
        return "Kafka cluster of " + nodes.size() + " child-process KRaft nodes at " + bootstrapServers();
    }

    /** Kills every node and deletes the data directories. */
    @Override
    public void close() {
        nodes.values().forEach(KafkaProcess::close);
    }
}
