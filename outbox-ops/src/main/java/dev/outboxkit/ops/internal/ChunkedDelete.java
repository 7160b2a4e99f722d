package dev.outboxkit.ops.internal;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import javax.sql.DataSource;

/**
 * Not API: public for {@code dev.outboxkit.ops.reconcile.IntentLedger} and
 * {@code dev.outboxkit.ops.retention.Retention}.
 *
 * <p>Deleting old rows in short transactions, so a large purge never holds locks for long.
 */
public final class ChunkedDelete {

    /** Rows per DELETE (each its own transaction). */
    public static final int CHUNK = 10_000;

    private ChunkedDelete() {
    }

    /**
     * Deletes the rows of {@code table} whose {@code timeColumn} is before {@code cutoff}, in
     * chunks of {@value #CHUNK} (each its own transaction), or only counts them.
     */
    public static long olderThan(DataSource dataSource, String table, String keyColumn, String timeColumn, Instant cutoff,
                           boolean dryRun) throws SQLException {
        String where = " WHERE " + timeColumn + " < ?";
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(true);
            if (dryRun) {
                try (PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM " + table + where)) {
                    ps.setTimestamp(1, Timestamp.from(cutoff));
                    try (ResultSet rs = ps.executeQuery()) {
                        rs.next();
                        return rs.getLong(1);
                    }
                }
            }
            long total = 0;
            try (PreparedStatement ps = c.prepareStatement("DELETE FROM " + table + " WHERE " + keyColumn + " = ANY (ARRAY("
                    + "SELECT " + keyColumn + " FROM " + table + where + " LIMIT " + CHUNK + "))")) {
                ps.setTimestamp(1, Timestamp.from(cutoff));
                int n;
                do {
                    n = ps.executeUpdate();
                    total += n;
                } while (n == CHUNK);
            }
            return total;
        }
    }
}
