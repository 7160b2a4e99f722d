package dev.outboxkit.testkit;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.StringSerializer;

/** Small helpers shared by the broker-failure tests. */
public final class KafkaClients {

    private KafkaClients() {
    }

    /** acks=all, idempotent, and patient: a send waits out a broker restart instead of failing. */
    public static KafkaProducer<String, String> patientProducer(String bootstrapServers) {
        return new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
                ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true,
                ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 180_000,
                ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000,
                ProducerConfig.MAX_BLOCK_MS_CONFIG, 180_000,
                ProducerConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, 1_000,
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName(),
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName()));
    }

    /** Sends {@code prefix-from} .. {@code prefix-(to-1)} as values (keys alike) without waiting. */
    public static List<Future<RecordMetadata>> send(KafkaProducer<String, String> producer, String topic, String prefix,
                                                    int from, int to) {
        List<Future<RecordMetadata>> futures = new ArrayList<>();
        for (int i = from; i < to; i++) {
            futures.add(producer.send(new ProducerRecord<>(topic, prefix + "-" + i, prefix + "-" + i)));
        }
        return futures;
    }

    /**
     * {@link #send} on another thread. With every broker unreachable a Kafka 4 producer
     * re-bootstraps ({@code metadata.recovery.strategy=rebootstrap}), forgets the topic's
     * partitions, and then {@code send()} itself blocks (up to {@code max.block.ms}) until a
     * broker answers — so a test that sends while the broker is down must not send on its own thread.
     */
    public static CompletableFuture<List<Future<RecordMetadata>>> sendAsync(KafkaProducer<String, String> producer,
                                                                           String topic, String prefix, int from, int to) {
        return CompletableFuture.supplyAsync(() -> send(producer, topic, prefix, from, to));
    }

    /** Whether any record of an asynchronous {@link #sendAsync} was acknowledged (or failed) yet. */
    public static boolean anyDone(CompletableFuture<List<Future<RecordMetadata>>> sends) {
        return sends.isDone() && sends.join().stream().anyMatch(Future::isDone);
    }

    /** Waits for every record of {@link #sendAsync} to be acknowledged. */
    public static void awaitAcks(CompletableFuture<List<Future<RecordMetadata>>> sends, long seconds) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        for (Future<RecordMetadata> f : sends.get(seconds, TimeUnit.SECONDS)) {
            f.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        }
    }

    public static Set<String> values(Collection<ConsumerRecord<byte[], byte[]>> records) {
        return records.stream().map(r -> new String(r.value(), StandardCharsets.UTF_8)).collect(Collectors.toSet());
    }
}
