package dev.outboxkit.relay.cdc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxkit.testkit.EmbeddedKafka;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.Readiness;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import java.time.Duration;
import kafka.server.BrokerServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * An idle CDC relay streaming its slot is not ready within 10 s when Kafka cannot be reached, says
 * why, stays live, and is ready again within 2 s of the broker's return.
 */
@ExtendWith(OutboxTestkitExtension.class)
class ReadinessTest {

    @Test
    void aWrongBrokerAddressIsNotReadyWithTheReason(TestDatabase db, TestKafka kafka) {
        try (CdcRelay relay = CdcTestSupport.relay(db, kafka).bootstrapServers("127.0.0.1:9").build()) {
            relay.start();
            Duration notReady = Readiness.untilNotReady(relay::health, "Kafka not reachable at 127.0.0.1:9: ",
                    Readiness.NOT_READY_WITHIN);
            System.out.println("CDC relay, wrong broker address: not ready after " + notReady.toMillis() + " ms: "
                    + relay.health().detail());
            assertThat(relay.health().live()).isTrue();
        } finally {
            CdcTestSupport.dropSlot(db);
        }
    }

    @Test
    void aBrokerThatGoesAwayMakesItNotReadyAndItsReturnReadyAgain(TestDatabase db) throws Exception {
        try (EmbeddedKafka kafka = new EmbeddedKafka(1)) {
            BrokerServer broker = kafka.brokers().values().iterator().next();
            try (CdcRelay relay = CdcTestSupport.relay(db, kafka).build()) {
                relay.start();
                Readiness.untilReady(relay::health, Duration.ofSeconds(90));
                Readiness.Outage outage = Readiness.outage(relay::health, broker::shutdown, "Kafka not reachable at ",
                        broker::startup);
                System.out.println("CDC relay, broker stopped and started: " + outage);
            }
        } finally {
            CdcTestSupport.dropSlot(db);
        }
    }
}
