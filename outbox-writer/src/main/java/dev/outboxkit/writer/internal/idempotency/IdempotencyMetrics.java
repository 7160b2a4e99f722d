package dev.outboxkit.writer.internal.idempotency;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

/**
 * Not API: public for {@code dev.outboxkit.writer.IdempotencyKeys} and {@link IdempotencyEngine}.
 *
 * <p>The idempotency keys' meters; names are listed in outbox-writer/README.md, "Metrics".
 */
public final class IdempotencyMetrics {

    public final Counter executed;
    public final Counter replayed;
    public final Counter inProgress;
    public final Counter mismatch;
    public final Counter expired;
    public final Counter terminal;
    public final Counter failed;
    public final Counter unknown;
    public final Counter takeovers;
    public final Counter claimsLost;
    public final Counter purged;
    public final Timer work;

    public IdempotencyMetrics(MeterRegistry registry) {
        executed = outcome(registry, "executed");
        replayed = outcome(registry, "replayed");
        inProgress = outcome(registry, "in_progress");
        mismatch = outcome(registry, "request_mismatch");
        expired = outcome(registry, "key_expired");
        terminal = outcome(registry, "terminal_failure");
        failed = outcome(registry, "failed");
        unknown = outcome(registry, "unknown_outcome");
        takeovers = Counter.builder("outbox.idempotency.takeovers")
                .description("Claims taken over after the previous holder's lease expired or was released").register(registry);
        claimsLost = Counter.builder("outbox.idempotency.claims.lost")
                .description("Completions refused because another attempt had taken the key over").register(registry);
        purged = Counter.builder("outbox.idempotency.purged").description("Keys purged after their retention window")
                .register(registry);
        work = Timer.builder("outbox.idempotency.work").description("Time spent in the caller's idempotent work").register(registry);
    }

    private static Counter outcome(MeterRegistry registry, String outcome) {
        return Counter.builder("outbox.idempotency.requests").description("Idempotent requests by outcome")
                .tag("outcome", outcome).register(registry);
    }
}
