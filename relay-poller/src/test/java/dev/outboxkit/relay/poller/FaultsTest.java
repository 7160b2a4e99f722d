package dev.outboxkit.relay.poller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.outboxkit.core.Secret;
import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.testkit.EmbeddedKafka;
import dev.outboxkit.testkit.History;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.Sql;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import kafka.server.BrokerServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Kafka down for a while, database connections killed: nothing is lost, the relay recovers by itself. */
@ExtendWith(OutboxTestkitExtension.class)
class FaultsTest {

    @Test
    void kafkaDownForAWhileLosesNothingAndTheRelayResumes(TestDatabase db) throws Exception {
        History history = new History();
        // A broker of this test's own: it is shut down and started again.
        try (EmbeddedKafka kafka = new EmbeddedKafka(1)) {
            String topic = TestKafka.uniqueTopic("poll-kafka-down");
            kafka.createTopic(topic, 4);
            BrokerServer broker = kafka.brokers().values().iterator().next();
            try (PollingRelay relay = PollingRelayTest.relay(db, kafka, topic).build()) {
                relay.start();
                try (Writers writers = new Writers(db, history, 2, 20, 5)) {
                    await().atMost(Duration.ofSeconds(60)).until(() -> writers.committed() > 500);
                    await().atMost(Duration.ofSeconds(30)).until(() -> relay.health().ready());
                    broker.shutdown();
                    long atShutdown = writers.committed();
                    await().atMost(Duration.ofSeconds(60)).until(() -> !relay.health().ready());
                    assertThat(relay.health().live()).isTrue();
                    assertThat(relay.health().detail()).contains("Kafka");
                    // Writers carry on while Kafka is away; their rows wait in the outbox.
                    await().atMost(Duration.ofSeconds(60)).until(() -> writers.committed() > atShutdown + 1000);
                    broker.startup();
                    long atStartup = writers.committed();
                    await().atMost(Duration.ofSeconds(60)).until(() -> writers.committed() > atStartup + 500);
                }
                Outbox.awaitEmpty(db, Duration.ofSeconds(120));
                await().atMost(Duration.ofSeconds(60)).untilAsserted(() ->
                        assertThat(relay.health().ready()).as(relay.health().detail()).isTrue());
            }
            Topic.check(kafka, List.of(topic), history, "kafka-down");
        }
    }

    @Test
    void killedDatabaseConnectionsAreReplacedAndNothingIsLost(TestDatabase db, TestKafka kafka) throws Exception {
        String topic = TestKafka.uniqueTopic("poll-pg-kill");
        kafka.createTopic(topic, 4);
        History history = new History();
        try (PollingRelay relay = PollingRelayTest.relay(db, kafka, topic).batchSize(200).build()) {
            relay.start();
            try (Writers writers = new Writers(db, history, 2, 20, 2); Connection admin = db.connect()) {
                int killed = 0;
                for (int round = 0; round < 5; round++) {
                    long before = writers.committed();
                    await().atMost(Duration.ofSeconds(60)).until(() -> writers.committed() > before + 300);
                    killed += (int) Sql.count(admin, "SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM "
                            + "pg_stat_activity WHERE application_name = 'outboxkit-poll' AND datname = current_database()) k");
                }
                assertThat(killed).as("relay connections terminated").isGreaterThanOrEqualTo(5);
            }
            Outbox.awaitEmpty(db, Duration.ofSeconds(120));
            await().atMost(Duration.ofSeconds(60)).untilAsserted(() ->
                    assertThat(relay.health().ready()).as(relay.health().detail()).isTrue());
        }
        Topic.check(kafka, List.of(topic), history, "pg-kill");
    }
}
