package dev.outboxkit.relay.cdc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.testkit.OutboxRows;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.Readiness;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import dev.outboxkit.testkit.fault.TcpFaultProxy;
import java.sql.Connection;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The CDC relay waits for a database that does not answer at start exactly as the polling relay does (the
 * one rule of {@code DatabaseAtStart}): not ready meanwhile with the reason, streaming once it answers, and a clear
 * error naming what was tried once {@code startTimeout} passed.
 */
@ExtendWith(OutboxTestkitExtension.class)
class StartTimeoutTest {

    @Test
    void aDatabaseThatAnswersWithinTheStartTimeoutIsWaitedForAndThenStreamedFrom(TestDatabase db, TestKafka kafka)
            throws Exception {
        String topic = TestKafka.uniqueTopic("cdc-start-wait");
        kafka.createTopic(topic, 1);
        try (TcpFaultProxy pg = refusing("cdc-start-wait-pg", db);
             CdcRelay relay = CdcTestSupport.relay(db, kafka).jdbcUrl(db.jdbcUrlVia(pg.host(), pg.port()))
                     .route(TopicRoute.of(topic)).startTimeout(Duration.ofSeconds(120)).build()) {
            // not ready, live, naming the proxy's address, the start not returned: checked by startWaiting
            Readiness.WaitingStart start = Readiness.startWaiting(relay, "does not answer yet (attempt ", pg.address(),
                    Duration.ofSeconds(60));
            System.out.println("CDC relay, database down at start: " + start.health().detail());
            Readiness.Restored back = start.afterRestore(pg::heal, Duration.ofSeconds(90), Duration.ofSeconds(90));
            System.out.println("CDC relay, database back: " + back);
            UUID id;
            try (Connection c = db.connect()) {
                id = OutboxRows.insert(c, "order", "o-1", "{\"n\": 1}");
            }
            assertThat(CdcTestSupport.await(kafka, topic, 1, Duration.ofSeconds(60))).isNotEmpty()
                    .allSatisfy(r -> assertThat(CdcTestSupport.header(r, "id")).isEqualTo(id.toString()));
        } finally {
            CdcTestSupport.dropSlot(db);
        }
    }

    @Test
    void aDatabaseThatStaysAwayFailsTheStartAfterTheStartTimeoutNamingWhatWasTried(TestDatabase db, TestKafka kafka) {
        try (TcpFaultProxy pg = refusing("cdc-start-timeout-pg", db);
             CdcRelay relay = CdcTestSupport.relay(db, kafka).jdbcUrl(db.jdbcUrlVia(pg.host(), pg.port()))
                     .startTimeout(Duration.ofSeconds(3)).build()) {
            assertThatThrownBy(relay::start).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("the CDC relay on slot " + CdcTestSupport.slotFor(db) + " cannot reach the "
                            + "database at " + pg.address() + "/" + db.name())
                    .hasMessageContaining("(startTimeout PT3S) failed, the last with")
                    .hasMessageNotContaining(db.password())
                    .satisfies(e -> System.out.println("CDC relay, database away past startTimeout PT3S: " + e.getMessage()));
            assertThat(relay.role()).isEqualTo(CdcRelay.Role.FAILED);
            assertThat(relay.health().detail()).contains("cannot reach the database");
        }
    }

    /** A proxy that refuses every connection from the start, as a server that is down does. */
    private static TcpFaultProxy refusing(String name, TestDatabase db) {
        return TcpFaultProxy.start(name, db.server().host(), db.server().port()).resetAndRefuse();
    }
}
