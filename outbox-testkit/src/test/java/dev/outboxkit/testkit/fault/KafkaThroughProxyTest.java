package dev.outboxkit.testkit.fault;

import static dev.outboxkit.testkit.KafkaClients.anyDone;
import static dev.outboxkit.testkit.KafkaClients.awaitAcks;
import static dev.outboxkit.testkit.KafkaClients.patientProducer;
import static dev.outboxkit.testkit.KafkaClients.send;
import static dev.outboxkit.testkit.KafkaClients.sendAsync;
import static dev.outboxkit.testkit.KafkaClients.values;
import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxkit.testkit.KafkaProcess;
import dev.outboxkit.testkit.Ports;
import dev.outboxkit.testkit.TestKafka;
import dev.outboxkit.testkit.fault.TcpFaultProxy.Direction;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.junit.jupiter.api.Test;

/**
 * A broker whose client listener advertises the proxy: every client request goes through the
 * proxy, even from a client bootstrapped at the broker's own port.
 */
class KafkaThroughProxyTest {

    @Test
    void produceAndConsumeThroughTheProxyStallInABlackholeAndResumeAfterHeal() throws Exception {
        int brokerPort = Ports.free();
        try (TcpFaultProxy proxy = TcpFaultProxy.start("kafka", "127.0.0.1", brokerPort);
             KafkaProcess kafka = KafkaProcess.builder().name("kafka-behind-proxy").port(brokerPort)
                     .advertisedAddress(proxy.host(), proxy.port()).build()) {
            assertThat(kafka.bootstrapServers()).isEqualTo(proxy.address());
            String topic = TestKafka.uniqueTopic("proxied");
            kafka.createTopic(topic, 2);

            try (KafkaProducer<String, String> viaProxy = patientProducer(kafka.bootstrapServers());
                 KafkaProducer<String, String> viaBrokerPort = patientProducer("127.0.0.1:" + brokerPort);
                 KafkaProducer<String, String> internal = patientProducer(kafka.internalBootstrapServers())) {
                for (Future<RecordMetadata> f : send(viaProxy, topic, "healthy", 0, 20)) {
                    f.get(60, TimeUnit.SECONDS);
                }
                send(viaBrokerPort, topic, "direct", 0, 1).get(0).get(60, TimeUnit.SECONDS);
                assertThat(proxy.bytesForwarded(Direction.TO_SERVER)).isPositive();

                proxy.blackhole();
                CompletableFuture<List<Future<RecordMetadata>>> held = sendAsync(viaProxy, topic, "held", 0, 20);
                // bootstrapped at the broker itself, but told the proxy's address for every request
                CompletableFuture<List<Future<RecordMetadata>>> heldToo = sendAsync(viaBrokerPort, topic, "held-direct", 0, 5);
                // the INTERNAL listener bypasses the proxy
                send(internal, topic, "internal", 0, 1).get(0).get(60, TimeUnit.SECONDS);
                Thread.sleep(2_000); // the fault under test: nothing gets through meanwhile
                assertThat(anyDone(held)).isFalse();
                assertThat(anyDone(heldToo)).isFalse();

                proxy.heal();
                awaitAcks(held, 120);
                awaitAcks(heldToo, 120);

                proxy.reset(); // clients reconnect on their own
                for (Future<RecordMetadata> f : send(viaProxy, topic, "after-reset", 0, 10)) {
                    f.get(120, TimeUnit.SECONDS);
                }
            }
            long beforeRead = proxy.bytesForwarded(Direction.TO_CLIENT);
            assertThat(values(kafka.readAll(List.of(topic)))).hasSize(20 + 1 + 20 + 5 + 1 + 10)
                    .contains("healthy-0", "held-19", "held-direct-4", "internal-0", "after-reset-9");
            assertThat(proxy.bytesForwarded(Direction.TO_CLIENT)).as("the consumer read through the proxy")
                    .isGreaterThan(beforeRead);
        }
    }
}
