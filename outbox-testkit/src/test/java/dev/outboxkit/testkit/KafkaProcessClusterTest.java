package dev.outboxkit.testkit;

import static dev.outboxkit.testkit.KafkaClients.patientProducer;
import static dev.outboxkit.testkit.KafkaClients.send;
import static dev.outboxkit.testkit.KafkaClients.values;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.NotEnoughReplicasException;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

/**
 * Three KRaft nodes in child JVMs; one is SIGKILLed under an acks=all producer. Three brokers with a dedicated
 * controller; two are paused and acks=all writes are refused below the cluster-wide min.insync.replicas.
 */
class KafkaProcessClusterTest {

    @Test
    void withADedicatedControllerTwoPausedBrokersOfThreeLeaveAQuorumThatRefusesAcksAllBelowMinInsyncReplicas()
            throws Exception {
        try (KafkaProcessCluster kafka = KafkaProcessCluster.startWithControllers(3, 1, Map.of("min.insync.replicas", "2"));
             Admin admin = Admin.create(Map.of("bootstrap.servers", kafka.bootstrapServers(), "request.timeout.ms", 3_000,
                     "default.api.timeout.ms", 10_000))) {
            assertThat(kafka.controllers()).extracting(KafkaProcess::nodeId).containsExactly(101);
            String topic = TestKafka.uniqueTopic("minisr");
            kafka.createTopic(topic, 1, (short) 3, Map.of()); // no topic override: the cluster-wide value applies
            ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
            assertThat(admin.describeConfigs(List.of(resource)).all().get(30, TimeUnit.SECONDS).get(resource)
                    .get("min.insync.replicas").value()).as("what a broker reports for the topic").isEqualTo("2");
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of(
                    ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                    ProducerConfig.ACKS_CONFIG, "all",
                    ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 60_000,
                    ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 5_000,
                    ProducerConfig.RETRIES_CONFIG, 0, // the refusal itself, not the producer's retries of it
                    ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false,
                    ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName(),
                    ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName()))) {
                producer.send(new ProducerRecord<>(topic, "k", "before")).get(60, TimeUnit.SECONDS);
                int leader = partition(admin, topic, 0).leader().id();
                List<Integer> others = kafka.brokers().stream().map(KafkaProcess::nodeId).filter(id -> id != leader).toList();
                others.forEach(id -> kafka.broker(id).pause());
                try {
                    // the controller fences the paused brokers (session timeout 6 s) and shrinks the ISR to the leader,
                    // which then refuses acks=all writes (asked through the producer, which talks to the leader only:
                    // an Admin request may wait on a paused broker)
                    await("an acks=all write refused below min.insync.replicas").atMost(Duration.ofSeconds(90))
                            .untilAsserted(() -> assertThat(refusal(producer, topic)).isInstanceOf(NotEnoughReplicasException.class));
                } finally {
                    others.forEach(id -> kafka.broker(id).resume());
                }
                await("accepted again once the paused brokers are back in sync").atMost(Duration.ofSeconds(120))
                        .pollInterval(Duration.ofMillis(500)).untilAsserted(() -> assertThat(refusal(producer, topic)).isNull());
            }
        }
    }

    /** What became of one acks=all write: null when acknowledged, else the refusal. */
    private static Throwable refusal(KafkaProducer<String, String> producer, String topic) throws Exception {
        try {
            producer.send(new ProducerRecord<>(topic, "k", "probe")).get(30, TimeUnit.SECONDS);
            return null;
        } catch (ExecutionException e) {
            return e.getCause();
        }
    }

    @Test
    void anAcksAllProducerKeepsWorkingWithOneOfThreeNodesKilledAndTheNodeRejoins() throws Exception {
        try (KafkaProcessCluster kafka = KafkaProcessCluster.start(3, Map.of())) {
            assertThat(kafka.brokers()).extracting(KafkaProcess::nodeId).containsExactly(1, 2, 3);
            String topic = TestKafka.uniqueTopic("rf3");
            kafka.createTopic(topic, 3, (short) 3, Map.of("min.insync.replicas", "2"));
            try (KafkaProducer<String, String> producer = patientProducer(kafka.bootstrapServers());
                 Admin admin = kafka.admin()) {
                for (Future<RecordMetadata> f : send(producer, topic, "three", 0, 60)) {
                    f.get(60, TimeUnit.SECONDS);
                }
                int victim = partition(admin, topic, 0).leader().id();
                kafka.broker(victim).kill9();

                for (Future<RecordMetadata> f : send(producer, topic, "two", 0, 60)) {
                    f.get(120, TimeUnit.SECONDS);
                }
                TopicPartitionInfo p0 = partition(admin, topic, 0);
                assertThat(p0.leader().id()).isNotEqualTo(victim);
                assertThat(p0.isr()).hasSize(2);

                kafka.broker(victim).start();
                await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(500))
                        .until(() -> describe(admin, topic).partitions().stream().allMatch(p -> p.isr().size() == 3));
            }
            assertThat(values(kafka.readAll(List.of(topic)))).hasSize(120).contains("three-0", "two-59");
        }
    }

    private static TopicDescription describe(Admin admin, String topic) throws Exception {
        return admin.describeTopics(List.of(topic)).allTopicNames().get(30, TimeUnit.SECONDS).get(topic);
    }

    private static TopicPartitionInfo partition(Admin admin, String topic, int partition) throws Exception {
        return describe(admin, topic).partitions().get(partition);
    }
}
