package dev.outboxkit.testkit;

import static dev.outboxkit.testkit.KafkaClients.anyDone;
import static dev.outboxkit.testkit.KafkaClients.awaitAcks;
import static dev.outboxkit.testkit.KafkaClients.patientProducer;
import static dev.outboxkit.testkit.KafkaClients.send;
import static dev.outboxkit.testkit.KafkaClients.sendAsync;
import static dev.outboxkit.testkit.KafkaClients.values;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/** One KRaft node in a child JVM; each test leaves it running. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class KafkaProcessTest {

    private KafkaProcess kafka;

    @BeforeAll
    void startBroker() {
        kafka = KafkaProcess.builder().name("kafka-single").build();
    }

    @AfterAll
    void stopBroker() {
        if (kafka != null) {
            kafka.close();
        }
    }

    @Test
    void killedMidStreamAndRestartedOnTheSamePortAndDataKeepsEveryAcknowledgedRecord() throws Exception {
        String topic = TestKafka.uniqueTopic("kill9");
        kafka.createTopic(topic, 2);
        long pid;
        try (KafkaProducer<String, String> producer = patientProducer(kafka.bootstrapServers())) {
            for (Future<RecordMetadata> f : send(producer, topic, "before", 0, 100)) {
                f.get(60, TimeUnit.SECONDS);
            }
            pid = kafka.process().pid();
            kafka.kill9();
            assertThat(kafka.isRunning()).isFalse();

            CompletableFuture<List<Future<RecordMetadata>>> during = sendAsync(producer, topic, "during", 0, 100);
            Thread.sleep(500); // the fault under test: the broker is gone while sends wait
            assertThat(anyDone(during)).isFalse();

            kafka.start();
            assertThat(kafka.process().pid()).isNotEqualTo(pid);
            awaitAcks(during, 180);
        }
        assertThat(Files.isDirectory(kafka.dataDirectory().resolve("logs").resolve(topic + "-0"))).isTrue();
        assertThat(values(kafka.readAll(List.of(topic)))).hasSize(200)
                .contains("before-0", "before-99", "during-0", "during-99");
    }

    @Test
    void aPausedNodeServesNothingUntilResumed() throws Exception {
        String topic = TestKafka.uniqueTopic("pause");
        kafka.createTopic(topic, 1);
        try (KafkaProducer<String, String> producer = patientProducer(kafka.bootstrapServers())) {
            send(producer, topic, "warm", 0, 1).get(0).get(60, TimeUnit.SECONDS);
            kafka.pause();
            try {
                assertThat(kafka.isRunning()).isTrue();
                CompletableFuture<List<Future<RecordMetadata>>> held = sendAsync(producer, topic, "held", 0, 1);
                Thread.sleep(1_500); // the fault under test: the node is frozen
                assertThat(anyDone(held)).isFalse();
                kafka.resume();
                assertThat(held.get(120, TimeUnit.SECONDS).get(0).get(120, TimeUnit.SECONDS).offset()).isEqualTo(1);
            } finally {
                kafka.resume();
            }
        }
        assertThat(values(kafka.readAll(List.of(topic)))).containsExactlyInAnyOrder("warm-0", "held-0");
    }
}
