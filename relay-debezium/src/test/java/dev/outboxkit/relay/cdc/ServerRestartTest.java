package dev.outboxkit.relay.cdc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.testkit.History;
import dev.outboxkit.testkit.LocalPostgres;
import dev.outboxkit.testkit.OutboxRows;
import dev.outboxkit.testkit.OutboxTestkit;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import dev.outboxkit.testkit.TestPostgres;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * PostgreSQL crashes ({@code pg_ctl stop -m immediate}) and comes back while the relay streams: the relay
 * resumes from its stored offset, nothing is lost. Runs on the machine's own PostgreSQL binaries (15 on
 * this machine kind: the second major the suite must cover), since only a server of our own can be
 * crashed and restarted.
 */
@ExtendWith(OutboxTestkitExtension.class)
class ServerRestartTest {

    private static final Logger log = LoggerFactory.getLogger(ServerRestartTest.class);

    @Test
    void aServerCrashAndRestartIsResumedWithoutLoss(TestKafka kafka) throws Exception {
        boolean onPath = Stream.of(System.getenv("PATH").split(":")).anyMatch(dir -> Files.isExecutable(Path.of(dir, "pg_ctl")));
        Assumptions.assumeTrue(onPath, "no PostgreSQL binaries (pg_ctl) on the PATH (apt-get install postgresql)");
        try (TestPostgres server = OutboxTestkit.startPostgres("local", false)) {
            LocalPostgres local = (LocalPostgres) server;
            TestDatabase db = server.newDatabase();
            String topic = TestKafka.uniqueTopic("cdc-restart");
            kafka.createTopic(topic, 4);
            History history = new History();
            List<OutboxRows.Row> rows = new ArrayList<>();
            try (CdcRelay relay = CdcTestSupport.relay(db, kafka).route(TopicRoute.of(topic)).deleteAfterPublish(false).build()) {
                relay.start();
                await().atMost(Duration.ofSeconds(90)).until(() -> relay.health().ready());
                log.info("relay streams from PostgreSQL {}", server.majorVersion());
                write(db, history, rows, 0, 500);
                // the crash's moment, on purpose not synchronised: wherever it falls (before, while or after these are
                // published) nothing may be lost, and 300 ms makes "while" likely on an idle machine
                Thread.sleep(300);
                local.stopImmediately();
                local.start();
                log.info("PostgreSQL crashed and restarted");
                write(db, history, rows, 500, 1000);
                await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofSeconds(1))
                        .until(() -> CdcTestSupport.distinctIds(kafka, topic) >= rows.size());
                await().atMost(Duration.ofSeconds(60)).until(() -> relay.health().ready());
            } finally {
                CdcTestSupport.dropSlot(db);
                server.drop(db);
            }
            CdcTestSupport.consume(kafka, topic, history);
            History.Report report = history.check();
            log.info("server crash and restart: {}", report.summary());
            assertThat(report.ok()).as(report.summary()).isTrue();
            assertThat(report.intents()).isEqualTo(1000);
        }
    }

    private static void write(TestDatabase db, History history, List<OutboxRows.Row> rows, int from, int to) throws Exception {
        for (int i = from; i < to; i += 50) {
            List<OutboxRows.Row> batch = new ArrayList<>();
            for (int j = i; j < i + 50; j++) {
                batch.add(OutboxRows.Row.of(null, "agg-" + (j % 10), j));
            }
            OutboxRows.insertCommitted(db, batch);
            for (int j = 0; j < batch.size(); j++) {
                history.committed(batch.get(j).id(), batch.get(j).aggregateId(), i + j);
            }
            rows.addAll(batch);
        }
    }
}
