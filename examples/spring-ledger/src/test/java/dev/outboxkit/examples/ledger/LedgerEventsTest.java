package dev.outboxkit.examples.ledger;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxkit.core.OutboxEvent;
import dev.outboxkit.spring.SpringOutboxWriter;
import dev.outboxkit.spring.test.OutboxEvents;
import dev.outboxkit.writer.OutboxMessage;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The example of outbox-spring-boot-test: "this service wrote that event", then "the relay published
 * it and the listener applied it", against the real relay, Kafka and inbox. {@link OutboxEvents}
 * holds what the test wrote (cleared before each test), committed or still open, never rolled back.
 */
class LedgerEventsTest extends LedgerTest {

    record TransferMade(String id, String from, String to, long amount) {}

    @Autowired
    OutboxEvents outbox;
    @Autowired
    JdbcTemplate jdbc;
    @LocalServerPort
    int port;

    @Test
    void aTransferWritesTransferMadeWhichReachesKafkaAndTheProjection() throws Exception {
        String carol = newAccount();
        assertThat(post("alice", carol, 5).statusCode()).isEqualTo(201);

        OutboxEvent made = outbox.single("TransferMade");                  // this test's transaction wrote it
        assertThat(made.aggregateType()).isEqualTo("transfer");
        TransferMade payload = outbox.payload(made, TransferMade.class);
        assertThat(payload).isEqualTo(new TransferMade(made.aggregateId(), "alice", carol, 5));

        ConsumerRecord<byte[], byte[]> record = outbox.awaitOnKafka(made, Duration.ofSeconds(60));  // the relay published it
        assertThat(record.topic()).isEqualTo("outbox.event.transfer");
        assertThat(new String(record.key())).isEqualTo(made.aggregateId());
        outbox.awaitApplied("received-totals", made, Duration.ofSeconds(60));  // the @KafkaListener applied it
        assertThat(jdbc.queryForObject("SELECT total FROM received_total WHERE account = ?", Long.class, carol)).isEqualTo(5);
    }

    @Test
    void aRefusedTransferWritesNoEvent() throws Exception {
        String empty = newAccount();
        assertThat(post(empty, "alice", 5).statusCode()).isEqualTo(422);  // insufficient funds: the work rolled back
        assertThat(outbox.all()).isEmpty();
    }

    @Autowired
    SpringOutboxWriter writer;
    @Autowired
    PlatformTransactionManager transactions;

    @Test
    void eventsOfARolledBackTransactionAreDropped() {
        new TransactionTemplate(transactions).executeWithoutResult(status -> {
            writer.write(note("rolled-back"));
            assertThat(outbox.ofAggregate("note", "rolled-back")).hasSize(1);  // visible while the transaction is open
            status.setRollbackOnly();
        });
        assertThat(outbox.all()).isEmpty();
    }

    @Test
    @Transactional   // the test's own transaction, rolled back after it: its events are visible inside it
    void aTransactionalTestSeesItsOwnEvents() {
        writer.write(note("first"), note("second"));
        assertThat(outbox.ofAggregate("note", "first")).singleElement().extracting(OutboxEvent::eventType).isEqualTo("Noted");
        assertThat(outbox.all()).extracting(OutboxEvent::aggregateId).containsExactly("first", "second");  // only this test's
    }

    static OutboxMessage note(String id) {
        return OutboxMessage.builder("note", id, "Noted").payloadJson("{}").build();
    }

    String newAccount() {
        String id = "acc-" + UUID.randomUUID();
        jdbc.update("INSERT INTO account VALUES (?, 0)", id);
        return id;
    }

    HttpResponse<String> post(String from, String to, long amount) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/transfers"))
                .timeout(Duration.ofSeconds(30)).header("Content-Type", "application/json")
                .header("Idempotency-Key", UUID.randomUUID().toString())
                .POST(HttpRequest.BodyPublishers.ofString(
                        "{\"from\":\"" + from + "\",\"to\":\"" + to + "\",\"amount\":" + amount + "}")).build();
        return HttpClient.newHttpClient().send(request, HttpResponse.BodyHandlers.ofString());
    }
}
