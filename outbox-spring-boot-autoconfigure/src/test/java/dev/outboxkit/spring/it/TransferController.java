package dev.outboxkit.spring.it;

import dev.outboxkit.spring.Idempotent;
import dev.outboxkit.spring.SpringOutboxWriter;
import dev.outboxkit.writer.OutboxMessage;
import dev.outboxkit.writer.StoredResponse;
import dev.outboxkit.writer.TerminalFailureException;
import java.net.URI;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;
import org.springframework.context.annotation.Profile;
import org.springframework.http.ResponseEntity;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/** The ledger's HTTP API over JdbcTemplate: every write endpoint is @Idempotent. */
@RestController
@Profile("!jpa")
class TransferController {

    record TransferRequest(String from, String to, long amount) {
    }

    private final JdbcTemplate jdbc;
    private final SpringOutboxWriter outbox;
    private final DataSource dataSource;
    /** Tests: the next /flaky call fails with 503 after doing its work. */
    final AtomicBoolean failNext = new AtomicBoolean();
    /** Tests: /slow counts this down once its work is done, then holds its claim until {@link #slowRelease} opens. */
    volatile CountDownLatch slowStarted = new CountDownLatch(1);
    volatile CountDownLatch slowRelease = new CountDownLatch(0);

    TransferController(JdbcTemplate jdbc, SpringOutboxWriter outbox, DataSource dataSource) {
        this.jdbc = jdbc;
        this.outbox = outbox;
        this.dataSource = dataSource;
    }

    @Idempotent
    @PostMapping("/transfers")
    ResponseEntity<Map<String, Object>> transfer(@RequestBody TransferRequest request) {
        UUID id = transfer(request.from(), request.to(), request.amount());
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("id", id.toString());
        body.put("from", request.from());
        body.put("to", request.to());
        body.put("amount", request.amount());
        body.put("at", Instant.now().toString());
        return ResponseEntity.created(URI.create("/transfers/" + id)).header("X-Transfer-Id", id.toString()).body(body);
    }

    /** Does its work, then waits for the test (at most a minute) before answering: a request still in progress. */
    @Idempotent
    @PostMapping("/slow")
    ResponseEntity<String> slow(@RequestBody TransferRequest request) throws InterruptedException {
        UUID id = transfer(request.from(), request.to(), request.amount());
        slowStarted.countDown();
        if (!slowRelease.await(60, TimeUnit.SECONDS)) {
            throw new IllegalStateException("the test never released /slow");
        }
        return ResponseEntity.status(201).body("{\"id\":\"" + id + "\"}");
    }

    /** Does its work, then answers 503 once when asked to: a failure that is not final. */
    @Idempotent
    @PostMapping("/flaky")
    ResponseEntity<String> flaky(@RequestBody TransferRequest request) {
        UUID id = transfer(request.from(), request.to(), request.amount());
        if (failNext.getAndSet(false)) {
            return ResponseEntity.status(503).body("{\"error\":\"try again\"}");
        }
        return ResponseEntity.status(201).body("{\"id\":\"" + id + "\"}");
    }

    /** Over 1000 is refused for good: the work is rolled back, the refusal stored. */
    @Idempotent
    @PostMapping("/payments")
    ResponseEntity<String> payment(@RequestBody TransferRequest request) {
        UUID id = transfer(request.from(), request.to(), request.amount());
        if (request.amount() > 1000) {
            throw new TerminalFailureException(StoredResponse.json(402, "{\"error\":\"over the limit\",\"amount\":"
                    + request.amount() + "}"));
        }
        return ResponseEntity.status(201).body("{\"id\":\"" + id + "\"}");
    }

    /** Tests: while set, /outcomes counts {@link #outcomeHolding} down after its work and waits for this to open. */
    volatile CountDownLatch outcomeRelease;
    volatile CountDownLatch outcomeHolding;

    /** The idempotency outcome suite's endpoint (SpringFilterOutcomesTest): a transfer, then 201; over 1000 refused for good. */
    @Idempotent
    @PostMapping("/outcomes")
    ResponseEntity<String> outcome(@RequestBody TransferRequest request) throws InterruptedException {
        UUID id = transfer(request.from(), request.to(), request.amount());
        CountDownLatch release = outcomeRelease;
        if (release != null) {
            outcomeHolding.countDown();
            if (!release.await(60, TimeUnit.SECONDS)) {
                throw new IllegalStateException("the test never released /outcomes");
            }
        }
        if (request.amount() > 1000) {
            throw new TerminalFailureException(StoredResponse.json(402, "{\"error\":\"over the limit\"}"));
        }
        return ResponseEntity.status(201).body("{\"id\":\"" + id + "\"}");
    }

    /** Loses its database session just before the COMMIT: the outcome is unknown. */
    @Idempotent
    @PostMapping("/fragile")
    ResponseEntity<String> fragile(@RequestBody TransferRequest request) {
        UUID id = transfer(request.from(), request.to(), request.amount());
        Integer pid = jdbc.queryForObject("SELECT pg_backend_pid()", Integer.class);
        TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
            @Override
            public void beforeCommit(boolean readOnly) {
                try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
                    s.execute("SELECT pg_terminate_backend(" + pid + ", 10000)");
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }
        });
        return ResponseEntity.status(201).body("{\"id\":\"" + id + "\"}");
    }

    UUID transfer(String from, String to, long amount) {
        UUID id = UUID.randomUUID();
        jdbc.update("UPDATE account SET balance = balance - ? WHERE id = ?", amount, from);
        jdbc.update("UPDATE account SET balance = balance + ? WHERE id = ?", amount, to);
        jdbc.update("INSERT INTO transfer (id, from_account, to_account, amount) VALUES (?, ?, ?, ?)", id, from, to, amount);
        outbox.write(OutboxMessage.builder("transfer", id.toString(), "TransferMade")
                .payloadJson("{\"id\":\"" + id + "\",\"from\":\"" + from + "\",\"to\":\"" + to + "\",\"amount\":" + amount + "}")
                .build());
        return id;
    }
}
