package dev.outboxkit.writer.outcomes;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxkit.core.Identifiers;
import dev.outboxkit.core.OutboxTables;
import dev.outboxkit.writer.IdempotencyKeys;
import dev.outboxkit.writer.outcomes.IdempotencyAdapter.Hold;
import dev.outboxkit.writer.outcomes.IdempotencyAdapter.Reply;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The outcomes of the idempotency engine, run by every adapter over real PostgreSQL: a test class of the adapter's
 * module implements this interface and {@link #adapter()}. Each test uses keys of its own.
 */
public interface IdempotencyOutcomeSuite {

    IdempotencyAdapter adapter();

    private static String newKey() {
        return UUID.randomUUID().toString();
    }

    /** Ages {@code key} past its retention window and purges it; its tombstone stays. */
    private static void purge(IdempotencyAdapter a, String key) throws Exception {
        try (Connection c = a.dataSource().getConnection();
             PreparedStatement ps = c.prepareStatement("UPDATE " + Identifiers.qualified(a.keys().schema(),
                     OutboxTables.IDEMPOTENCY_KEY) + " SET created_at = created_at - interval '400 days' WHERE idem_key = ?")) {
            ps.setString(1, key);
            assertThat(ps.executeUpdate()).isEqualTo(1);
        }
        assertThat(a.keys().purgeExpired(a.dataSource())).isPositive();
    }

    @Test
    default void theFirstRequestRunsAndEveryRetryReplaysItsResponse() throws Exception {
        IdempotencyAdapter a = adapter();
        String key = newKey();
        long before = a.effects();
        Reply first = a.send(key, 3);
        assertThat(first.status()).as(first.body()).isEqualTo(201);
        assertThat(first.replayed()).isFalse();
        for (int i = 0; i < 2; i++) {
            Reply retry = a.send(key, 3);
            assertThat(retry.status()).isEqualTo(201);
            assertThat(retry.replayed()).isTrue();
            assertThat(retry.body()).isEqualTo(first.body());
        }
        assertThat(a.effects()).isEqualTo(before + 1);
    }

    @Test
    default void theSameKeyWithAnotherRequestIs422AndRunsNothing() throws Exception {
        IdempotencyAdapter a = adapter();
        String key = newKey();
        assertThat(a.send(key, 3).status()).isEqualTo(201);
        long before = a.effects();
        Reply other = a.send(key, 4);
        assertThat(other.status()).isEqualTo(422);
        assertThat(other.replayed()).isFalse();
        assertThat(other.body()).contains("already used for a different request");
        assertThat(a.effects()).isEqualTo(before);
    }

    @Test
    default void aRequestStillRunningIs409WithAShortRetryAfterThenItsResponseIsReplayed() throws Exception {
        IdempotencyAdapter a = adapter();
        String key = newKey();
        CompletableFuture<Reply> first;
        try (Hold hold = a.hold()) {
            first = CompletableFuture.supplyAsync(() -> {
                try {
                    return a.send(key, 5);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            assertThat(hold.awaitHolding(Duration.ofSeconds(60))).as("the first request's work runs").isTrue();
            Reply busy = a.send(key, 5);
            assertThat(busy.status()).as(busy.body()).isEqualTo(409);
            assertThat(busy.retryAfter()).isBetween(Duration.ofSeconds(1), IdempotencyKeys.DEFAULT_LEASE.minusSeconds(1));
        }
        Reply done = first.get(60, TimeUnit.SECONDS);
        assertThat(done.status()).isEqualTo(201);
        assertThat(done.replayed()).isFalse();
        Reply retry = a.send(key, 5);
        assertThat(retry.replayed()).isTrue();
        assertThat(retry.body()).isEqualTo(done.body());
    }

    @Test
    default void aFinalFailureIsStoredWithoutItsEffectAndReplayed() throws Exception {
        IdempotencyAdapter a = adapter();
        String key = newKey();
        long before = a.effects();
        Reply refused = a.send(key, a.refusedAmount());
        assertThat(refused.status()).isEqualTo(402);
        assertThat(refused.replayed()).isFalse();
        Reply retry = a.send(key, a.refusedAmount());
        assertThat(retry.status()).isEqualTo(402);
        assertThat(retry.replayed()).isTrue();
        assertThat(retry.body()).isEqualTo(refused.body());
        assertThat(a.effects()).isEqualTo(before);
    }

    @Test
    default void aFailedWorkRollsBackAndReleasesTheKeySoTheRetryRunsAtOnce() throws Exception {
        IdempotencyAdapter a = adapter();
        String key = newKey();
        long before = a.effects();
        try (AutoCloseable fault = Faults.failWrites(a.dataSource(), a.effectTable())) {
            Reply failed = a.send(key, 2);
            assertThat(failed.status()).as(failed.body()).isBetween(500, 599);
            assertThat(failed.replayed()).isFalse();
        }
        assertThat(a.effects()).isEqualTo(before);
        Reply retry = a.send(key, 2);
        assertThat(retry.status()).as("no waiting for the lease: " + retry.body()).isEqualTo(201);
        assertThat(retry.replayed()).isFalse();
        assertThat(a.effects()).isEqualTo(before + 1);
    }

    @Test
    default void aPurgedKeyIs410AndDoesNotRunAgain() throws Exception {
        IdempotencyAdapter a = adapter();
        String key = newKey();
        assertThat(a.send(key, 1).status()).isEqualTo(201);
        purge(a, key);
        long before = a.effects();
        Reply late = a.send(key, 1);
        assertThat(late.status()).isEqualTo(410);
        assertThat(late.body()).contains("NOT executed again");
        assertThat(a.effects()).isEqualTo(before);
    }
}
