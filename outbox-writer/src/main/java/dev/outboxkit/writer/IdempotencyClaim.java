package dev.outboxkit.writer;

import java.util.Optional;

/**
 * A key claimed by {@link IdempotencyKeys#claim}, or the stored response to replay: the handle of
 * the step-by-step protocol for integrations that run the work in a transaction they own (the
 * Spring Boot module). Immutable.
 */
public final class IdempotencyClaim {

    private final String scope;
    private final String key;
    private final int attempt;
    private final StoredResponse replay;

    IdempotencyClaim(String scope, String key, int attempt, StoredResponse replay) {
        this.scope = scope;
        this.key = key;
        this.attempt = attempt;
        this.replay = replay;
    }

    public String scope() {
        return scope;
    }

    public String key() {
        return key;
    }

    /** The attempt number this claim holds (1 for the first run, more after takeovers); 0 for a replay. */
    public int attempt() {
        return attempt;
    }

    /** The stored outcome of an earlier request with this key: send it instead of running the work. */
    public Optional<StoredResponse> replay() {
        return Optional.ofNullable(replay);
    }

    @Override
    public String toString() {
        return "IdempotencyClaim[scope=" + scope + ", key=" + key + (replay != null ? ", replay" : ", attempt=" + attempt) + "]";
    }
}
