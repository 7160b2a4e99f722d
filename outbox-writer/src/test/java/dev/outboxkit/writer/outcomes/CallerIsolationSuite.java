package dev.outboxkit.writer.outcomes;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxkit.writer.outcomes.IdempotencyAdapter.Reply;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The security invariant, for adapters that know their callers: one caller's key can never replay another caller's
 * response. The library scopes keys by what the caller passes as the scope; the Spring filter by the authenticated
 * principal. (The JDK HTTP example has no callers: it serves one tenant.)
 */
public interface CallerIsolationSuite {

    /** Sends {@code key} as {@code caller} to the same endpoint as every other caller. */
    Reply sendAs(String caller, String key, long amount) throws Exception;

    @Test
    default void oneCallerCanNeverReplayAnotherCallersResponse() throws Exception {
        String key = UUID.randomUUID().toString();
        Reply alice = sendAs("alice", key, 2);
        Reply bob = sendAs("bob", key, 2);
        assertThat(alice.status()).isEqualTo(201);
        assertThat(bob.status()).isEqualTo(201);
        assertThat(bob.replayed()).as("bob's request ran: it is not alice's replay").isFalse();
        assertThat(bob.body()).isNotEqualTo(alice.body());
        // each caller's retry replays their own response
        assertThat(sendAs("bob", key, 2).body()).isEqualTo(bob.body());
        assertThat(sendAs("alice", key, 2).body()).isEqualTo(alice.body());
    }
}
