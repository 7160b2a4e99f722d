package dev.outboxkit.spring.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxkit.relay.Relay;
import dev.outboxkit.testkit.Readiness;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@code /actuator/health/readiness} of an in-app relay with nothing to publish goes DOWN within
 * 10 s of Kafka becoming unreachable, naming it, and UP within 2 s of its return.
 */
class ReadinessWhileIdleTest extends RelayAppTest {

    @AfterEach
    void heal() {
        kafka().proxy.heal();
    }

    Relay.Health readiness() {
        return Readiness.overHttp("http://127.0.0.1:" + port + "/actuator/health/readiness");
    }

    @Test
    void readinessIsDownWhileKafkaIsUnreachableEvenWithNothingToPublish() throws Exception {
        Readiness.untilReady(this::readiness, Duration.ofSeconds(30));
        Readiness.Outage outage = Readiness.outage(this::readiness, kafka().proxy::resetAndRefuse,
                "Kafka not reachable at ", kafka().proxy::heal);
        System.out.println("Spring readiness, idle relay, Kafka cut and healed: " + outage);
        assertThat(readiness().detail()).contains("\"status\":\"UP\"");
    }
}
