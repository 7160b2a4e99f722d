package dev.outboxkit.benchmarks.peer.modulith;

import java.util.UUID;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/**
 * The business operations, written as Spring Modulith's documentation shows them: a {@code @Transactional}
 * service method that changes state and publishes the event with {@link ApplicationEventPublisher}; the event
 * publication registry writes its row in the same transaction, and the externalizer sends it after commit.
 */
@Service
class TransferService {

    static final String ACCOUNTS = "bench_account";
    static final String COMMITTED = "crash_committed";

    private final JdbcTemplate jdbc;
    private final ApplicationEventPublisher events;

    TransferService(JdbcTemplate jdbc, ApplicationEventPublisher events) {
        this.jdbc = jdbc;
        this.events = events;
    }

    /** One event, nothing else (the latency workload: outboxkit's writer inserts one outbox row the same way). */
    @Transactional
    public void publish(TransferMade event) {
        events.publishEvent(event);
    }

    /** One transfer: two account updates (lower id first), and the event when {@code event} is not null. */
    @Transactional
    public void transfer(int from, int to, long amount, TransferMade event) {
        update(Math.min(from, to), from < to ? -amount : amount);
        update(Math.max(from, to), from < to ? amount : -amount);
        if (event != null) {
            events.publishEvent(event);
        }
    }

    /** The crash workload: a business row naming the event, and the event, in one transaction. */
    @Transactional
    public void publishRecorded(TransferMade event) {
        jdbc.update("INSERT INTO " + COMMITTED + " (event_id, aggregate_id, n) VALUES (?, ?, ?)",
                UUID.fromString(event.id()), event.aggregateId(), event.n());
        events.publishEvent(event);
    }

    private void update(int account, long delta) {
        if (jdbc.update("UPDATE " + ACCOUNTS + " SET balance = balance + ? WHERE id = ?", delta, account) != 1) {
            throw new IllegalStateException("account " + account + " is missing from " + ACCOUNTS);
        }
    }
}
