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
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import dev.outboxkit.testkit.fault.TcpFaultProxy;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.LoggerFactory;

/**
 * Issue 30, item 2 (leftover): a relay cut off from PostgreSQL without a FIN (lost node, partition) must still stop on
 * its own when told to. Every connection of the relay — pool, liveness lock, Debezium's — runs through a
 * {@link TcpFaultProxy} that is blackholed: nothing is forwarded, nothing closed, so every database call waits until
 * the OS gives up (minutes). {@code close()} must return within the shutdown timeout plus a margin, and say at WARN
 * what it could not release and why that is safe.
 */
@ExtendWith(OutboxTestkitExtension.class)
class CutOffCloseTest {

    private static final Duration SHUTDOWN = Duration.ofSeconds(3);
    /** Debezium's and Kafka's own stops, on a loaded 2-core machine. */
    private static final Duration MARGIN = Duration.ofSeconds(20);

    @Test
    void closeReturnsWithinTheShutdownTimeoutWhileTheDatabaseIsBlackholed(TestDatabase db, TestKafka kafka) throws Exception {
        String topic = TestKafka.uniqueTopic("cdc-cut-off-close");
        kafka.createTopic(topic, 1);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        ListAppender<ILoggingEvent> logged = new ListAppender<>();
        Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        logged.start();
        root.addAppender(logged);
        TcpFaultProxy link = TcpFaultProxy.start("pg-cut-off", db.server().host(), db.server().port());
        try (link) {
            CdcRelay relay = CdcTestSupport.relay(db, kafka).jdbcUrl(db.jdbcUrlVia(link.host(), link.port()))
                    .route(TopicRoute.of(topic)).shutdownTimeout(SHUTDOWN).meterRegistry(registry).build();
            try {
                relay.start();
                await().atMost(Duration.ofSeconds(120)).until(() -> relay.health().ready());
                OutboxRows.insertCommitted(db, java.util.stream.IntStream.range(0, 5)
                        .mapToObj(n -> OutboxRows.Row.of(topic, "a-" + n, n)).toList());
                await().atMost(Duration.ofSeconds(60))
                        .until(() -> registry.get("outbox.relay.published").counter().count() >= 5);

                link.blackhole();
                long start = System.nanoTime();
                relay.close();
                Duration took = Duration.ofNanos(System.nanoTime() - start);
                System.out.printf("CUT-OFF CLOSE cdc: close() took %d ms (shutdown timeout %d ms)%n",
                        took.toMillis(), SHUTDOWN.toMillis());
                assertThat(took).as("close() of a relay cut off from its database").isLessThan(SHUTDOWN.plus(MARGIN));
                assertThat(relay.role()).isIn(CdcRelay.Role.STOPPED, CdcRelay.Role.FAILED);
                assertThat(logged.list).as("one WARN says what could not be released and why that is safe")
                        .anyMatch(e -> e.getLevel() == Level.WARN && e.getFormattedMessage().contains("liveness lock")
                                && e.getFormattedMessage().contains("expires"));
            } finally {
                link.heal();
                relay.close();
            }
        } finally {
            root.detachAppender(logged);
            // The relay gave its engine up while the database was cut off; healed and unproxied, that engine reaches
            // the closed pool, logs its ERRORs and ends: wait for it here, so that no later test in this JVM reads
            // them as its own (HandoffTest and CleanStopTest read every ERROR of the JVM while they run).
            CdcTestSupport.awaitNoEngineLeftBehind(Duration.ofSeconds(90));
            CdcTestSupport.dropSlot(db);
        }
    }
}
