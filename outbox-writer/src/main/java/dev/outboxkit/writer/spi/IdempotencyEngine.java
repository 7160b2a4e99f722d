package dev.outboxkit.writer.spi;

import com.fasterxml.jackson.databind.JsonNode;
import dev.outboxkit.core.spi.GrantsOnce;
import dev.outboxkit.writer.CommitOutcomeUnknownException;
import dev.outboxkit.writer.IdempotencyKeyExpiredException;
import dev.outboxkit.writer.KeyReusedWithDifferentRequestException;
import dev.outboxkit.writer.RequestInProgressException;
import dev.outboxkit.writer.StoredResponse;
import dev.outboxkit.writer.TerminalFailureException;
import dev.outboxkit.writer.internal.CanonicalJson;
import dev.outboxkit.writer.internal.idempotency.IdempotencyMetrics;
import dev.outboxkit.writer.internal.idempotency.IdempotencySql;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.Arrays;
import java.util.Objects;
import java.util.Optional;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Not API: the one state machine of request idempotency keys, used by {@code IdempotencyKeys.execute} and the
 * Spring Boot module's filter (the protocol is described in outbox-writer/README.md, "Request idempotency keys").
 *
 * <p>{@link #claim} takes the key or finds its outcome: a {@link Claim} held with an attempt number, a stored
 * response to replay, or one of the refusals (422 {@link KeyReusedWithDifferentRequestException}, 409
 * {@link RequestInProgressException}, 410 {@link IdempotencyKeyExpiredException}). {@link #run} then runs the
 * work of a held claim in a {@link WorkTransaction} and ends it in exactly one way: completed with the work
 * (executed), completed alone after a {@link TerminalFailureException} (terminal), released for a retry (the
 * work failed or gave no final outcome), or lost to a later attempt (fenced: nothing of this attempt commits).
 * Immutable and thread-safe.
 */
public final class IdempotencyEngine {

    private static final Logger log = LoggerFactory.getLogger(IdempotencyEngine.class);
    private static final int MAX_ROUNDS = 3;
    /** The longest idempotency key and scope a request may use. */
    public static final int MAX_KEY_LENGTH = 255;
    public static final int MAX_SCOPE_LENGTH = 255;

    private final Duration lease;
    private final Duration retryAfter;
    private final Clock clock;
    private final IdempotencyMetrics metrics;
    private final IdempotencySql sql;
    private final Grants grants;

    /** Checks the privileges the key tables (and the work's writer) need, once, before the first claim. */
    @FunctionalInterface
    public interface Grants {
        void require(Connection c) throws SQLException;
    }

    /** The work of a held claim, run in its {@link WorkTransaction}. */
    @FunctionalInterface
    public interface Work {
        /**
         * The response to store with the work's effect, or empty when the outcome is not final (the work is
         * rolled back and the key released). Throw {@link TerminalFailureException} to store a final failure
         * without the effect; anything else rolls back, releases the key and is rethrown.
         */
        Optional<StoredResponse> run() throws Exception;
    }

    /** A claim: held with {@code attempt} (1 and up), or {@code replay} of a stored outcome (attempt 0). */
    public record Claim(String scope, String key, int attempt, StoredResponse replay) {
        public boolean held() {
            return replay == null;
        }
    }

    /** How {@link #run} ended a held claim. */
    public enum Ending { EXECUTED, TERMINAL, RELEASED, CLAIM_LOST }

    /** What {@link #run} did and the response it stored ({@code null} when {@link Ending#RELEASED} or lost). */
    public record Outcome(Ending ending, StoredResponse response) {
    }

    public IdempotencyEngine(String schema, Duration lease, Duration retryAfter, Clock clock, IdempotencyMetrics metrics,
                             Grants grants) {
        this.lease = lease;
        this.retryAfter = retryAfter;
        this.clock = clock;
        this.metrics = metrics;
        this.sql = new IdempotencySql(schema);
        this.grants = grants;
    }

    /** The hash a stored request is compared by: SHA-256 of the request's canonical form. */
    public static byte[] requestHash(JsonNode canonicalRequest) {
        return CanonicalJson.sha256(canonicalRequest);
    }

    public Duration lease() {
        return lease;
    }

    /** The attempts the library makes in one call when its claims keep getting lost. */
    public static int maxRounds() {
        return MAX_ROUNDS;
    }

    /** @throws IllegalArgumentException when the scope or the key is blank, too long or holds control characters */
    public static void requireValid(String scope, String key) {
        requireName("scope", scope, MAX_SCOPE_LENGTH, "a namespace such as the endpoint or tenant");
        requireName("idempotency key", key, MAX_KEY_LENGTH, "a unique value per request, for example a UUID");
    }

    /** {@link #claim(Connection, String, String, byte[])} on a connection of its own, committed at once. */
    public Claim claim(DataSource dataSource, String scope, String key, byte[] hash) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            boolean autoCommit = c.getAutoCommit();
            try {
                return claim(c, scope, key, hash);
            } finally {
                restoreAutoCommit(c, autoCommit);
            }
        }
    }

    /**
     * Claims the key (one round trip, committed at once: autocommit is switched on) or finds its outcome. Checks
     * the grants before the first claim of this engine.
     */
    public Claim claim(Connection c, String scope, String key, byte[] hash) throws SQLException {
        requireValid(scope, key);
        if (hash == null || hash.length != 32) {
            throw new IllegalArgumentException("the request hash must be a SHA-256 (32 bytes)");
        }
        grants.require(c);
        if (!c.getAutoCommit()) {
            c.setAutoCommit(true);
        }
        Claim claim = claimOrLookUp(c, scope, key, hash);
        if (!claim.held()) {
            metrics.replayed.increment();
        } else if (claim.attempt() > 1) {
            metrics.takeovers.increment();
        }
        return claim;
    }

    private Claim claimOrLookUp(Connection c, String scope, String key, byte[] hash) throws SQLException {
        for (int round = 0; round < MAX_ROUNDS; round++) {
            Instant now = clock.instant();
            Integer attempt = null;
            boolean tombstoned;
            try (PreparedStatement ps = c.prepareStatement(sql.claim)) {
                IdempotencySql.bindClaim(ps, scope, key, hash, now, lease);
                ps.execute();
                try (ResultSet rs = ps.getResultSet()) {
                    if (rs.next()) {
                        attempt = rs.getInt(1);
                    }
                }
                ps.getMoreResults();
                try (ResultSet rs = ps.getResultSet()) {
                    rs.next();
                    tombstoned = rs.getBoolean(1);
                }
            }
            if (attempt != null) {
                if (!tombstoned) {
                    return new Claim(scope, key, attempt, null);
                }
                // A purge committed while our INSERT waited for it: the key is remembered, undo our claim.
                try (PreparedStatement ps = c.prepareStatement(sql.dropClaim)) {
                    IdempotencySql.bindKey(ps, scope, key, attempt);
                    ps.executeUpdate();
                }
            }
            try (PreparedStatement ps = c.prepareStatement(sql.lookup)) {
                ps.setString(1, scope);
                ps.setString(2, key);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    String state = rs.getString(1);
                    if (state != null) {
                        if (!Arrays.equals(rs.getBytes(2), hash)) {
                            metrics.mismatch.increment();
                            throw new KeyReusedWithDifferentRequestException(scope, key);
                        }
                        if (state.equals("completed")) {
                            return new Claim(scope, key, 0,
                                    new StoredResponse(rs.getInt(4), IdempotencySql.headers(rs.getString(5)), rs.getBytes(6)));
                        }
                        OffsetDateTime lockedUntil = rs.getObject(3, OffsetDateTime.class);
                        Instant at = clock.instant();
                        if (lockedUntil != null && lockedUntil.toInstant().isAfter(at)) {
                            metrics.inProgress.increment();
                            throw new RequestInProgressException(scope, key,
                                    retryAfter(at, lockedUntil.toInstant().minus(lease), lockedUntil.toInstant()));
                        }
                        continue; // the lease expired or was released meanwhile: claim again
                    }
                    byte[] tombHash = rs.getBytes(7);
                    if (tombHash != null) {
                        if (!Arrays.equals(tombHash, hash)) {
                            metrics.mismatch.increment();
                            throw new KeyReusedWithDifferentRequestException(scope, key);
                        }
                        metrics.expired.increment();
                        throw new IdempotencyKeyExpiredException(scope, key, rs.getObject(8, OffsetDateTime.class).toInstant(),
                                rs.getObject(9, OffsetDateTime.class).toInstant());
                    }
                    // Neither: the record vanished between the statements (purged without tombstone); claim again.
                }
            }
        }
        return gaveUp(scope, key);
    }

    /** Gives up on a key whose claims kept slipping away: 409, retry shortly. */
    public <T> T gaveUp(String scope, String key) {
        metrics.inProgress.increment();
        throw new RequestInProgressException(scope, key, retryAfter);
    }

    /**
     * Runs the work of a held {@code claim} in {@code tx} and ends the claim (see the class comment). The work's
     * own failure is rethrown as it is, after the rollback and the release.
     *
     * @throws CommitOutcomeUnknownException the connection failed during the commit: retry with the same key
     */
    public Outcome run(Claim claim, WorkTransaction tx, Work work) throws Exception {
        if (!claim.held()) {
            throw new IllegalArgumentException(claim + " is a replay of a stored outcome, not a claim: send the replay");
        }
        Optional<StoredResponse> response;
        Instant start = clock.instant();
        try {
            response = work.run();
        } catch (TerminalFailureException terminal) {
            metrics.work.record(Duration.between(start, clock.instant()));
            tx.rollback(terminal);
            return storeAlone(claim, tx, terminal.response());
        } catch (Throwable t) {
            metrics.work.record(Duration.between(start, clock.instant()));
            tx.rollback(t);
            release(claim, tx, t);
            throw t;
        }
        metrics.work.record(Duration.between(start, clock.instant()));
        if (response.isEmpty()) {
            tx.rollback(null);
            release(claim, tx, null);
            return new Outcome(Ending.RELEASED, null);
        }
        StoredResponse stored = response.get();
        RoundTrip completion = new RoundTrip().add(sql.completeInPipeline,
                (ps, i) -> bindCompletion(ps, i, claim, stored));
        try {
            tx.commit(completion);
        } catch (CommitOutcomeUnknownException unknown) {
            metrics.unknown.increment();
            throw new CommitOutcomeUnknownException("the connection failed while committing the work of idempotency key '"
                    + claim.key() + "' in scope '" + claim.scope() + "', so it may or may not have committed. Retry with the "
                    + "same key: if it committed, the stored response is replayed; if not, retries get "
                    + "RequestInProgressException until the claim's lease (" + lease + ") expires, then the work runs again",
                    unknown.getCause());
        } catch (SQLException | RuntimeException e) {
            if (e instanceof SQLException s && IdempotencySql.isClaimLost(s)) {
                return lost(claim);
            }
            release(claim, tx, e);
            throw e;
        }
        metrics.executed.increment();
        return new Outcome(Ending.EXECUTED, stored);
    }

    /** A terminal failure: its response is the key's outcome, stored without the work's effect. */
    private Outcome storeAlone(Claim claim, WorkTransaction tx, StoredResponse response) throws SQLException {
        int updated;
        try {
            updated = tx.alone(c -> {
                try (PreparedStatement ps = c.prepareStatement(sql.complete)) {
                    bindCompletion(ps, 1, claim, response);
                    return ps.executeUpdate();
                }
            });
        } catch (SQLException e) {
            release(claim, tx, e);
            throw e;
        }
        if (updated == 0) {
            return lost(claim);
        }
        metrics.terminal.increment();
        return new Outcome(Ending.TERMINAL, response);
    }

    private Outcome lost(Claim claim) {
        metrics.claimsLost.increment();
        log.info("idempotency key '{}' in scope '{}': attempt {} lost its claim to a later attempt (its lease of {} "
                + "expired); its work was rolled back", claim.key(), claim.scope(), claim.attempt(), lease);
        return new Outcome(Ending.CLAIM_LOST, null);
    }

    /** Releases the claim so the next retry runs at once; if that fails, the lease expires on its own. */
    private void release(Claim claim, WorkTransaction tx, Throwable cause) {
        metrics.failed.increment();
        try {
            tx.alone(c -> {
                try (PreparedStatement ps = c.prepareStatement(sql.release)) {
                    IdempotencySql.bindKey(ps, claim.scope(), claim.key(), claim.attempt());
                    return ps.executeUpdate();
                }
            });
        } catch (SQLException e) {
            if (cause != null) {
                cause.addSuppressed(e);
            }
            log.warn("could not release the claim of idempotency key '{}' in scope '{}' after its work failed ({}); "
                    + "retries get 409 until its lease expires (at most {})", claim.key(), claim.scope(), e.getMessage(), lease);
        }
    }

    private int bindCompletion(PreparedStatement ps, int i, Claim claim, StoredResponse r) throws SQLException {
        return IdempotencySql.bindCompletion(ps, i, claim.scope(), claim.key(), claim.attempt(), r.status(), r.headers(),
                r.body(), clock.instant());
    }

    /**
     * When a retry should come back while the claim taken at {@code claimedAt} still runs: about as long
     * again as it has run (a request that took 300 ms so far is likely done soon, one at 8 s may need
     * another 8), at least {@link #retryAfter}, at most the rest of the lease (after it a retry may take
     * the key over). Whole seconds, at least 1: HTTP's Retry-After counts seconds. {@code claimedAt} is
     * derived from {@code locked_until} and this instance's lease; instances with other leases only skew it.
     */
    private Duration retryAfter(Instant now, Instant claimedAt, Instant lockedUntil) {
        Duration running = Duration.between(claimedAt, now);
        Duration rest = Duration.between(now, lockedUntil);
        Duration wait = running.compareTo(retryAfter) < 0 ? retryAfter : running;
        if (wait.compareTo(rest) > 0) {
            wait = rest;
        }
        long millis = wait.toMillis();
        return Duration.ofSeconds(Math.max(1, (millis + 999) / 1000));
    }

    /** Puts back the autocommit a connection had when the caller got it. */
    public static void restoreAutoCommit(Connection c, boolean autoCommit) {
        try {
            if (!c.isClosed() && c.getAutoCommit() != autoCommit) {
                c.setAutoCommit(autoCommit);
            }
        } catch (SQLException e) {
            log.debug("could not restore autocommit on a failed connection; the pool will discard it", e);
        }
    }

    /** @throws IllegalArgumentException naming {@code what} and the rule it breaks */
    public static void requireName(String what, String value, int maxLength, String meaning) {
        if (value == null || value.isBlank()) {
            throw new IllegalArgumentException(what + " must not be blank: it is " + meaning);
        }
        if (value.length() > maxLength) {
            throw new IllegalArgumentException(what + " is " + value.length() + " characters long; at most " + maxLength
                    + " are allowed");
        }
        for (int i = 0; i < value.length(); i++) {
            char ch = value.charAt(i);
            if (ch < 0x20 || ch == 0x7f) {
                throw new IllegalArgumentException(what + " must not contain control characters");
            }
        }
    }
}
