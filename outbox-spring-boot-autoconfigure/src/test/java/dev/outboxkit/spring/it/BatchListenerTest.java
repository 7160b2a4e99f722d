package dev.outboxkit.spring.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.outboxkit.consumer.DeadLetterHeaders;
import dev.outboxkit.core.InvalidEventException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.kafka.config.KafkaListenerEndpointRegistry;
import org.springframework.kafka.listener.MessageListenerContainer;

/**
 * {@code SpringInbox.applyEachOnce} under a real batch {@code @KafkaListener}: one batch holding a
 * duplicate and an undecodable record in the middle. The records before the poison are committed
 * (Spring's error handler commits their offsets), the poison goes to {@code .dlq}, the rest is
 * redelivered, and every event is applied exactly once.
 */
class BatchListenerTest extends RelayAppTest {

    @Autowired
    KafkaListenerEndpointRegistry listeners;

    @Test
    void aBatchWithADuplicateAndAPoisonRecordAppliesEveryEventOnceAndDeadLettersThePoison() throws Exception {
        String run = UUID.randomUUID().toString();
        UUID a = UUID.randomUUID();
        UUID b = UUID.randomUUID();
        UUID c = UUID.randomUUID();
        MessageListenerContainer container = listeners.getListenerContainer("projection-batch");
        // Paused while the records are written, so that most of them reach the listener in one batch.
        container.pause();
        await().atMost(Duration.ofSeconds(60)).until(container::isContainerPaused);
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka().kafka.bootstrapServers(),
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName(),
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName()))) {
            send(producer, "a-" + run, a.toString());
            send(producer, "b-" + run, b.toString());
            send(producer, "b-" + run, b.toString());            // a redelivery inside the batch
            send(producer, "poison-" + run, "not-a-uuid");
            send(producer, "c-" + run, c.toString());
        }
        container.resume();

        await().atMost(Duration.ofSeconds(60)).until(() -> kafka().kafka.readAll(List.of(Projection.BATCH_TOPIC + ".dlq"))
                .stream().anyMatch(r -> ("poison-" + run).equals(key(r)))
                && count("SELECT count(*) FROM projection_log WHERE transfer_id = ?", "c-" + run) == 1);
        for (UUID id : List.of(a, b, c)) {
            assertThat(count("SELECT count(*) FROM projection_log WHERE event_id = ?::uuid", id.toString())).as("%s", id)
                    .isEqualTo(1);
            assertThat(count("SELECT count(*) FROM processed_event WHERE consumer_group = 'projection-batch' AND event_id = ?::uuid",
                    id.toString())).isEqualTo(1);
        }
        ConsumerRecord<byte[], byte[]> dead = kafka().kafka.readAll(List.of(Projection.BATCH_TOPIC + ".dlq")).stream()
                .filter(r -> ("poison-" + run).equals(key(r))).findFirst().orElseThrow();
        assertThat(new String(dead.headers().lastHeader(DeadLetterHeaders.ERROR_CLASS).value(), StandardCharsets.UTF_8))
                .isEqualTo(InvalidEventException.class.getName());
        assertThat(new String(dead.headers().lastHeader(DeadLetterHeaders.REASON).value(), StandardCharsets.UTF_8))
                .isEqualTo(DeadLetterHeaders.REASON_UNDECODABLE);
        // the failure path ran: one batch held a record before the poison and the poison itself
        assertThat(projection.batches()).anySatisfy(keys -> assertThat(keys.indexOf("poison-" + run)).isPositive());
    }

    private static void send(KafkaProducer<String, String> producer, String key, String id) throws Exception {
        ProducerRecord<String, String> r = new ProducerRecord<>(Projection.BATCH_TOPIC, 0, key, "{\"amount\":1}");
        r.headers().add("id", id.getBytes(StandardCharsets.UTF_8));
        producer.send(r).get();
    }

    private static String key(ConsumerRecord<byte[], byte[]> r) {
        return r.key() == null ? null : new String(r.key(), StandardCharsets.UTF_8);
    }
}
