package dev.outboxkit.writer;

import com.fasterxml.jackson.databind.JsonNode;
import dev.outboxkit.core.Identifiers;
import dev.outboxkit.core.spi.GrantsOnce;
import dev.outboxkit.core.spi.RoleGrants;
import dev.outboxkit.writer.internal.CanonicalJson;
import dev.outboxkit.writer.internal.WriteFailures;
import dev.outboxkit.writer.internal.idempotency.IdempotencyMetrics;
import dev.outboxkit.writer.internal.idempotency.IdempotencyPurge;
import dev.outboxkit.writer.spi.IdempotencyEngine;
import dev.outboxkit.writer.spi.RoundTrip;
import dev.outboxkit.writer.spi.WorkTransaction;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
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
    public static final int MAX_KEY_LENGTH = IdempotencyEngine.MAX_KEY_LENGTH;
    public static final int MAX_SCOPE_LENGTH = IdempotencyEngine.MAX_SCOPE_LENGTH;

    private final String schema;
    private final Duration lease;
    private final Duration retryAfter;
    private final Duration retention;
    private final Map<String, Duration> scopeRetention;
    private final boolean keepTombstones;
    private final Clock clock;
    private final OutboxWriter writer;
    private final IdempotencyMetrics metrics;
    private final IdempotencyEngine engine;
    private final IdempotencyPurge purge;

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
        this.purge = new IdempotencyPurge(schema, retention, scopeRetention, keepTombstones);
        GrantsOnce grants = new GrantsOnce(RoleGrants.idempotencyKeys(schema), "idempotency keys (schema " + schema + ")");
        // Once per instance, before the first claim: the key tables' privileges (outbox-writer/README.md) and then
        // the writer's own, so a missing grant stops the first request before any key is claimed.
        this.engine = new IdempotencyEngine(schema, lease, retryAfter, clock, metrics, c -> {
            grants.require(c);
            writer.requireGrants(c);
        });
    }

    public static Builder builder() {
        return new Builder();
    }

    /**
     * The engine behind these keys, for an integration that runs requests on it (the Spring filter), as JDBC's
     * {@code Wrapper.unwrap}: {@code type} is {@code dev.outboxkit.writer.spi.IdempotencyEngine}, which is not API.
     *
     * @throws IllegalArgumentException for any other type
     */
    public <T> T unwrap(Class<T> type) {
        if (type.isInstance(engine)) {
            return type.cast(engine);
        }
        throw new IllegalArgumentException("IdempotencyKeys unwraps to " + IdempotencyEngine.class.getName() + " only, not " + type.getName());
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

    /**
     * Runs {@code work} once per (scope, key), or replays its stored response. See the class
     * documentation for the protocol. The work gets the connection (autocommit off) and an
     * {@link OutboxTransaction}: its effect, the events it adds, the key's completion and the
     * COMMIT go in one round trip after it returns the {@link StoredResponse} to store. It must not
     * commit, roll back or change autocommit. Throw {@link TerminalFailureException} to store a
     * known, final failure; any other exception rolls back and releases the key so a retry can run.
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
                                    TransactionWork<StoredResponse> work) throws SQLException {
        return run(dataSource, scope, key, requestHash(canonicalRequestJson), work);
    }

    /** {@link #execute(DataSource, String, String, String, TransactionWork)} with the request as a Jackson tree. */
    public IdempotentResult execute(DataSource dataSource, String scope, String key, JsonNode request,
                                    TransactionWork<StoredResponse> work) throws SQLException {
        return run(dataSource, scope, key, CanonicalJson.sha256(Objects.requireNonNull(request, "request")), work);
    }

    /** {@link #execute(DataSource, String, String, String, TransactionWork)} with a request hashed as it is (not JSON). */
    public IdempotentResult execute(DataSource dataSource, String scope, String key, byte[] request,
                                    TransactionWork<StoredResponse> work) throws SQLException {
        return run(dataSource, scope, key, CanonicalJson.sha256(Objects.requireNonNull(request, "request")), work);
    }

    /** The library's adapter over the engine: claim and work on one connection, the work's commit pipelined. */
    private IdempotentResult run(DataSource dataSource, String scope, String key, byte[] hash,
                                 TransactionWork<StoredResponse> work) throws SQLException {
        Objects.requireNonNull(dataSource, "dataSource");
        Objects.requireNonNull(work, "work");
        IdempotencyEngine.requireValid(scope, key);
        try (Connection c = dataSource.getConnection()) {
            boolean autoCommit = c.getAutoCommit();
            try {
                for (int round = 1; round <= IdempotencyEngine.maxRounds(); round++) {
                    IdempotencyEngine.Claim claim = engine.claim(c, scope, key, hash);
                    if (!claim.held()) {
                        return new IdempotentResult(claim.replay(), true);
                    }
                    IdempotencyEngine.Outcome outcome = runWork(dataSource, c, claim, work);
                    if (outcome.ending() != IdempotencyEngine.Ending.CLAIM_LOST) {
                        return new IdempotentResult(outcome.response(), false);
                    }
                }
                return engine.gaveUp(scope, key);
            } finally {
                IdempotencyEngine.restoreAutoCommit(c, autoCommit);
            }
        }
    }

    private IdempotencyEngine.Outcome runWork(DataSource dataSource, Connection c, IdempotencyEngine.Claim claim,
                                              TransactionWork<StoredResponse> work) throws SQLException {
        c.setAutoCommit(false);
        OutboxTransaction tx = new OutboxTransaction(writer, c);
        try {
            return engine.run(claim, new Transaction(dataSource, c, tx), () -> {
                StoredResponse response = work.run(c, tx);
                if (response == null) {
                    throw new IllegalStateException("the idempotent work returned null; return the StoredResponse to store "
                            + "and replay to retries");
                }
                if (!tx.isOpen()) {
                    throw new IllegalStateException("the idempotent work committed or rolled back its OutboxTransaction; "
                            + "leave that to IdempotencyKeys, which commits the work with the key's completion");
                }
                return Optional.of(response);
            });
        } catch (SQLException e) {
            throw e;
        } catch (Exception e) {
            throw WriteFailures.rethrow(e, "the work for idempotency key '" + claim.key() + "' in scope '" + claim.scope()
                    + "' failed; its claim was released so a retry can run");
        }
    }

    /** The work's transaction: the caller's connection, committed with the completion in the writer's round trip. */
    private record Transaction(DataSource dataSource, Connection c, OutboxTransaction tx) implements WorkTransaction {

        @Override
        public void commit(RoundTrip completion) throws SQLException {
            tx.commit(completion);
        }

        @Override
        public void rollback(Throwable cause) {
            tx.rollbackAfter(cause);
        }

        /** On the work's connection when it still works, else on a fresh one. */
        @Override
        public <T> T alone(WorkTransaction.KeyStatement<T> statement) throws SQLException {
            try {
                if (!c.isClosed()) {
                    c.setAutoCommit(true);
                    return statement.run(c);
                }
            } catch (SQLException e) {
                log.debug("a statement on the work's connection failed; trying a fresh one", e);
            }
            try (Connection fresh = dataSource.getConnection()) {
                fresh.setAutoCommit(true);
                return statement.run(fresh);
            }
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
                IdempotencyEngine.restoreAutoCommit(c, autoCommit);
            }
        }
        metrics.purged.increment(total);
        if (total > 0) {
            log.info("purged {} idempotency keys older than their retention window{}", total,
                    keepTombstones ? " (tombstones kept)" : "");
        }
        return total;
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

    /** The writer whose transactions carry the work's events. */
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
            IdempotencyEngine.requireName("retention scope", scope, MAX_SCOPE_LENGTH, "the scope this window applies to");
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
         * The writer for the work's events. Default: {@link WriteMode#KEEP}
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
