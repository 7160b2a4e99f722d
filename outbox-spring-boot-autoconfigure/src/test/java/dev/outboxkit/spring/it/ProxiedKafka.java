package dev.outboxkit.spring.it;

import dev.outboxkit.testkit.KafkaProcess;
import dev.outboxkit.testkit.Ports;
import dev.outboxkit.testkit.fault.TcpFaultProxy;

/**
 * A Kafka broker (child JVM) that every client reaches through a fault proxy, so a test can make
 * Kafka unreachable and reachable again. One per test JVM, started on first use, shared by the
 * relay context; stopped when the JVM exits.
 */
final class ProxiedKafka {

    private static ProxiedKafka instance;

    final TcpFaultProxy proxy;
    final KafkaProcess kafka;

    private ProxiedKafka(TcpFaultProxy proxy, KafkaProcess kafka) {
        this.proxy = proxy;
        this.kafka = kafka;
    }

    static synchronized ProxiedKafka get() {
        if (instance == null) {
            int brokerPort = Ports.free();
            TcpFaultProxy proxy = TcpFaultProxy.start("kafka", "127.0.0.1", brokerPort);
            KafkaProcess kafka = KafkaProcess.builder().name("spring-kafka").port(brokerPort)
                    .advertisedAddress(proxy.host(), proxy.port()).build();
            instance = new ProxiedKafka(proxy, kafka);
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                kafka.close();
                proxy.close();
            }, "spring-kafka-stop"));
        }
        return instance;
    }
}
