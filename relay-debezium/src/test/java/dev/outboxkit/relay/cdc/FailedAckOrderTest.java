package dev.outboxkit.relay.cdc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.outboxkit.testkit.KafkaProcess;
import dev.outboxkit.testkit.OutboxRows;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.Ports;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import dev.outboxkit.testkit.fault.TcpFaultProxy;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.Metric;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Issue 30 (soak: one per-aggregate order violation). Kafka fails an event's record for good (its delivery timeout
 * expires while the broker is unreachable) and the idempotent producer goes on with what comes after it: a later
 * event of the same aggregate, handed to the producer before the relay looked at the earlier one's answer, was
 * written first, and the relay's retry published the earlier event after it. Now the first failed record stops
 * the producer, so nothing after it is written before it is published again.
 *
 * <p>Deterministic: the later event is written only once the producer reported the earlier record failed, and
 * heartbeats are off (10 min), so no batch lets the relay see that failure before the later event arrives.
 * Asynchronous acknowledgements ({@code maxInFlight} above 0) make the relay hand that event over before it reads
 * the earlier answer; with the default the same happens to records queued behind the failed one in the producer.
 */
@ExtendWith(OutboxTestkitExtension.class)
class FailedAckOrderTest {

    @Test
    void anEventKafkaFailedIsFirstPublishedBeforeTheLaterEventsOfItsAggregate(TestDatabase db) throws Exception {
        int brokerPort = Ports.free();
        List<KafkaProducer<byte[], byte[]>> producers = new CopyOnWriteArrayList<>();
        try (TcpFaultProxy proxy = TcpFaultProxy.start("cdc-kafka", "127.0.0.1", brokerPort);
             KafkaProcess kafka = KafkaProcess.builder().name("cdc-order-kafka").port(brokerPort)
                     .advertisedAddress(proxy.host(), proxy.port()).build()) {
            String topic = TestKafka.uniqueTopic("cdc-failed-ack");
            kafka.createTopic(topic, 1);
            CdcRelay.Builder builder = CdcTestSupport.relay(db, kafka)
                    .heartbeatInterval(Duration.ofMinutes(10))
                    .maxInFlight(1_000)
                    .producerOverrides(Map.of(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "3000",
                            ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "1000"));
            builder.producerFactory(config -> {
                KafkaProducer<byte[], byte[]> p = new KafkaProducer<>(config);
                producers.add(p);
                return p;
            });
            try (CdcRelay relay = builder.build()) {
                relay.start();
                await().atMost(Duration.ofSeconds(120)).until(() -> relay.health().ready());
                OutboxRows.Row warmUp = OutboxRows.Row.of(topic, "warm-up", 0);
                OutboxRows.insertCommitted(db, List.of(warmUp));
                await().atMost(Duration.ofSeconds(60)).until(() -> kafka.readAll(List.of(topic)).size() == 1);

                // taken while the producer runs: a closed producer no longer lists its metrics
                Metric errors = recordErrors(producers.get(0));
                proxy.blackhole();
                OutboxRows.Row earlier = OutboxRows.Row.of(topic, "order-1", 1);
                OutboxRows.insertCommitted(db, List.of(earlier));
                await("the producer reports the earlier record failed").atMost(Duration.ofSeconds(60))
                        .until(() -> ((Number) errors.metricValue()).doubleValue() >= 1);
                // drop what the proxy held for the old connections, then let Kafka be reached again
                proxy.resetAndRefuse();
                proxy.heal();

                OutboxRows.Row later = OutboxRows.Row.of(topic, "order-1", 2);
                OutboxRows.insertCommitted(db, List.of(later));
                String e1 = earlier.id().toString();
                String e2 = later.id().toString();
                await("both events published").atMost(Duration.ofSeconds(120)).until(() -> {
                    List<String> ids = ids(kafka, topic);
                    return ids.contains(e1) && ids.contains(e2);
                });

                List<String> ids = ids(kafka, topic);
                assertThat(ids.indexOf(e1)).as("first publication of the earlier event (offsets: %s)", ids)
                        .isLessThan(ids.indexOf(e2));
            }
        } finally {
            CdcTestSupport.dropSlot(db);
        }
    }

    /** Event ids of the topic's one partition, in offset order. */
    private static List<String> ids(TestKafka kafka, String topic) {
        return kafka.readAll(List.of(topic)).stream()
                .sorted(Comparator.comparingLong(ConsumerRecord::offset))
                .map(r -> CdcTestSupport.header(r, "id"))
                .toList();
    }

    /** Kafka's own count of the records the producer failed. */
    private static Metric recordErrors(Producer<byte[], byte[]> producer) {
        return producer.metrics().entrySet().stream()
                .filter(m -> m.getKey().name().equals("record-error-total") && m.getKey().group().equals("producer-metrics"))
                .map(Map.Entry::getValue).findFirst()
                .orElseThrow(() -> new AssertionError("the producer has no record-error-total metric"));
    }
}
