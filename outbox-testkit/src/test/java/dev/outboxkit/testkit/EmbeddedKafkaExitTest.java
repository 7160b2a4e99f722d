package dev.outboxkit.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.kafka.common.utils.Exit;
import org.junit.jupiter.api.Test;

/**
 * An in-JVM broker must never end its host JVM: a halt it asks for while closing at JVM exit
 * would fail a test run whose tests all passed. If the guard were missing, this test's own JVM
 * would halt here and the build would fail.
 */
class EmbeddedKafkaExitTest {

    @Test
    void theBrokersHaltAndExitRequestsAreLoggedNotCarriedOut() throws Exception {
        Class.forName(EmbeddedKafka.class.getName()); // installs the guard, as starting a broker does
        Exit.halt(1, "simulated fatal fault of an in-JVM broker");
        Exit.exit(1, "simulated exit request of an in-JVM broker");
        assertThat(Runtime.getRuntime().availableProcessors()).as("still running after the halt request").isPositive();
    }
}
