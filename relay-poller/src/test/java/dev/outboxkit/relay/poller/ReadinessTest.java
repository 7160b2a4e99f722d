package dev.outboxkit.relay.poller;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxkit.relay.RelayMetric;
import dev.outboxkit.testkit.EmbeddedKafka;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.Readiness;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import dev.outboxkit.testkit.fault.TcpFaultProxy;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import kafka.server.BrokerServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Readiness tells the truth with nothing to publish. An idle relay whose Kafka or database cannot
 * be reached is not ready within 10 s, says why, stays live, and is ready again within 2 s of the return.
 */
@ExtendWith(OutboxTestkitExtension.class)
class ReadinessTest {

    @Test
    void aWrongBrokerAddressIsNotReadyWithTheReason(TestDatabase db, TestKafka kafka) {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (PollingRelay relay = PollingRelayTest.relay(db, kafka, "unused").bootstrapServers("127.0.0.1:9")
                .meterRegistry(registry).build()) {
            relay.start();
            Duration notReady = Readiness.untilNotReady(relay::health, "Kafka not reachable at 127.0.0.1:9: ",
                    Readiness.NOT_READY_WITHIN);
            System.out.println("poll relay, wrong broker address: not ready after " + notReady.toMillis() + " ms: "
                    + relay.health().detail());
            assertThat(relay.health().live()).isTrue();
            assertThat(registry.get(RelayMetric.KAFKA_REACHABLE.meterName()).gauge().value()).isZero();
        }
    }

    @Test
    void aBrokerThatGoesAwayMakesItNotReadyAndItsReturnReadyAgain(TestDatabase db) throws Exception {
        try (EmbeddedKafka kafka = new EmbeddedKafka(1)) {
            BrokerServer broker = kafka.brokers().values().iterator().next();
            try (PollingRelay relay = PollingRelayTest.relay(db, kafka, "unused").build()) {
                relay.start();
                Readiness.untilReady(relay::health, Duration.ofSeconds(30));
                Readiness.Outage outage = Readiness.outage(relay::health, broker::shutdown, "Kafka not reachable at ",
                        broker::startup);
                System.out.println("poll relay, broker stopped and started: " + outage);
            }
        }
    }

    @Test
    void aDatabaseCutOffMakesItNotReadyAndItsReturnReadyAgain(TestDatabase db, TestKafka kafka) throws Exception {
        try (TcpFaultProxy pg = TcpFaultProxy.start("readiness-pg", db.server().host(), db.server().port());
             PollingRelay relay = PollingRelayTest.relay(db, kafka, "unused")
                     .jdbcUrl(db.jdbcUrlVia(pg.host(), pg.port())).build()) {
            relay.start();
            Readiness.untilReady(relay::health, Duration.ofSeconds(30));
            Readiness.Outage outage = Readiness.outage(relay::health, pg::resetAndRefuse, "database not reachable", pg::heal);
            System.out.println("poll relay, database cut off and healed: " + outage);
        }
    }
}
