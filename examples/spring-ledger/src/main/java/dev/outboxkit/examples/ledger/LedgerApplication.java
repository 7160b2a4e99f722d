package dev.outboxkit.examples.ledger;

import dev.outboxkit.spring.Idempotent;
import dev.outboxkit.spring.SpringInbox;
import dev.outboxkit.spring.SpringOutboxWriter;
import dev.outboxkit.writer.OutboxMessage;
import dev.outboxkit.writer.StoredResponse;
import dev.outboxkit.writer.TerminalFailureException;
import java.net.URI;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.http.ResponseEntity;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.stereotype.Component;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * The ledger: POST /transfers behind Idempotency-Key writes the transfer and its event in one
 * transaction; the in-app relay publishes it; the projection below applies it once.
 */
@SpringBootApplication
public class LedgerApplication {

    public static void main(String[] args) {
        SpringApplication.run(LedgerApplication.class, args);
    }

    record TransferRequest(String from, String to, long amount) {
    }

    @RestController
    static class Transfers {
        private final JdbcTemplate jdbc;
        private final SpringOutboxWriter outbox;

        Transfers(JdbcTemplate jdbc, SpringOutboxWriter outbox) {
            this.jdbc = jdbc;
            this.outbox = outbox;
        }

        @Idempotent
        @PostMapping("/transfers")
        ResponseEntity<Map<String, Object>> transfer(@RequestBody TransferRequest t) {
            int debited = jdbc.update("UPDATE account SET balance = balance - ? WHERE id = ? AND balance >= ?",
                    t.amount(), t.from(), t.amount());
            if (debited == 0) { // final: stored and replayed, the work rolled back
                throw new TerminalFailureException(StoredResponse.json(422, "{\"error\":\"insufficient funds\"}"));
            }
            jdbc.update("UPDATE account SET balance = balance + ? WHERE id = ?", t.amount(), t.to());
            UUID id = UUID.randomUUID();
            jdbc.update("INSERT INTO transfer (id, from_account, to_account, amount) VALUES (?, ?, ?, ?)",
                    id, t.from(), t.to(), t.amount());
            outbox.write(OutboxMessage.builder("transfer", id.toString(), "TransferMade")
                    .payload(Map.of("id", id.toString(), "from", t.from(), "to", t.to(), "amount", t.amount())).build());
            return ResponseEntity.created(URI.create("/transfers/" + id)).body(Map.of("id", id.toString()));
        }

        @GetMapping("/received/{account}")
        Received received(@PathVariable String account) {
            Long total = jdbc.query("SELECT total FROM received_total WHERE account = ?",
                    rs -> rs.next() ? rs.getLong(1) : 0L, account);
            return new Received(account, total == null ? 0 : total);
        }
    }

    /** A record, not a Map.of: its fields keep their order in the JSON (Map.of's order changes from run to run). */
    record Received(String account, long received) {
    }

    /** The downstream projection: money received per account, each transfer counted once. */
    @Component
    static class Projection {
        private final SpringInbox inbox;
        private final JdbcTemplate jdbc;
        private final com.fasterxml.jackson.databind.ObjectMapper json = new com.fasterxml.jackson.databind.ObjectMapper();

        Projection(SpringInbox inbox, JdbcTemplate jdbc) {
            this.inbox = inbox;
            this.jdbc = jdbc;
        }

        @KafkaListener(topics = "outbox.event.transfer", groupId = "received-totals")
        void on(ConsumerRecord<String, String> record) {
            inbox.applyOnce(record, c -> {
                var event = json.readTree(record.value());
                jdbc.update("INSERT INTO received_total VALUES (?, ?) ON CONFLICT (account) DO UPDATE "
                        + "SET total = received_total.total + EXCLUDED.total", event.get("to").asText(), event.get("amount").asLong());
            });
        }
    }
}
