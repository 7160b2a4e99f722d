package dev.outboxkit.testkit;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * A Kafka cluster for tests: in this JVM (default), in a child process that can be killed,
 * external, or Testcontainers. Tests make topics with unique names ({@link #uniqueTopic}), so
 * they can share one broker.
 */
public abstract class TestKafka implements AutoCloseable {

    private static final AtomicInteger COUNTER = new AtomicInteger();

    public abstract String bootstrapServers();

    public abstract String describe();

    /** A topic name no other test in this JVM uses. */
    public static String uniqueTopic(String prefix) {
        return prefix + "-" + ProcessHandle.current().pid() + "-" + COUNTER.incrementAndGet();
    }

    /**
     * The client settings the test kit's own clients ({@link #admin()}, {@link #consumerConfig}, {@link #readAll})
     * add to the bootstrap servers: none here; a secured broker ({@link SecureKafka}) gives its super user's.
     */
    protected Map<String, Object> testkitClientSecurity() {
        return Map.of();
    }

    public Admin admin() {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
        p.putAll(testkitClientSecurity());
        return Admin.create(p);
    }

    /** Creates {@code topic} (no error when it exists) with broker-default replication; see {@link #createTopic(String, int, short, Map)}. */
    public void createTopic(String topic, int partitions) {
        createTopic(topic, partitions, (short) -1, Map.of());
    }

    /**
     * Creates {@code topic} (no error when it exists) and returns once the leader of every partition
     * serves it. Why wait: a broker lists a new partition's leader a moment before it serves the
     * partition, and an idempotent producer with several requests in flight whose first batch meets that
     * moment gets NOT_LEADER_OR_FOLLOWER while its next batch is appended; the first batch then retries
     * into OUT_OF_ORDER_SEQUENCE_NUMBER until delivery.timeout.ms (KAFKA-14359). A test producing right
     * after creating its topic would hang for two minutes, now and then.
     */
    public void createTopic(String topic, int partitions, short replicationFactor, Map<String, String> configs) {
        try (Admin admin = admin()) {
            NewTopic t = replicationFactor > 0
                    ? new NewTopic(topic, partitions, replicationFactor)
                    : new NewTopic(topic, java.util.Optional.of(partitions), java.util.Optional.empty());
            try {
                admin.createTopics(List.of(t.configs(configs))).all().get(60, TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof TopicExistsException)) {
                    throw new IllegalStateException("cannot create topic " + topic + ": " + e.getCause(), e.getCause());
                }
            }
            awaitServed(admin, topic, Duration.ofSeconds(60));
        } catch (IllegalStateException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException("cannot create topic " + topic + ": " + e, e);
        }
    }

    /** Sets topic configs ({@code max.message.bytes} → {@code 1048576}: the fix of a poison-event test) and waits for the broker. */
    public void alterTopicConfig(String topic, Map<String, String> configs) {
        List<org.apache.kafka.clients.admin.AlterConfigOp> ops = configs.entrySet().stream()
                .map(e -> new org.apache.kafka.clients.admin.AlterConfigOp(new org.apache.kafka.clients.admin.ConfigEntry(
                        e.getKey(), e.getValue()), org.apache.kafka.clients.admin.AlterConfigOp.OpType.SET))
                .toList();
        try (Admin admin = admin()) {
            admin.incrementalAlterConfigs(Map.of(new org.apache.kafka.common.config.ConfigResource(
                    org.apache.kafka.common.config.ConfigResource.Type.TOPIC, topic), ops)).all().get(60, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException("cannot alter the configs " + configs + " of topic " + topic + ": " + e, e);
        }
    }

    /**
     * Returns once every partition of {@code topic} answers a ListOffsets request from its leader, which
     * the broker refuses (NOT_LEADER_OR_FOLLOWER) exactly while it would refuse a produce request.
     */
    private static void awaitServed(Admin admin, String topic, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        Exception last = null;
        while (System.nanoTime() < deadline) {
            try {
                Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
                admin.describeTopics(List.of(topic)).allTopicNames().get(10, TimeUnit.SECONDS).get(topic).partitions()
                        .forEach(p -> latest.put(new TopicPartition(topic, p.partition()), OffsetSpec.latest()));
                admin.listOffsets(latest).all().get(10, TimeUnit.SECONDS);
                return;
            } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
                last = e; // not known or not served yet: ask again
                Thread.sleep(50);
            }
        }
        throw new IllegalStateException("the partitions of topic " + topic + " were not served by their leaders within "
                + timeout + ": " + last, last);
    }

    /** Consumer properties for reading raw bytes (no group; use {@link #readAll}). */
    public Map<String, Object> consumerConfig(String group) {
        Map<String, Object> p = new HashMap<>();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
        p.putAll(testkitClientSecurity());
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        if (group != null) {
            p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        }
        return p;
    }

    /**
     * Every record of {@code topics} from the beginning until the end offsets seen at the start
     * (read committed). Reads by assignment, so no group join is waited for.
     */
    public List<ConsumerRecord<byte[], byte[]>> readAll(Collection<String> topics) {
        List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
        forEachRecord(topics, out::add);
        return out;
    }

    /**
     * Hands every record of {@code topics} to {@code action}, each partition in offset order, from the
     * beginning until the end offsets seen at the start (read committed), without keeping them: for
     * topics too large to hold (a soak's millions). Fails when no record arrived for 60 s.
     */
    public void forEachRecord(Collection<String> topics, java.util.function.Consumer<ConsumerRecord<byte[], byte[]>> action) {
        Map<String, Object> config = consumerConfig(null);
        config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        config.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 5000);
        long read = 0;
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(config)) {
            List<TopicPartition> partitions = new ArrayList<>();
            for (String topic : topics) {
                consumer.partitionsFor(topic, java.time.Duration.ofSeconds(30))
                        .forEach(p -> partitions.add(new TopicPartition(p.topic(), p.partition())));
            }
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
            // a deadline on progress, not on the whole read
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (partitions.stream().anyMatch(tp -> consumer.position(tp) < end.get(tp))) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("timed out reading " + topics + ": no record for 60 s after "
                            + read + " records");
                }
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(java.time.Duration.ofMillis(200))) {
                    action.accept(r);
                    read++;
                    deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                }
            }
        }
    }

    /** Stops the cluster (when this process started it). */
    @Override
    public abstract void close();
}
