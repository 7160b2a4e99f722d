package dev.outboxkit.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.outboxkit.consumer.DedupeConsumer;
import dev.outboxkit.core.HeaderNames;
import dev.outboxkit.core.Secret;
import dev.outboxkit.core.TopicRoute;
import dev.outboxkit.relay.poller.PollingRelay;
import dev.outboxkit.sql.Migrations;
import dev.outboxkit.testkit.History;
import dev.outboxkit.testkit.OutboxTestkitExtension;
import dev.outboxkit.testkit.TestDatabase;
import dev.outboxkit.testkit.TestKafka;
import dev.outboxkit.testkit.TestPostgres;
import dev.outboxkit.writer.CommitOutcomeUnknownException;
import dev.outboxkit.writer.OutboxMessage;
import dev.outboxkit.writer.OutboxWriter;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Schema version 10 (binary payloads) applied while writers and a polling relay of the version before run.
 * The writers send the JSON insert, which version 10 leaves exactly as version 9 sent it; the relay starts
 * on the version-9 schema, finds no binary columns and runs version 9's claim statements. V10 is applied
 * mid-run; then the relay is restarted (the one restart an upgrade needs: it now reads the binary columns)
 * and the writers add binary events. The history checker then compares what was committed, delivered and
 * applied: nothing lost, nothing applied twice, per-aggregate order kept, and duplicate deliveries no more
 * than the one restart allows (a graceful close finishes its batch: none expected).
 */
@ExtendWith(OutboxTestkitExtension.class)
class SchemaUpgradeTest {

    private static final int WRITERS = 4;
    private static final int AGGREGATES_PER_WRITER = 8;
    private static final int BATCH = 200;

    @Test
    void version10AppliedUnderLoadLosesAndDuplicatesNothing(TestPostgres server, TestKafka kafka) throws Exception {
        TestDatabase db = server.newEmptyDatabase();
        String topic = TestKafka.uniqueTopic("upgrade");
        kafka.createTopic(topic, 4);
        History history = new History();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicBoolean binary = new AtomicBoolean();
        AtomicInteger binaryWritten = new AtomicInteger();
        AtomicLong committed = new AtomicLong();
        List<Thread> writers = new ArrayList<>();
        List<Throwable> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
        try {
            Migrations.migrate(db.dataSource(), "public", "9");
            db.exec("CREATE TABLE upgrade_effect (n bigserial PRIMARY KEY, event_id uuid NOT NULL, aggregate_id text NOT NULL)");
            OutboxWriter writer = OutboxWriter.builder().build();
            for (int w = 0; w < WRITERS; w++) {
                int wid = w;
                Thread t = new Thread(() -> write(db, writer, wid, history, stop, binary, binaryWritten, committed, failures),
                        "upgrade-writer-" + w);
                writers.add(t);
                t.start();
            }
            try (DedupeConsumer consumer = DedupeConsumer.builder().bootstrapServers(kafka.bootstrapServers())
                    .group("upgrade-" + UUID.randomUUID()).topics(List.of(topic)).dataSource(db.dataSource())
                    .handler((c, e) -> {
                        try (PreparedStatement ps = c.prepareStatement(
                                "INSERT INTO upgrade_effect (event_id, aggregate_id) VALUES (?, ?)")) {
                            ps.setObject(1, e.id());
                            ps.setString(2, e.aggregateId());
                            ps.executeUpdate();
                        }
                    }).build()) {
                consumer.start();
                PollingRelay relay = relay(db, kafka, topic, "upgrade-relay-1");
                relay.start();
                await().atMost(Duration.ofSeconds(60)).until(() -> db.count("SELECT count(*) FROM upgrade_effect") > 500);

                long before = committed.get();
                long start = System.nanoTime();
                Migrations.Result result = Migrations.migrate(db.dataSource(), "public", "10");
                long migrationMs = (System.nanoTime() - start) / 1_000_000;
                assertThat(result.version()).isEqualTo("10");
                long during = committed.get() - before;
                await().atMost(Duration.ofSeconds(60)).until(() -> committed.get() > before + during + 200);

                // The restart: the old relay closes gracefully, the new one reads the binary columns.
                relay.close();
                relay = relay(db, kafka, topic, "upgrade-relay-2");
                relay.start();
                binary.set(true);
                await().atMost(Duration.ofSeconds(60)).until(() -> binaryWritten.get() > 500);
                stop.set(true);
                for (Thread t : writers) {
                    t.join();
                }
                assertThat(failures).as("writers must never be refused").isEmpty();
                await().atMost(Duration.ofSeconds(120)).until(() -> db.count("SELECT count(*) FROM outbox_event") == 0);
                long total = committed.get();
                await().atMost(Duration.ofSeconds(120))
                        .until(() -> db.count("SELECT count(DISTINCT event_id) FROM upgrade_effect") >= total);
                relay.close();

                for (ConsumerRecord<byte[], byte[]> r : kafka.readAll(List.of(topic))) {
                    Header id = r.headers().lastHeader(HeaderNames.ID);
                    history.delivered(UUID.fromString(new String(id.value(), StandardCharsets.UTF_8)));
                }
                try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement(
                        "SELECT event_id, aggregate_id FROM upgrade_effect ORDER BY n"); ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        history.applied(rs.getObject(1, UUID.class), rs.getString(2));
                    }
                }
                History.Report report = history.check();
                System.out.printf("schema upgrade under load: V10 applied in %,d ms while %,d events committed; binary events"
                        + " after the restart %,d; checker: %s%n", migrationMs, during, binaryWritten.get(), report.summary());
                assertThat(report.ok()).as(report.summary()).isTrue();
                assertThat(report.duplicateDeliveries()).as("duplicates beyond one graceful restart").isLessThanOrEqualTo(BATCH);
                assertThat(during).as("writers kept committing while V10 was applied").isPositive();
            }
        } finally {
            stop.set(true);
            for (Thread t : writers) {
                t.join();
            }
            server.drop(db);
        }
    }

    private static PollingRelay relay(TestDatabase db, TestKafka kafka, String topic, String instance) {
        return PollingRelay.builder().jdbcUrl(db.jdbcUrl()).user(db.user()).password(Secret.of(db.password()))
                .bootstrapServers(kafka.bootstrapServers()).route(TopicRoute.of(topic)).instanceId(instance)
                .batchSize(BATCH).leaseDuration(Duration.ofSeconds(5)).build();
    }

    /** One writer: its own aggregates, one event per transaction, in order; binary events once {@code binary} is set. */
    private static void write(TestDatabase db, OutboxWriter writer, int wid, History history, AtomicBoolean stop,
                              AtomicBoolean binary, AtomicInteger binaryWritten, AtomicLong committed, List<Throwable> failures) {
        long[] order = new long[AGGREGATES_PER_WRITER];
        try (Connection c = db.connect()) {
            c.setAutoCommit(false);
            for (long n = 0; !stop.get(); n++) {
                int a = (int) (n % AGGREGATES_PER_WRITER);
                String aggregate = "w" + wid + "-a" + a;
                boolean bytes = binary.get() && n % 2 == 0;
                OutboxMessage.Builder b = OutboxMessage.builder("account", aggregate, "Changed");
                OutboxMessage m = bytes
                        ? b.payloadBytes(("n=" + n).getBytes(StandardCharsets.UTF_8), "application/octet-stream").build()
                        : b.payloadJson("{\"n\": " + n + "}").build();
                long place = order[a]++;
                try {
                    writer.write(c, m);
                    c.commit();
                    history.committed(m.id(), aggregate, place);
                    committed.incrementAndGet();
                    if (bytes) {
                        binaryWritten.incrementAndGet();
                    }
                } catch (CommitOutcomeUnknownException e) {
                    history.inDoubt(m.id(), aggregate, place);
                } catch (SQLException e) {
                    c.rollback();
                    history.rolledBack(m.id());
                    failures.add(e);
                }
            }
        } catch (Throwable t) {
            failures.add(t);
        }
    }
}
