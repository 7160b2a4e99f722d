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
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartitionInfo;
import org.junit.jupiter.api.Test;

/** Three KRaft nodes in child JVMs; one is SIGKILLed under an acks=all producer. */
class KafkaProcessClusterTest {

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
