package dev.outboxkit.writer.internal.idempotency;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.outboxkit.core.Identifiers;
import dev.outboxkit.core.OutboxTables;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Not API: public for {@code dev.outboxkit.writer.IdempotencyKeys} and {@link IdempotencyEngine}.
 *
 * <p>The statements on {@code idempotency_key} (and its tombstones) for one validated schema, and
 * how their parameters are bound. The purge is {@link IdempotencyPurge}'s.
 */
public final class IdempotencySql {

    private static final String CLAIM_LOST = "outboxkit: idempotency claim lost";
    private static final ObjectMapper JSON = new ObjectMapper();

    /** Claims (or takes over) a key, then tells whether a purge tombstoned it meanwhile; {@link #bindClaim}. */
    public final String claim;
    /** The key's record and its tombstone, each may be missing. */
    public final String lookup;
    /** Stores the final outcome, fenced by the attempt; {@link #bindCompletion}. */
    public final String complete;
    /** {@link #complete} that fails (stopping the pipeline's COMMIT) when the claim was lost; see {@link #isClaimLost}. */
    public final String completeInPipeline;
    /** Ends a claim's lease so the next retry runs at once; {@link #bindKey}. */
    public final String release;
    /** Deletes our own claim (a purge tombstoned the key while we claimed it); {@link #bindKey}. */
    public final String dropClaim;

    public IdempotencySql(String schema) {
        String keys = keys(schema);
        String tombstones = tombstones(schema);
        this.claim = "INSERT INTO " + keys + " AS k (scope, idem_key, request_hash, state, locked_until, created_at, attempt)\n"
                + "SELECT ?, ?, ?, 'in_progress', ?, ?, 1\n"
                + " WHERE NOT EXISTS (SELECT 1 FROM " + tombstones + " t WHERE t.scope = ? AND t.idem_key = ?)\n"
                + "ON CONFLICT (scope, idem_key) DO UPDATE SET locked_until = EXCLUDED.locked_until, attempt = k.attempt + 1\n"
                + " WHERE k.state = 'in_progress' AND (k.locked_until IS NULL OR k.locked_until <= ?)"
                + " AND k.request_hash = EXCLUDED.request_hash\n"
                + "RETURNING k.attempt;\n"
                // A new statement sees a purge that committed while the INSERT waited for it.
                + "SELECT EXISTS (SELECT 1 FROM " + tombstones + " WHERE scope = ? AND idem_key = ?)";
        this.lookup = "SELECT k.state, k.request_hash, k.locked_until, k.response_status, k.response_headers::text,"
                + " k.response_body, t.request_hash, t.created_at, t.purged_at\n"
                + "  FROM (SELECT ?::text AS scope, ?::text AS idem_key) q\n"
                + "  LEFT JOIN " + keys + " k ON k.scope = q.scope AND k.idem_key = q.idem_key\n"
                + "  LEFT JOIN " + tombstones + " t ON t.scope = q.scope AND t.idem_key = q.idem_key";
        this.complete = "UPDATE " + keys + " SET state = 'completed', locked_until = NULL, response_status = ?,"
                + " response_headers = ?::jsonb, response_body = ?, completed_at = ?\n"
                + " WHERE scope = ? AND idem_key = ? AND state = 'in_progress' AND attempt = ?";
        // In the committing pipeline the completion must stop the COMMIT when the claim was lost:
        // an error does (PostgreSQL skips the rest of the pipeline), a zero row count would not.
        this.completeInPipeline = "WITH done AS (" + complete + " RETURNING 1)\n"
                + "SELECT CASE WHEN count(*) = 1 THEN 1 ELSE ('" + CLAIM_LOST + ", ' || count(*) || ' rows matched')::int END"
                + " FROM done";
        this.release = "UPDATE " + keys + " SET locked_until = NULL"
                + " WHERE scope = ? AND idem_key = ? AND state = 'in_progress' AND attempt = ?";
        this.dropClaim = "DELETE FROM " + keys + " WHERE scope = ? AND idem_key = ? AND state = 'in_progress' AND attempt = ?";
    }

    static String keys(String schema) {
        return Identifiers.qualified(schema, OutboxTables.IDEMPOTENCY_KEY);
    }

    static String tombstones(String schema) {
        return Identifiers.qualified(schema, OutboxTables.IDEMPOTENCY_KEY_TOMBSTONE);
    }

    public static void bindClaim(PreparedStatement ps, String scope, String key, byte[] hash, Instant now, Duration lease)
            throws SQLException {
        ps.setString(1, scope);
        ps.setString(2, key);
        ps.setBytes(3, hash);
        ps.setObject(4, utc(now.plus(lease)));
        ps.setObject(5, utc(now));
        ps.setString(6, scope);
        ps.setString(7, key);
        ps.setObject(8, utc(now));
        ps.setString(9, scope);
        ps.setString(10, key);
    }

    /** Binds {@link #complete} from parameter {@code i} on; returns the next parameter index. */
    public static int bindCompletion(PreparedStatement ps, int i, String scope, String key, int attempt, int status,
                                     Map<String, String> headers, byte[] body, Instant completedAt) throws SQLException {
        ps.setInt(i, status);
        try {
            ps.setString(i + 1, JSON.writeValueAsString(headers));
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("response headers cannot be stored as JSON: " + e.getOriginalMessage(), e);
        }
        ps.setBytes(i + 2, body);
        ps.setObject(i + 3, utc(completedAt));
        ps.setString(i + 4, scope);
        ps.setString(i + 5, key);
        ps.setInt(i + 6, attempt);
        return i + 7;
    }

    public static void bindKey(PreparedStatement ps, String scope, String key, int attempt) throws SQLException {
        ps.setString(1, scope);
        ps.setString(2, key);
        ps.setInt(3, attempt);
    }

    /** The pipelined completion failed because the claim was lost to a later attempt (nothing committed). */
    public static boolean isClaimLost(SQLException e) {
        return "22P02".equals(e.getSQLState()) && e.getMessage() != null && e.getMessage().contains(CLAIM_LOST);
    }

    /** Stored response headers ({@code response_headers::text}) back as a map. */
    public static Map<String, String> headers(String json) throws SQLException {
        if (json == null || json.equals("{}")) {
            return Map.of();
        }
        try {
            Map<String, String> headers = new LinkedHashMap<>();
            JSON.readTree(json).fields().forEachRemaining(e -> headers.put(e.getKey(), e.getValue().asText()));
            return headers;
        } catch (JsonProcessingException e) {
            throw new SQLException("stored response headers are not a JSON object: " + e.getOriginalMessage(), e);
        }
    }

    static OffsetDateTime utc(Instant instant) {
        return OffsetDateTime.ofInstant(instant, ZoneOffset.UTC);
    }
}
