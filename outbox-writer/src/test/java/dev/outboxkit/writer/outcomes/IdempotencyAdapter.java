package dev.outboxkit.writer.outcomes;

import dev.outboxkit.writer.IdempotencyKeys;
import java.time.Duration;
import javax.sql.DataSource;

/**
 * One adapter of the idempotency engine as {@link IdempotencyOutcomeSuite} drives it: the library's
 * {@code IdempotencyKeys.execute}, the Spring filter, the JDK HTTP example. A request is a key and an amount; its
 * work makes one effect (a row) in the transaction that completes the key and answers 201 with a body unique to
 * the run. Replies speak HTTP: refusals carry {@code IdempotencyException.httpStatus()}, a failed work 5xx.
 */
public interface IdempotencyAdapter {

    /** What the caller got back. {@code retryAfter} is null unless the reply asks to retry later. */
    record Reply(int status, boolean replayed, String body, Duration retryAfter) {
    }

    /** Sends one request with {@code key}; returns when the answer is there. */
    Reply send(String key, long amount) throws Exception;

    /** The amount whose work ends in a final failure: 402, its effect rolled back, the 402 stored. */
    long refusedAmount();

    /** Effects committed so far (the suite compares before and after). */
    long effects() throws Exception;

    /** The database the keys and the effects live in. */
    DataSource dataSource();

    /** The table the work writes its effect to; {@link Faults#failWrites} makes writes to it fail. */
    String effectTable();

    /** From now on, works wait (in the middle of their transaction) until the returned hold is released. */
    Hold hold();

    /** The keys the adapter serves (the suite purges with them). */
    IdempotencyKeys keys();

    /** A work waiting for the test. */
    interface Hold extends AutoCloseable {
        /** Returns once a work waits (false after {@code timeout}). */
        boolean awaitHolding(Duration timeout) throws InterruptedException;

        /** Lets the waiting works go on, and the next ones run without waiting. */
        @Override
        void close();
    }
}
