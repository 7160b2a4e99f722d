package dev.outboxkit.relay.poller.internal;

import java.sql.SQLException;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** What the claim loop, the claim and the settlement report to health (read from other threads). */
final class LoopStatus {

    private static final Logger log = LoggerFactory.getLogger(ClaimLoop.class);

    /** How logs name the relay ({@code poll relay <id>}). */
    private final String who;
    /** {@code idle_in_transaction_session_timeout} of claims, for the message when it ended one. */
    private final Duration idleTransactionTimeout;

    volatile long lastProgressNanos = System.nanoTime();
    /** Since when (System.nanoTime) Kafka has not taken a whole batch, or 0. */
    volatile long kafkaTroubleSinceNanos;
    /** Kafka answered records of the last batch it did not take whole with an error (rather than not in time). */
    volatile boolean kafkaRefused;
    /** Since when (System.nanoTime) claims or commits fail, or 0. */
    volatile long databaseTroubleSinceNanos;
    volatile String lastError;
    volatile int lastBatchSize;

    LoopStatus(String who, Duration idleTransactionTimeout) {
        this.who = who;
        this.idleTransactionTimeout = idleTransactionTimeout;
    }

    void databaseTrouble(String what, SQLException e) {
        if (databaseTroubleSinceNanos == 0) {
            databaseTroubleSinceNanos = System.nanoTime();
        }
        lastError = "database (" + what + "): " + e.getMessage();
        boolean idleKilled = "25P03".equals(e.getSQLState());
        if (idleKilled) {
            log.warn("{}: the database ended this instance's claim transaction because it stalled for longer than "
                            + "{} (idle_in_transaction_session_timeout); its rows went back to outbox_event and its work is "
                            + "fenced off. Stepping down from the leases it cannot renew",
                    who, idleTransactionTimeout);
        } else {
            log.warn("{}: {} failed ({}, SQLState {}); the batch's rows stay in outbox_event and are retried "
                    + "after a back-off", who, what, e.getMessage(), e.getSQLState());
        }
    }
}
