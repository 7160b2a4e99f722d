package dev.outboxkit.writer;

import com.fasterxml.jackson.databind.JsonNode;
import dev.outboxkit.core.Identifiers;
import dev.outboxkit.core.OutboxTables;
import dev.outboxkit.core.internal.Grants;
import dev.outboxkit.core.internal.GrantsOnce;
import dev.outboxkit.writer.internal.CanonicalJson;
import dev.outboxkit.writer.internal.WriteFailures;
import dev.outboxkit.writer.internal.IdempotencyMetrics;
import dev.outboxkit.writer.internal.IdempotencyPurge;
import dev.outboxkit.writer.internal.IdempotencySql;
import dev.outboxkit.writer.internal.RoundTrip;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Request idempotency keys (Stripe-style): a client sends a key with each request; the first
 * request with a key runs, every retry with the same key gets the stored response instead of
 * running again. Immutable and thread-safe.
 *
 * <p>How {@link #execute} works:
 * <ol>
 *   <li><b>Claim</b> (one round trip, committed at once): a single {@code INSERT ... ON CONFLICT}
 *       under the primary key (scope, key) stores the SHA-256 of the canonical request and state
 *       {@code in_progress} with a lease ({@code locked_until = now + lease}). Never
 *       SELECT-then-INSERT: two racing requests cannot both claim. The same statement takes over
 *       a claim whose lease expired (crashed holder) or was released (transient failure), if the
 *       request is the same, and increments the key's {@code attempt} number.</li>
 *   <li>If the key was not claimed, its record decides: completed with the same request →
 *       the stored response is replayed without running the work; a different request →
 *       {@link KeyReusedWithDifferentRequestException} (HTTP 422); still in progress →
 *       {@link RequestInProgressException} with a retry-after about as long as the holder has run so
 *       far (HTTP 409, see {@link Builder#retryAfter}); purged but remembered
 *       by its tombstone → {@link IdempotencyKeyExpiredException}.</li>
 *   <li><b>Work</b> runs on the same connection with autocommit off. Its effect, its outbox
 *       events and the key's completion (status, headers, body) commit in <em>one</em>
 *       transaction; completion and COMMIT travel in one round trip together with the events
 *       buffered in the {@link OutboxTransaction}. Completion is fenced by the attempt number:
 *       a holder whose lease was taken over cannot complete, and its whole transaction rolls
 *       back, so the effect happens once even when two attempts ran.</li>
 * </ol>
 *
 * <p>Failures: {@link TerminalFailureException} from the work stores its response as the final
 * outcome (replayed later). Any other exception rolls the work back, releases the claim (so the
 * next retry runs at once) and is rethrown. A connection lost during the commit leaves the
 * outcome unknown: {@link CommitOutcomeUnknownException}; the caller retries with the same key
 * (replay if it committed; 409 until the lease expires, then a fresh run, if it did not).
 *
 * <p>Time (leases, created and purge times) comes from the injected {@link Clock}; instances
 * should keep their clocks in sync (NTP). Skew only changes when a lease is considered expired,
 * never how often the effect commits: that is guarded by the attempt fence. Use READ COMMITTED
 * (PostgreSQL's default) on the data source.
 */
public final class IdempotencyKeys {

    private static final Logger log = LoggerFactory.getLogger(IdempotencyKeys.class);

    public static final Duration DEFAULT_LEASE = Duration.ofSeconds(30);
    public static final Duration DEFAULT_RETENTION = Duration.ofHours(24);
    /** The shortest {@code Retry-After} of a request still in progress; see {@link Builder#retryAfter}. */
    public static final Duration DEFAULT_RETRY_AFTER = Duration.ofSeconds(1);
    public static final int MAX_KEY_LENGTH = 255;
    public static final int MAX_SCOPE_LENGTH = 255;

    private static final int MAX_ROUNDS = 3;

    private final String schema;
    private final Duration lease;
    private final Duration retryAfter;
    private final Duration retention;
    private final Map<String, Duration> scopeRetention;
    private final boolean keepTombstones;
    private final Clock clock;
    private final OutboxWriter writer;
    private final IdempotencyMetrics metrics;
    private final IdempotencySql sql;
    private final IdempotencyPurge purge;
    private final GrantsOnce grants;

    private IdempotencyKeys(Builder b) {
        this.schema = b.schema;
        this.lease = b.lease;
        this.retryAfter = b.retryAfter;
        this.retention = b.retention;
        this.scopeRetention = Collections.unmodifiableMap(new LinkedHashMap<>(b.scopeRetention));
        this.keepTombstones = b.keepTombstones;
        this.clock = b.clock;
        MeterRegistry registry = b.meterRegistry != null ? b.meterRegistry : new SimpleMeterRegistry();
        this.writer = b.writer != null ? b.writer : OutboxWriter.builder().schema(schema).meterRegistry(registry).build();
        this.metrics = new IdempotencyMetrics(registry);
        this.sql = new IdempotencySql(schema);
        this.purge = new IdempotencyPurge(schema, retention, scopeRetention, keepTombstones);
        this.grants = new GrantsOnce(Grants.in(schema).table(OutboxTables.IDEMPOTENCY_KEY, "SELECT", "INSERT", "UPDATE", "DELETE")
                .table(OutboxTables.IDEMPOTENCY_KEY_TOMBSTONE, "SELECT", "INSERT", "UPDATE"), "idempotency keys (schema " + schema + ")");
    }

    /**
     * Once per instance, before the first claim: the key tables' privileges (outbox-writer/README.md) and then the
     * writer's own, so a missing grant stops the first request before any key is claimed.
     */
    private void requireGrants(Connection c) throws SQLException {
        grants.require(c);
        writer.requireGrants(c);
    }

    public static Builder builder() {
        return new Builder();
    }

    /**
     * SHA-256 of the canonical form of a JSON request: member order, insignificant whitespace
     * and number spelling ({@code 1} vs {@code 1.0}) do not change it.
     *
     * @throws IllegalArgumentException when {@code json} is not one JSON value
     */
    public static byte[] requestHash(String json) {
        return CanonicalJson.sha256(CanonicalJson.parse(json));
    }

    /** SHA-256 of the canonical form of {@code request}. */
    public static byte[] requestHash(JsonNode request) {
        return CanonicalJson.sha256(Objects.requireNonNull(request, "request"));
    }

    /** SHA-256 of {@code request} as it is (for non-JSON requests; no canonicalisation). */
    public static byte[] requestHash(byte[] request) {
        return CanonicalJson.sha256(Objects.requireNonNull(request, "request"));
    }

    /**
     * Runs {@code work} once per (scope, key), or replays its stored response. See the class
     * documentation for the protocol and {@link IdempotentWork#run} for the work's contract.
     *
     * @param canonicalRequestJson the request as JSON; hashed in canonical form (see {@link #requestHash(String)})
     * @throws KeyReusedWithDifferentRequestException same key, different request (HTTP 422)
     * @throws RequestInProgressException             same key still running (HTTP 409)
     * @throws IdempotencyKeyExpiredException         late retry of a purged key (not executed)
     * @throws CommitOutcomeUnknownException          connection lost during the commit: retry with the same key
     * @throws IllegalArgumentException               blank or too long scope or key, request not JSON
     * @throws SQLException                           the work's or the database's failure (claim released)
     */
    public IdempotentResult execute(DataSource dataSource, String scope, String key, String canonicalRequestJson,
                                    IdempotentWork work) throws SQLException {
        return run(dataSource, scope, key, requestHash(canonicalRequestJson), outboxWork(work));
    }

    /** {@link #execute(DataSource, String, String, String, IdempotentWork)} with the request as a Jackson tree. */
    public IdempotentResult execute(DataSource dataSource, String scope, String key, JsonNode request, IdempotentWork work)
            throws SQLException {
        return run(dataSource, scope, key, requestHash(request), outboxWork(work));
    }

    /** {@link #execute(DataSource, String, String, String, IdempotentWork)} with a request hashed as it is. */
    public IdempotentResult execute(DataSource dataSource, String scope, String key, byte[] request, IdempotentWork work)
            throws SQLException {
        return run(dataSource, scope, key, requestHash(request), outboxWork(work));
    }

    /**
     * {@link #execute(DataSource, String, String, String, IdempotentWork)} with an
     * {@link OutboxTransaction}: its buffered events, the key's completion and the COMMIT go in
     * one round trip.
     */
    public IdempotentResult execute(DataSource dataSource, String scope, String key, String canonicalRequestJson,
                                    IdempotentOutboxWork work) throws SQLException {
        return run(dataSource, scope, key, requestHash(canonicalRequestJson), work);
    }

    /** The {@link IdempotentOutboxWork} variant with the request as a Jackson tree. */
    public IdempotentResult execute(DataSource dataSource, String scope, String key, JsonNode request,
                                    IdempotentOutboxWork work) throws SQLException {
        return run(dataSource, scope, key, requestHash(request), work);
    }

    /** The {@link IdempotentOutboxWork} variant with a request hashed as it is. */
    public IdempotentResult execute(DataSource dataSource, String scope, String key, byte[] request,
                                    IdempotentOutboxWork work) throws SQLException {
        return run(dataSource, scope, key, requestHash(request), work);
    }

    /**
     * Step 1 of the protocol for integrations that run the work in a transaction they own (the
     * Spring Boot module; everything else calls {@link #execute}): claims the key on a connection
     * of its own, committed at once. Then send {@link IdempotencyClaim#replay()} when present;
     * otherwise run the work and {@link #complete} the key in the work's transaction, or
     * {@link #release} it when the work failed and may be retried.
     *
     * @param requestHash the request's SHA-256 ({@link #requestHash(String)} and its overloads)
     * @throws KeyReusedWithDifferentRequestException same key, different request (HTTP 422)
     * @throws RequestInProgressException             same key still running (HTTP 409)
     * @throws IdempotencyKeyExpiredException         late retry of a purged key (HTTP 410)
     * @throws IllegalArgumentException               blank or too long scope or key, or a hash that is not 32 bytes
     */
    public IdempotencyClaim claim(DataSource dataSource, String scope, String key, byte[] requestHash) throws SQLException {
        Objects.requireNonNull(dataSource, "dataSource");
        requireName("scope", scope, MAX_SCOPE_LENGTH, "a namespace such as the endpoint or tenant");
        requireName("idempotency key", key, MAX_KEY_LENGTH, "a unique value per request, for example a UUID");
        if (requestHash == null || requestHash.length != 32) {
            throw new IllegalArgumentException("requestHash must be a SHA-256 (32 bytes); use IdempotencyKeys.requestHash(...)");
        }
        try (Connection c = dataSource.getConnection()) {
            requireGrants(c);
            boolean autoCommit = c.getAutoCommit();
            try {
                Claim claim = claim(c, scope, key, requestHash);
                if (claim.replay() != null) {
                    metrics.replayed.increment();
                    return new IdempotencyClaim(scope, key, 0, claim.replay());
                }
                if (claim.attempt() > 1) {
                    metrics.takeovers.increment();
                }
                return new IdempotencyClaim(scope, key, claim.attempt(), null);
            } finally {
                restoreAutoCommit(c, autoCommit);
            }
        }
    }

    /**
     * Step 2 after {@link #claim}: stores {@code response} as the key's final outcome on
     * {@code c}. With autocommit off it becomes part of the work's transaction and commits (or
     * rolls back) with it; with autocommit on it commits alone (a terminal failure whose work was
     * rolled back). Fenced by the claim's attempt number.
     *
     * @return false when the claim was lost to a later attempt (its lease expired): nothing was
     *         stored, and the work's transaction must be rolled back
     * @throws IllegalArgumentException when {@code claim} is a replay
     */
    public boolean complete(Connection c, IdempotencyClaim claim, StoredResponse response) throws SQLException {
        Objects.requireNonNull(c, "connection");
        Objects.requireNonNull(response, "response");
        requireHeld(claim);
        try (PreparedStatement ps = c.prepareStatement(sql.complete)) {
            bindCompletion(ps, claim.scope(), claim.key(), claim.attempt(), response);
            if (ps.executeUpdate() == 0) {
                metrics.claimsLost.increment();
                return false;
            }
        }
        metrics.executed.increment();
        return true;
    }

    /**
     * Step 2 when the work failed in a way a retry may fix (its transaction rolled back):
     * releases the claim so the next retry runs at once. Never throws: if the release fails, it
     * is added to {@code cause} as suppressed and the claim's lease expires on its own.
     */
    public void release(DataSource dataSource, IdempotencyClaim claim, Throwable cause) {
        requireHeld(claim);
        metrics.failed.increment();
        try (Connection c = dataSource.getConnection()) {
            boolean autoCommit = c.getAutoCommit();
            try {
                c.setAutoCommit(true);
                releaseOn(c, claim.scope(), claim.key(), claim.attempt());
            } finally {
                restoreAutoCommit(c, autoCommit);
            }
        } catch (SQLException e) {
            if (cause != null) {
                cause.addSuppressed(e);
            }
            log.warn("could not release the claim of idempotency key '{}' in scope '{}' after its work failed ({}); "
                    + "retries get 409 until its lease expires (at most {})", claim.key(), claim.scope(), e.getMessage(), lease);
        }
    }

    private static void requireHeld(IdempotencyClaim claim) {
        Objects.requireNonNull(claim, "claim");
        if (claim.attempt() < 1) {
            throw new IllegalArgumentException(claim + " is a replay of a stored outcome, not a claim: send the replay");
        }
    }

    private static IdempotentOutboxWork outboxWork(IdempotentWork work) {
        Objects.requireNonNull(work, "work");
        return (c, tx) -> work.run(c);
    }

    private IdempotentResult run(DataSource dataSource, String scope, String key, byte[] hash, IdempotentOutboxWork work)
            throws SQLException {
        Objects.requireNonNull(dataSource, "dataSource");
        Objects.requireNonNull(work, "work");
        requireName("scope", scope, MAX_SCOPE_LENGTH, "a namespace such as the endpoint or tenant");
        requireName("idempotency key", key, MAX_KEY_LENGTH, "a unique value per request, for example a UUID");
        try (Connection c = dataSource.getConnection()) {
            requireGrants(c);
            boolean autoCommit = c.getAutoCommit();
            try {
                for (int round = 1; ; round++) {
                    Claim claim = claim(c, scope, key, hash);
                    if (claim.replay() != null) {
                        metrics.replayed.increment();
                        return new IdempotentResult(claim.replay(), true);
                    }
                    if (claim.attempt() > 1) {
                        metrics.takeovers.increment();
                    }
                    IdempotentResult result = runWork(dataSource, c, scope, key, claim.attempt(), work);
                    if (result != null) {
                        return result;
                    }
                    metrics.claimsLost.increment();
                    log.info("idempotency key '{}' in scope '{}': attempt {} lost its claim to a later attempt (its lease "
                            + "of {} expired); its work was rolled back", key, scope, claim.attempt(), lease);
                    if (round >= MAX_ROUNDS) {
                        metrics.inProgress.increment();
                        throw new RequestInProgressException(scope, key, retryAfter);
                    }
                }
            } finally {
                restoreAutoCommit(c, autoCommit);
            }
        }
    }

    private static void restoreAutoCommit(Connection c, boolean autoCommit) {
        try {
            if (!c.isClosed() && c.getAutoCommit() != autoCommit) {
                c.setAutoCommit(autoCommit);
            }
        } catch (SQLException e) {
            log.debug("could not restore autocommit on a failed connection; the pool will discard it", e);
        }
    }

    /** The attempt number we hold, or the response to replay. */
    private record Claim(int attempt, StoredResponse replay) {
    }

    private Claim claim(Connection c, String scope, String key, byte[] hash) throws SQLException {
        if (!c.getAutoCommit()) {
            c.setAutoCommit(true);
        }
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
                    return new Claim(attempt, null);
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
                            return new Claim(0, new StoredResponse(rs.getInt(4), IdempotencySql.headers(rs.getString(5)), rs.getBytes(6)));
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
        metrics.inProgress.increment();
        throw new RequestInProgressException(scope, key, retryAfter);
    }

    /** The result, or null when the claim was lost to a later attempt (the work was rolled back). */
    private IdempotentResult runWork(DataSource dataSource, Connection c, String scope, String key, int attempt,
                                     IdempotentOutboxWork work) throws SQLException {
        c.setAutoCommit(false);
        OutboxTransaction tx = new OutboxTransaction(writer, c);
        StoredResponse response;
        Instant start = clock.instant();
        try {
            response = work.run(c, tx);
            if (response == null) {
                throw new IllegalStateException("the idempotent work returned null; return the StoredResponse to store "
                        + "and replay to retries");
            }
            if (!tx.isOpen()) {
                throw new IllegalStateException("the idempotent work committed or rolled back its OutboxTransaction; "
                        + "leave that to IdempotencyKeys, which commits the work with the key's completion");
            }
        } catch (TerminalFailureException terminal) {
            metrics.work.record(Duration.between(start, clock.instant()));
            tx.rollbackAfter(terminal);
            c.setAutoCommit(true);
            try (PreparedStatement ps = c.prepareStatement(sql.complete)) {
                bindCompletion(ps, scope, key, attempt, terminal.response());
                if (ps.executeUpdate() == 0) {
                    return null;
                }
            }
            metrics.terminal.increment();
            return new IdempotentResult(terminal.response(), false);
        } catch (Throwable t) {
            metrics.work.record(Duration.between(start, clock.instant()));
            tx.rollbackAfter(t);
            release(dataSource, c, scope, key, attempt, t);
            metrics.failed.increment();
            throw WriteFailures.rethrow(t, "the work for idempotency key '" + key + "' in scope '" + scope
                    + "' failed; its claim was released so a retry can run");
        }
        metrics.work.record(Duration.between(start, clock.instant()));
        RoundTrip completion = new RoundTrip().add(sql.completeInPipeline,
                (ps, i) -> bindCompletion(ps, i, scope, key, attempt, response));
        try {
            tx.commit(completion);
        } catch (CommitOutcomeUnknownException unknown) {
            metrics.unknown.increment();
            throw new CommitOutcomeUnknownException("the connection failed while committing the work of idempotency key '"
                    + key + "' in scope '" + scope + "', so it may or may not have committed. Retry with the same key: if it "
                    + "committed, the stored response is replayed; if not, retries get RequestInProgressException until the "
                    + "claim's lease (" + lease + ") expires, then the work runs again", unknown.getCause());
        } catch (SQLException e) {
            if (IdempotencySql.isClaimLost(e)) {
                return null;
            }
            release(dataSource, c, scope, key, attempt, e);
            metrics.failed.increment();
            throw e;
        }
        metrics.executed.increment();
        return new IdempotentResult(response, false);
    }

    /** Releases our claim so the next retry runs at once; if that fails, the lease expires on its own. */
    private void release(DataSource dataSource, Connection c, String scope, String key, int attempt, Throwable cause) {
        try {
            if (!c.isClosed()) {
                c.setAutoCommit(true);
                releaseOn(c, scope, key, attempt);
                return;
            }
        } catch (SQLException e) {
            log.debug("releasing the claim on the work's connection failed; trying a fresh one", e);
        }
        try (Connection fresh = dataSource.getConnection()) {
            fresh.setAutoCommit(true);
            releaseOn(fresh, scope, key, attempt);
        } catch (SQLException e) {
            cause.addSuppressed(e);
            log.warn("could not release the claim of idempotency key '{}' in scope '{}' after its work failed ({}); "
                    + "retries get 409 until its lease expires (at most {})", key, scope, e.getMessage(), lease);
        }
    }

    private void releaseOn(Connection c, String scope, String key, int attempt) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql.release)) {
            IdempotencySql.bindKey(ps, scope, key, attempt);
            ps.executeUpdate();
        }
    }

    /**
     * Deletes keys older than their scope's retention window (in batches, each its own
     * transaction), keeping a compact tombstone of each unless {@code keepTombstones(false)}.
     * Claims whose lease is still running are kept. Run it periodically (e.g. hourly).
     *
     * @return the number of keys purged
     */
    public int purgeExpired(DataSource dataSource) throws SQLException {
        Instant now = clock.instant();
        int total = 0;
        try (Connection c = dataSource.getConnection()) {
            boolean autoCommit = c.getAutoCommit();
            c.setAutoCommit(true);
            try {
                total = purge.purge(c, now);
            } finally {
                restoreAutoCommit(c, autoCommit);
            }
        }
        metrics.purged.increment(total);
        if (total > 0) {
            log.info("purged {} idempotency keys older than their retention window{}", total,
                    keepTombstones ? " (tombstones kept)" : "");
        }
        return total;
    }

    private int bindCompletion(PreparedStatement ps, int i, String scope, String key, int attempt, StoredResponse r)
            throws SQLException {
        return IdempotencySql.bindCompletion(ps, i, scope, key, attempt, r.status(), r.headers(), r.body(), clock.instant());
    }

    private void bindCompletion(PreparedStatement ps, String scope, String key, int attempt, StoredResponse r)
            throws SQLException {
        bindCompletion(ps, 1, scope, key, attempt, r);
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

    private static void requireName(String what, String value, int maxLength, String meaning) {
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

    public String schema() {
        return schema;
    }

    public Duration lease() {
        return lease;
    }

    /** The shortest {@code Retry-After} of a request still in progress. */
    public Duration retryAfter() {
        return retryAfter;
    }

    /** The retention window of {@code scope}. */
    public Duration retention(String scope) {
        return scopeRetention.getOrDefault(scope, retention);
    }

    public boolean keepTombstones() {
        return keepTombstones;
    }

    /** The writer whose transactions carry {@link IdempotentOutboxWork}'s events. */
    public OutboxWriter writer() {
        return writer;
    }

    @Override
    public String toString() {
        return "IdempotencyKeys[schema=" + schema + ", lease=" + lease + ", retryAfter=" + retryAfter + ", retention=" + retention
                + (scopeRetention.isEmpty() ? "" : ", scopeRetention=" + scopeRetention) + ", keepTombstones=" + keepTombstones + "]";
    }

    /** Configures {@link IdempotencyKeys}; {@link #build()} validates. Not thread-safe. */
    public static final class Builder {
        private String schema = OutboxWriter.DEFAULT_SCHEMA;
        private Duration lease = DEFAULT_LEASE;
        private Duration retryAfter = DEFAULT_RETRY_AFTER;
        private Duration retention = DEFAULT_RETENTION;
        private final Map<String, Duration> scopeRetention = new LinkedHashMap<>();
        private boolean keepTombstones = true;
        private Clock clock = Clock.systemUTC();
        private MeterRegistry meterRegistry;
        private OutboxWriter writer;

        private Builder() {
        }

        /** Schema holding {@code idempotency_key}. Default {@code public}. */
        public Builder schema(String schema) {
            this.schema = schema;
            return this;
        }

        /**
         * How long a claim stays exclusive. Default 30 s. Make it longer than the slowest work:
         * after it a retry may take the key over (the stale holder can then no longer commit).
         */
        public Builder lease(Duration lease) {
            this.lease = lease;
            return this;
        }

        /**
         * The shortest wait a {@link RequestInProgressException} asks for (HTTP 409 {@code Retry-After}, whole
         * seconds). Default 1 s. A retry is told to wait about as long as the key's holder has run so far, at
         * least this and at most the rest of the lease: never the whole lease, since most work ends far sooner.
         * The IETF draft "The Idempotency-Key HTTP Header Field" answers a request still being processed with
         * 409 Conflict; Retry-After is HTTP's own header (RFC 9110, section 10.2.3). From 1 s up to the lease.
         */
        public Builder retryAfter(Duration retryAfter) {
            this.retryAfter = retryAfter;
            return this;
        }

        /** How long keys are kept after their first use, for scopes without their own window. Default 24 h. */
        public Builder retention(Duration retention) {
            this.retention = retention;
            return this;
        }

        /** The retention window of one scope. */
        public Builder retention(String scope, Duration retention) {
            requireName("retention scope", scope, MAX_SCOPE_LENGTH, "the scope this window applies to");
            scopeRetention.put(scope, retention);
            return this;
        }

        /**
         * Whether {@link #purgeExpired} keeps a compact tombstone (scope, key, request hash,
         * outcome hash) of each purged key, so a late retry is recognised instead of executed
         * again. Default true.
         */
        public Builder keepTombstones(boolean keepTombstones) {
            this.keepTombstones = keepTombstones;
            return this;
        }

        /** Source of leases and timestamps. Default {@link Clock#systemUTC()}. */
        public Builder clock(Clock clock) {
            this.clock = clock;
            return this;
        }

        /** Where {@code outbox.idempotency.*} meters go. Default: a private {@link SimpleMeterRegistry}. */
        public Builder meterRegistry(MeterRegistry meterRegistry) {
            this.meterRegistry = meterRegistry;
            return this;
        }

        /**
         * The writer for {@link IdempotentOutboxWork}'s events. Default: {@link WriteMode#KEEP}
         * in the same schema, with this builder's meter registry.
         */
        public Builder writer(OutboxWriter writer) {
            this.writer = writer;
            return this;
        }

        /** @throws IllegalArgumentException naming the setting that is wrong */
        public IdempotencyKeys build() {
            Identifiers.requireValid("schema", schema);
            requirePositive("lease", lease);
            requirePositive("retention", retention);
            if (retryAfter == null || retryAfter.compareTo(Duration.ofSeconds(1)) < 0 || retryAfter.compareTo(lease) > 0) {
                throw new IllegalArgumentException("retryAfter must be from 1 s (Retry-After counts whole seconds) up to the "
                        + "lease (" + lease + "), got " + retryAfter);
            }
            if (clock == null) {
                throw new IllegalArgumentException("clock must not be null; the default is Clock.systemUTC()");
            }
            if (retention.compareTo(lease) <= 0) {
                throw new IllegalArgumentException("retention (" + retention + ") must be longer than lease (" + lease + ")");
            }
            for (Map.Entry<String, Duration> e : scopeRetention.entrySet()) {
                requirePositive("retention of scope '" + e.getKey() + "'", e.getValue());
                if (e.getValue().compareTo(lease) <= 0) {
                    throw new IllegalArgumentException("retention of scope '" + e.getKey() + "' (" + e.getValue()
                            + ") must be longer than lease (" + lease + ")");
                }
            }
            return new IdempotencyKeys(this);
        }

        private static void requirePositive(String what, Duration d) {
            if (d == null || d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException(what + " must be a positive duration, got " + d);
            }
        }
    }
}
