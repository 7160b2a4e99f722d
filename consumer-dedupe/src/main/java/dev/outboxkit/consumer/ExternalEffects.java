package dev.outboxkit.consumer;

import dev.outboxkit.consumer.internal.ApplyFailures;
import dev.outboxkit.core.FencedException;
import dev.outboxkit.core.Identifiers;
import dev.outboxkit.core.OutboxTables;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * Effects outside the database — an e-mail, an HTTP call to a partner — cannot join the
 * consumer's transaction, so they follow claim → do → record outcome, in table
 * {@code external_effect}:
 * <ol>
 *   <li>{@link #claim}: one row per (effect, event), committed on its own before anything is
 *       done, {@code in_progress} with a lease. A second claim (a redelivery, another instance)
 *       is told the state instead of getting the claim, so the effect is never started twice by us.</li>
 *   <li>Do it, handing {@link Claim#idempotencyKey()} (the event id) downstream as the idempotency
 *       key, so a downstream that honours keys also ignores a repeat that escaped us.</li>
 *   <li>{@link #complete} (succeeded, with the downstream's answer), {@link #fail} (a known,
 *       terminal refusal), {@link #markUnknown} (a timeout: nobody knows), or {@link #release}
 *       (known not performed, so another try may claim again).</li>
 * </ol>
 * An outcome that is never recorded — the process died mid-call — stays {@code in_progress}
 * until its lease passes, then counts as unknown. Unknown outcomes are never guessed:
 * {@link #listUnknown} shows them for reconciliation (ask the downstream with the key), and
 * {@link #resolve} records the answer. {@link #reclaim} retries an unknown effect explicitly, for
 * downstreams that deduplicate by the key. {@link #perform} does the whole sequence in one call.
 *
 * <p>Claims use their own connections from the {@code DataSource} (auto-commit), never the
 * handler's transaction: a claim must survive a rollback of the handler. Outcomes are fenced by
 * the claim's attempt number, so a holder whose claim was taken over cannot overwrite the newer
 * attempt's outcome ({@link FencedException}).
 */
public final class ExternalEffects {

    /** What is stored for an effect. */
    public enum State { IN_PROGRESS, SUCCEEDED, FAILED, UNKNOWN }

    /** The answer to a claim. */
    public enum ClaimStatus {
        /** This caller holds the claim now: perform the effect, then record the outcome. */
        ACQUIRED,
        /** Someone else holds a live claim: do not perform; try again after its lease. */
        IN_PROGRESS,
        /** Already done; {@link Claim#outcome()} holds the downstream's answer. */
        SUCCEEDED,
        /** Already refused for good; {@link Claim#error()} says why. */
        FAILED,
        /** Tried, outcome unknown (or its lease passed without an outcome): reconcile, do not repeat blindly. */
        UNKNOWN
    }

    /**
     * A claim's answer.
     *
     * @param attempt    the claim number the outcome must be recorded under
     * @param leaseUntil until when an in-progress claim is held
     */
    public record Claim(String effect, UUID eventId, ClaimStatus status, int attempt, Instant leaseUntil, String outcome,
                        String error) {

        public boolean acquired() {
            return status == ClaimStatus.ACQUIRED;
        }

        /** The key to hand downstream: the event id, the same for every attempt. */
        public String idempotencyKey() {
            return eventId.toString();
        }

        Claim with(ClaimStatus newStatus, String newOutcome, String newError) {
            return new Claim(effect, eventId, newStatus, attempt, leaseUntil, newOutcome, newError);
        }
    }

    /** One row of {@code external_effect}. */
    public record Entry(String effect, UUID eventId, State state, int attempt, String holder, Instant claimedAt,
                        Instant leaseUntil, Instant finishedAt, String outcome, String error) {
    }

    /** The effect itself, for {@link #perform}: returns the downstream's answer (kept as the outcome). */
    @FunctionalInterface
    public interface Call {
        String perform(String idempotencyKey) throws Exception;
    }

    /** Thrown by a {@link Call}: the downstream refused for good. Recorded as failed. */
    public static class RejectedException extends Exception {
        private static final long serialVersionUID = 1L;

        public RejectedException(String message) {
            super(message);
        }
    }

    /** Thrown by a {@link Call}: it certainly did not happen (never sent). The claim is released and this rethrown. */
    public static class NotPerformedException extends Exception {
        private static final long serialVersionUID = 1L;

        public NotPerformedException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    private static final String COLUMNS = "effect_name, event_id, state, attempt, holder, claimed_at, lease_until, "
            + "finished_at, outcome, error";

    private final DataSource dataSource;
    private final String table;
    private final Clock clock;
    private final String holder;

    private ExternalEffects(DataSource dataSource, String schema, Clock clock, String holder) {
        this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
        this.table = Identifiers.qualified(schema, OutboxTables.EXTERNAL_EFFECT);
        this.clock = Objects.requireNonNull(clock, "clock");
        if (holder == null || holder.isBlank()) {
            throw new IllegalArgumentException("holder must not be blank");
        }
        this.holder = holder;
    }

    /** Claims held as {@code <host>-<pid>}, timed by the system clock. */
    public static ExternalEffects create(DataSource dataSource, String schema) {
        return create(dataSource, schema, Clock.systemUTC(), defaultHolder());
    }

    /** @param holder names this instance in {@code external_effect.holder} */
    public static ExternalEffects create(DataSource dataSource, String schema, Clock clock, String holder) {
        return new ExternalEffects(dataSource, schema, clock, holder);
    }

    private static String defaultHolder() {
        String host = System.getenv("HOSTNAME");
        return (host == null || host.isBlank() ? "host" : host) + "-" + ProcessHandle.current().pid();
    }

    /** Claims {@code effect} for {@code eventId} for {@code lease}, or reports why not. */
    public Claim claim(String effect, UUID eventId, Duration lease) throws SQLException {
        requireEffect(effect);
        Objects.requireNonNull(eventId, "eventId");
        requireLease(lease);
        try (Connection c = connection(); PreparedStatement ps = c.prepareStatement("INSERT INTO " + table
                + " (effect_name, event_id, state, attempt, holder, claimed_at, lease_until)"
                + " VALUES (?, ?, 'in_progress', 1, ?, ?, ?) ON CONFLICT (effect_name, event_id) DO NOTHING RETURNING attempt")) {
            while (true) {
                Instant now = clock.instant();
                Instant until = now.plus(lease);
                ps.setString(1, effect);
                ps.setObject(2, eventId);
                ps.setString(3, holder);
                ps.setTimestamp(4, Timestamp.from(now));
                ps.setTimestamp(5, Timestamp.from(until));
                try (ResultSet rs = ps.executeQuery()) {
                    if (rs.next()) {
                        return new Claim(effect, eventId, ClaimStatus.ACQUIRED, rs.getInt(1), until, null, null);
                    }
                }
                Claim current = existing(c, effect, eventId, now);
                if (current != null) {
                    return current;
                }
                // released between our insert and our read: claim again
            }
        }
    }

    /**
     * Takes over an effect whose outcome is unknown (marked so, or in progress past its lease),
     * as a new attempt with the same idempotency key. Only for downstreams that deduplicate by
     * that key; anything else needs reconciliation first.
     */
    public Claim reclaim(String effect, UUID eventId, Duration lease) throws SQLException {
        requireEffect(effect);
        Objects.requireNonNull(eventId, "eventId");
        requireLease(lease);
        Instant now = clock.instant();
        Instant until = now.plus(lease);
        try (Connection c = connection(); PreparedStatement ps = c.prepareStatement("UPDATE " + table
                + " SET state = 'in_progress', attempt = attempt + 1, holder = ?, claimed_at = ?, lease_until = ?,"
                + " finished_at = NULL, error = NULL"
                + " WHERE effect_name = ? AND event_id = ?"
                + " AND (state = 'unknown' OR (state = 'in_progress' AND lease_until <= ?)) RETURNING attempt")) {
            ps.setString(1, holder);
            ps.setTimestamp(2, Timestamp.from(now));
            ps.setTimestamp(3, Timestamp.from(until));
            ps.setString(4, effect);
            ps.setObject(5, eventId);
            ps.setTimestamp(6, Timestamp.from(now));
            try (ResultSet rs = ps.executeQuery()) {
                if (rs.next()) {
                    return new Claim(effect, eventId, ClaimStatus.ACQUIRED, rs.getInt(1), until, null, null);
                }
            }
            Claim current = existing(c, effect, eventId, now);
            if (current == null) {
                throw new IllegalStateException("no claim of effect " + effect + " for event " + eventId + " to take over; "
                        + "use claim()");
            }
            return current;
        }
    }

    /** Records success with the downstream's answer. @throws FencedException when the claim was taken over or resolved */
    public void complete(Claim claim, String outcome) throws SQLException {
        finish(claim, "succeeded", outcome, null);
    }

    /** Records a known, terminal refusal. @throws FencedException when the claim was taken over or resolved */
    public void fail(Claim claim, String error) throws SQLException {
        finish(claim, "failed", null, error);
    }

    /** Records that nobody knows whether it happened (a timeout): left for reconciliation. */
    public void markUnknown(Claim claim, String error) throws SQLException {
        finish(claim, "unknown", null, error);
    }

    /** Forgets a claim whose effect certainly did not happen, so a later try can claim it again. */
    public void release(Claim claim) throws SQLException {
        requireHeld(claim);
        try (Connection c = connection(); PreparedStatement ps = c.prepareStatement("DELETE FROM " + table
                + " WHERE effect_name = ? AND event_id = ? AND attempt = ? AND state = 'in_progress'")) {
            updateHeld(ps, 1, claim);
        }
    }

    /**
     * Reconciliation's verdict after asking the downstream: {@code SUCCEEDED} or {@code FAILED},
     * whatever the stored state.
     */
    public void resolve(String effect, UUID eventId, State state, String outcomeOrError) throws SQLException {
        requireEffect(effect);
        if (state != State.SUCCEEDED && state != State.FAILED) {
            throw new IllegalArgumentException("resolve records a verdict: SUCCEEDED or FAILED, got " + state);
        }
        try (Connection c = connection(); PreparedStatement ps = c.prepareStatement("UPDATE " + table
                + " SET state = ?, finished_at = ?, outcome = ?, error = ? WHERE effect_name = ? AND event_id = ?")) {
            boolean ok = state == State.SUCCEEDED;
            ps.setString(1, ok ? "succeeded" : "failed");
            ps.setTimestamp(2, Timestamp.from(clock.instant()));
            ps.setString(3, ok ? outcomeOrError : null);
            ps.setString(4, ok ? null : outcomeOrError);
            ps.setString(5, effect);
            ps.setObject(6, eventId);
            if (ps.executeUpdate() == 0) {
                throw new IllegalStateException("no claim of effect " + effect + " for event " + eventId + " to resolve");
            }
        }
    }

    /** {@link #listUnknown(int)} with a limit of 100. */
    public List<Entry> listUnknown() throws SQLException {
        return listUnknown(100);
    }

    /** Effects whose outcome is unknown (marked, or in progress past the lease), oldest first, at most {@code limit}. */
    public List<Entry> listUnknown(int limit) throws SQLException {
        if (limit < 1) {
            throw new IllegalArgumentException("limit must be at least 1, got " + limit);
        }
        try (Connection c = connection(); PreparedStatement ps = c.prepareStatement("SELECT " + COLUMNS + " FROM " + table
                + " WHERE state = 'unknown' OR (state = 'in_progress' AND lease_until <= ?)"
                + " ORDER BY claimed_at, effect_name, event_id LIMIT ?")) {
            ps.setTimestamp(1, Timestamp.from(clock.instant()));
            ps.setInt(2, limit);
            List<Entry> out = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(entry(rs, clock.instant()));
                }
            }
            return out;
        }
    }

    /** The stored row, or null. */
    public Entry find(String effect, UUID eventId) throws SQLException {
        try (Connection c = connection(); PreparedStatement ps = c.prepareStatement("SELECT " + COLUMNS + " FROM " + table
                + " WHERE effect_name = ? AND event_id = ?")) {
            ps.setString(1, effect);
            ps.setObject(2, eventId);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? entry(rs, clock.instant()) : null;
            }
        }
    }

    /**
     * Claim → call → record, in one go. Returns the final claim: {@code SUCCEEDED} (this call
     * did it, or an earlier one had), {@code FAILED}, {@code UNKNOWN} (the call threw something
     * other than the two exceptions below, or an earlier attempt's outcome is unknown: reconcile)
     * or {@code IN_PROGRESS} (someone else is at it: retry the event later if you must wait).
     *
     * @throws NotPerformedException when the call says it did not happen (claim released)
     */
    public Claim perform(String effect, UUID eventId, Duration lease, Call call) throws SQLException, NotPerformedException {
        Objects.requireNonNull(call, "call");
        Claim claim = claim(effect, eventId, lease);
        if (!claim.acquired()) {
            return claim;
        }
        String outcome;
        try {
            outcome = call.perform(claim.idempotencyKey());
        } catch (RejectedException e) {
            fail(claim, e.getMessage());
            return claim.with(ClaimStatus.FAILED, null, e.getMessage());
        } catch (NotPerformedException e) {
            release(claim);
            throw e;
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            String why = ApplyFailures.describe(e);
            markUnknown(claim, why);
            return claim.with(ClaimStatus.UNKNOWN, null, why);
        }
        complete(claim, outcome);
        return claim.with(ClaimStatus.SUCCEEDED, outcome, null);
    }

    // ---------------------------------------------------------------------------------------------

    private void finish(Claim claim, String state, String outcome, String error) throws SQLException {
        requireHeld(claim);
        try (Connection c = connection(); PreparedStatement ps = c.prepareStatement("UPDATE " + table
                + " SET state = ?, finished_at = ?, outcome = ?, error = ?"
                + " WHERE effect_name = ? AND event_id = ? AND attempt = ? AND state IN ('in_progress', 'unknown')")) {
            ps.setString(1, state);
            ps.setTimestamp(2, Timestamp.from(clock.instant()));
            ps.setString(3, outcome);
            ps.setString(4, error);
            updateHeld(ps, 5, claim);
        }
    }

    /** Binds the claim's key and attempt from parameter {@code first} on and runs; no row means we no longer hold it. */
    private static void updateHeld(PreparedStatement ps, int first, Claim claim) throws SQLException {
        ps.setString(first, claim.effect());
        ps.setObject(first + 1, claim.eventId());
        ps.setInt(first + 2, claim.attempt());
        if (ps.executeUpdate() == 0) {
            throw fenced(claim);
        }
    }

    private Claim existing(Connection c, String effect, UUID eventId, Instant now) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT " + COLUMNS + " FROM " + table
                + " WHERE effect_name = ? AND event_id = ?")) {
            ps.setString(1, effect);
            ps.setObject(2, eventId);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return null;
                }
                Entry e = entry(rs, now);
                ClaimStatus status = switch (e.state()) {
                    case IN_PROGRESS -> ClaimStatus.IN_PROGRESS;
                    case SUCCEEDED -> ClaimStatus.SUCCEEDED;
                    case FAILED -> ClaimStatus.FAILED;
                    case UNKNOWN -> ClaimStatus.UNKNOWN;
                };
                return new Claim(effect, eventId, status, e.attempt(), e.leaseUntil(), e.outcome(), e.error());
            }
        }
    }

    /** A row; an in-progress claim past its lease reads as UNKNOWN. */
    private static Entry entry(ResultSet rs, Instant now) throws SQLException {
        State state = State.valueOf(rs.getString("state").toUpperCase(Locale.ROOT));
        Instant leaseUntil = rs.getTimestamp("lease_until").toInstant();
        if (state == State.IN_PROGRESS && !leaseUntil.isAfter(now)) {
            state = State.UNKNOWN;
        }
        Timestamp finished = rs.getTimestamp("finished_at");
        return new Entry(rs.getString("effect_name"), rs.getObject("event_id", UUID.class), state, rs.getInt("attempt"),
                rs.getString("holder"), rs.getTimestamp("claimed_at").toInstant(), leaseUntil,
                finished == null ? null : finished.toInstant(), rs.getString("outcome"), rs.getString("error"));
    }

    private static FencedException fenced(Claim claim) {
        return new FencedException("attempt " + claim.attempt() + " of effect " + claim.effect() + " for event "
                + claim.eventId() + " no longer holds the claim (it was taken over, released or resolved); its outcome "
                + "was not recorded");
    }

    private static void requireHeld(Claim claim) {
        Objects.requireNonNull(claim, "claim");
        if (!claim.acquired()) {
            throw new IllegalArgumentException("claim of " + claim.effect() + " for event " + claim.eventId() + " is "
                    + claim.status() + ", not ACQUIRED: there is no outcome of ours to record");
        }
    }

    private static void requireEffect(String effect) {
        if (effect == null || effect.isBlank()) {
            throw new IllegalArgumentException("effect name must not be blank");
        }
    }

    private static void requireLease(Duration lease) {
        if (lease == null || lease.isNegative() || lease.isZero()) {
            throw new IllegalArgumentException("lease must be positive, got " + lease);
        }
    }

    private Connection connection() throws SQLException {
        Connection c = dataSource.getConnection();
        if (!c.getAutoCommit()) {
            c.setAutoCommit(true);
        }
        return c;
    }
}
