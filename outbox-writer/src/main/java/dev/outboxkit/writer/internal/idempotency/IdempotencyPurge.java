package dev.outboxkit.writer.internal.idempotency;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Not API: public for {@code dev.outboxkit.writer.IdempotencyKeys} and {@link IdempotencyEngine}.
 *
 * <p>Deletes keys older than their scope's retention window, in batches of 5000 (each
 * its own statement, so each its own transaction with autocommit on), keeping a tombstone of each
 * (scope, key, request hash, outcome hash) unless tombstones are off. Claims whose lease is still
 * running are kept; {@code SKIP LOCKED} steps over keys a request holds at the moment.
 */
public final class IdempotencyPurge {

    static final int BATCH = 5000;

    private final Duration retention;
    private final Map<String, Duration> scopeRetention;
    private final boolean keepTombstones;
    private final String sql;

    public IdempotencyPurge(String schema, Duration retention, Map<String, Duration> scopeRetention,
                            boolean keepTombstones) {
        this.retention = retention;
        this.scopeRetention = Collections.unmodifiableMap(new LinkedHashMap<>(scopeRetention));
        this.keepTombstones = keepTombstones;
        this.sql = sql(IdempotencySql.keys(schema), IdempotencySql.tombstones(schema), this.scopeRetention, keepTombstones);
    }

    /** Purges on {@code c} (autocommit on) until a batch comes back short; returns how many keys went. */
    public int purge(Connection c, Instant now) throws SQLException {
        int total = 0;
        int purged;
        do {
            try (PreparedStatement ps = c.prepareStatement(sql)) {
                bind(ps, now);
                purged = ps.executeUpdate();
            }
            total += purged;
        } while (purged == BATCH);
        return total;
    }

    private static String sql(String keys, String tombstones, Map<String, Duration> scopeRetention, boolean keepTombstones) {
        StringBuilder cutoff = new StringBuilder();
        if (scopeRetention.isEmpty()) {
            cutoff.append("?::timestamptz");
        } else {
            cutoff.append("CASE k.scope");
            scopeRetention.keySet().forEach(s -> cutoff.append(" WHEN ?::text THEN ?::timestamptz"));
            cutoff.append(" ELSE ?::timestamptz END");
        }
        String victims = "WITH victims AS (\n"
                + "  SELECT k.scope, k.idem_key FROM " + keys + " k\n"
                + "   WHERE k.created_at < ?::timestamptz AND k.created_at < " + cutoff + "\n"
                + "     AND (k.state <> 'in_progress' OR k.locked_until IS NULL OR k.locked_until <= ?::timestamptz)\n"
                + "   ORDER BY k.created_at LIMIT " + BATCH + " FOR UPDATE SKIP LOCKED)";
        if (!keepTombstones) {
            return victims + "\nDELETE FROM " + keys + " k USING victims v WHERE k.scope = v.scope AND k.idem_key = v.idem_key";
        }
        return victims + ",\npurged AS (\n"
                + "  DELETE FROM " + keys + " k USING victims v WHERE k.scope = v.scope AND k.idem_key = v.idem_key\n"
                + "  RETURNING k.scope, k.idem_key, k.request_hash, k.state, k.response_status, k.response_headers,"
                + " k.response_body, k.created_at)\n"
                + "INSERT INTO " + tombstones + " (scope, idem_key, request_hash, outcome_hash, created_at, purged_at)\n"
                + "SELECT scope, idem_key, request_hash,\n"
                // outcome hash: SHA-256 of "<status>\n<headers jsonb>\n" followed by the body bytes
                + "       CASE WHEN state = 'completed' THEN pg_catalog.sha256(pg_catalog.convert_to(response_status::text"
                + " || E'\\n' || COALESCE(response_headers::text, '{}') || E'\\n', 'UTF8') || COALESCE(response_body, ''::bytea))"
                + " END,\n"
                + "       created_at, ?::timestamptz\n"
                + "  FROM purged\n"
                + "ON CONFLICT (scope, idem_key) DO UPDATE SET request_hash = EXCLUDED.request_hash,"
                + " outcome_hash = EXCLUDED.outcome_hash, created_at = EXCLUDED.created_at, purged_at = EXCLUDED.purged_at";
    }

    private void bind(PreparedStatement ps, Instant now) throws SQLException {
        Instant defaultCutoff = now.minus(retention);
        Instant latestCutoff = defaultCutoff;
        for (Duration d : scopeRetention.values()) {
            Instant cutoff = now.minus(d);
            if (cutoff.isAfter(latestCutoff)) {
                latestCutoff = cutoff;
            }
        }
        int i = 1;
        ps.setObject(i++, IdempotencySql.utc(latestCutoff));
        for (Map.Entry<String, Duration> e : scopeRetention.entrySet()) {
            ps.setString(i++, e.getKey());
            ps.setObject(i++, IdempotencySql.utc(now.minus(e.getValue())));
        }
        ps.setObject(i++, IdempotencySql.utc(defaultCutoff));
        ps.setObject(i++, IdempotencySql.utc(now));
        if (keepTombstones) {
            ps.setObject(i, IdempotencySql.utc(now));
        }
    }
}
