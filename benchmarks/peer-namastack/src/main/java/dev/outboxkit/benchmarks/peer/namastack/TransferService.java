package dev.outboxkit.benchmarks.peer.namastack;

import io.namastack.outbox.Outbox;
import java.util.List;
import java.util.UUID;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/**
 * The business operations, written as namastack-outbox's documentation shows them ("Record Scheduling"): a
 * {@code @Transactional} service method changes state and calls {@link Outbox#schedule(Object, String)} with the
 * aggregate as the record key; the record's row is written in the same transaction.
 */
@Service
class TransferService {

    static final String ACCOUNTS = "bench_account";
    static final String COMMITTED = "crash_committed";

    private final JdbcTemplate jdbc;
    private final Outbox outbox;

    TransferService(JdbcTemplate jdbc, Outbox outbox) {
        this.jdbc = jdbc;
        this.outbox = outbox;
    }

    /** One record, nothing else (the latency workload: outboxkit's writer inserts one outbox row the same way). */
    @Transactional
    public void publish(TransferMade event) {
        outbox.schedule(event, event.aggregateId());
    }

    /** Many records in one transaction: a backlog that becomes visible at once, at its commit. */
    @Transactional
    public void publishAll(List<TransferMade> events) {
        for (TransferMade event : events) {
            outbox.schedule(event, event.aggregateId());
        }
    }

    /** One transfer: two account updates (lower id first), and the record when {@code event} is not null. */
    @Transactional
    public void transfer(int from, int to, long amount, TransferMade event) {
        update(Math.min(from, to), from < to ? -amount : amount);
        update(Math.max(from, to), from < to ? amount : -amount);
        if (event != null) {
            outbox.schedule(event, event.aggregateId());
        }
    }

    /** The crash workload: a business row naming the event, and the record, in one transaction. */
    @Transactional
    public void publishRecorded(TransferMade event) {
        jdbc.update("INSERT INTO " + COMMITTED + " (event_id, aggregate_id, n) VALUES (?, ?, ?)",
                UUID.fromString(event.id()), event.aggregateId(), event.n());
        outbox.schedule(event, event.aggregateId());
    }

    private void update(int account, long delta) {
        if (jdbc.update("UPDATE " + ACCOUNTS + " SET balance = balance + ? WHERE id = ?", delta, account) != 1) {
            throw new IllegalStateException("account " + account + " is missing from " + ACCOUNTS);
        }
    }
}
