package dev.outboxkit.cli;

import dev.outboxkit.testkit.JavaProcess;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.Readiness;
import dev.outboxkit.testkit.TestDatabase;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A sidecar started with a wrong broker address answers {@code /health/ready} 503 within 10 s,
 * with the reason in the body, though it holds its leases (or streams its slot) and has nothing to publish.
 */
@ExtendWith(OutboxTestkitExtension.class)
class SidecarReadinessTest {

    @ParameterizedTest(name = "relay {0}")
    @ValueSource(strings = {"poll", "cdc"})
    void aWrongBrokerAddressIsNotReadyWithTheReason(String relay, TestDatabase db) {
        String slot = "readiness_" + db.name();
        List<String> args = new ArrayList<>(List.of("relay", relay, "--http-port", "0", "--instance-id", "readiness-" + relay));
        if (relay.equals("cdc")) {
            args.addAll(List.of("--slot-name", slot));
        }
        Map<String, String> env = Map.of("OUTBOX_JDBC_URL", db.jdbcUrl(), "OUTBOX_USER", db.user(),
                "OUTBOX_PASSWORD", db.password(), "OUTBOX_BOOTSTRAP_SERVERS", "127.0.0.1:9");
        try (JavaProcess sidecar = JavaProcess.start("readiness-" + relay, Main.class, args, List.of(), env)) {
            int port = SidecarRetentionTest.port(sidecar);
            String ready = "http://127.0.0.1:" + port + "/health/ready";
            // From the moment the port answers: the relay has started (leases taken, or the slot streamed) by then.
            Duration notReady = Readiness.untilNotReady(() -> Readiness.overHttp(ready),
                    "503 not ready: ", Readiness.NOT_READY_WITHIN);
            Duration reason = Readiness.untilNotReady(() -> Readiness.overHttp(ready),
                    "Kafka not reachable at 127.0.0.1:9: ", Readiness.NOT_READY_WITHIN);
            System.out.println("sidecar relay " + relay + ", wrong broker address: 503 after " + notReady.toMillis()
                    + " ms of the HTTP port, the reason " + reason.toMillis() + " ms later: "
                    + Readiness.overHttp(ready).detail().strip());
        } finally {
            if (relay.equals("cdc")) {
                db.dropReplicationSlot(slot);
            }
        }
    }
}
