package dev.outboxkit.relay.cdc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.testkit.OutboxRows;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.RelayLeases;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.LoggerFactory;

/**
 * A clean stop of a CDC relay on a slot it just created logs no ERROR and no stack
 * trace. The stop used to interrupt Debezium's polling thread while it read the offsets (to confirm the
 * flushed position to the slot), and Kafka Connect's offset reader logged that as an ERROR.
 */
@ExtendWith(OutboxTestkitExtension.class)
class CleanStopTest {

    /**
     * The sidecar's settings (the library defaults): with the 1 s offset flush the stop's own flush is what
     * Debezium confirms to the slot while it stops; the other tests' 200 ms flushes confirm long before.
     */
    private static CdcRelay.Builder withDefaults(TestDatabase db, TestKafka kafka) {
        return CdcRelay.builder().jdbcUrl(db.jdbcUrl()).user(db.user()).password(dev.outboxkit.core.Secret.of(db.password()))
                .slotName(CdcTestSupport.slotFor(db)).bootstrapServers(kafka.bootstrapServers());
    }

    @Test
    void stoppingRightAfterCreatingANewSlotLogsNoErrorAndNoStackTrace(TestDatabase db, TestKafka kafka) throws Exception {
        List<ILoggingEvent> logged = capture(() -> {
            try (CdcRelay relay = withDefaults(db, kafka).build()) {
                relay.start(); // creates the slot; the stop lands before or while its first session starts
            }
            // close() right after start() once returned at once and left the relay running (it logged after the stop)
            assertThat(RelayLeases.find(db, RelayLeases.cdcRelayKey(CdcTestSupport.slotFor(db))).filter(RelayLeases.Lease::live))
                    .as("the lease is given back by the stop").isEmpty();
        }, db);
        assertNoErrorAndNoStackTrace(logged);
    }

    /** The stop right after the first offsets were stored: Debezium then confirms them to the slot while it stops. */
    @RepeatedTest(3)
    void stoppingRightAfterTheFirstEventOnANewSlotLogsNoErrorAndNoStackTrace(TestDatabase db, TestKafka kafka) throws Exception {
        String topic = "clean-stop." + db.name();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        List<ILoggingEvent> logged = capture(() -> {
            try (CdcRelay relay = withDefaults(db, kafka).route(TopicRoute.of(topic))
                    .meterRegistry(registry).build()) {
                relay.start();
                await().atMost(Duration.ofSeconds(90)).until(() -> relay.health().ready());
                try (java.sql.Connection c = db.connect()) {
                    OutboxRows.insert(c, "order", "o-1", "{\"n\":1}");
                }
                await().atMost(Duration.ofSeconds(60)).until(() -> published(registry) >= 1);
            }
        }, db);
        assertNoErrorAndNoStackTrace(logged);
        assertThat(CdcTestSupport.distinctIds(kafka, topic)).isEqualTo(1);
    }

    private interface Run {
        void run() throws Exception;
    }

    /**
     * What every logger logged while {@code run} ran (the slot is dropped afterwards), once no engine of an earlier
     * test is left running in the JVM (its ERRORs would be counted as this stop's).
     */
    private static List<ILoggingEvent> capture(Run run, TestDatabase db) throws Exception {
        CdcTestSupport.awaitNoEngineLeftBehind(Duration.ofSeconds(90));
        Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        ListAppender<ILoggingEvent> captured = new ListAppender<>();
        captured.start();
        root.addAppender(captured);
        try {
            run.run();
        } finally {
            root.detachAppender(captured);
            CdcTestSupport.dropSlot(db);
        }
        return List.copyOf(captured.list);
    }

    private static void assertNoErrorAndNoStackTrace(List<ILoggingEvent> logged) {
        List<String> errors = logged.stream().filter(e -> e.getLevel().isGreaterOrEqual(Level.ERROR))
                .map(e -> e.getLoggerName() + " - " + e.getFormattedMessage()).toList();
        List<String> traces = logged.stream().filter(e -> e.getThrowableProxy() != null)
                .map(e -> e.getLevel() + " " + e.getLoggerName() + " - " + e.getFormattedMessage()
                        + " (" + e.getThrowableProxy().getClassName() + ")").toList();
        assertThat(errors).as("ERROR lines during a clean stop").isEmpty();
        assertThat(traces).as("stack traces during a clean stop").isEmpty();
    }

    private static double published(SimpleMeterRegistry registry) {
        Counter c = registry.find("outbox.relay.published").counter();
        return c == null ? 0 : c.count();
    }
}
