package dev.outboxkit.benchmarks.load;

import dev.outboxkit.core.EventIds;
import dev.outboxkit.core.Identifiers;
import dev.outboxkit.testkit.TestDatabase;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyIn;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A pre-filled {@code outbox_event} backlog, the same for every drain measurement: {@code n}
 * {@link SyntheticEvents} rows written with COPY, then vacuumed, analysed and checkpointed so
 * that no drain pays for the load's hint bits, statistics or a checkpoint that the load caused.
 */
public final class Backlog {

    private static final Logger log = LoggerFactory.getLogger(Backlog.class);
    private static final int ROWS_PER_FLUSH = 10_000;

    private Backlog() {
    }

    /** Fills {@code schema.outbox_event} of {@code db} with {@code n} rows of {@code payloadBytes}. */
    public static void fill(TestDatabase db, String schema, int n, int payloadBytes) throws SQLException {
        String table = Identifiers.qualified(schema, "outbox_event");
        long start = System.nanoTime();
        copy(db, schema, n, payloadBytes);
        try (Connection c = db.connect(); Statement s = c.createStatement()) {
            s.execute("VACUUM (ANALYZE) " + table);
            s.execute("CHECKPOINT");
        }
        log.info("backlog: {} rows of {} B in {} ms", n, payloadBytes, (System.nanoTime() - start) / 1_000_000);
    }

    /**
     * Writes {@code n} rows of {@code payloadBytes} with one COPY, in one transaction, and nothing
     * else: for a WAL relay that streams the rows as they commit (no vacuum or checkpoint after).
     */
    public static void copy(TestDatabase db, String schema, int n, int payloadBytes) throws SQLException {
        String table = Identifiers.qualified(schema, "outbox_event");
        try (Connection c = db.connect()) {
            CopyIn copy = c.unwrap(PGConnection.class).getCopyAPI().copyIn(
                    "COPY " + table + " (id, aggregate_type, aggregate_id, event_type, payload) FROM STDIN");
            try {
                StringBuilder rows = new StringBuilder();
                for (int i = 0; i < n; i++) {
                    // COPY text format: tab-separated; our values hold no tab, newline or backslash.
                    rows.append(EventIds.next()).append('\t').append(SyntheticEvents.AGGREGATE_TYPE).append('\t')
                            .append(SyntheticEvents.aggregateId(i)).append('\t').append(SyntheticEvents.EVENT_TYPE)
                            .append('\t').append(SyntheticEvents.payload(i, payloadBytes)).append('\n');
                    if ((i + 1) % ROWS_PER_FLUSH == 0 || i == n - 1) {
                        byte[] bytes = rows.toString().getBytes(StandardCharsets.UTF_8);
                        copy.writeToCopy(bytes, 0, bytes.length);
                        rows.setLength(0);
                    }
                }
                copy.endCopy();
            } finally {
                if (copy.isActive()) {
                    copy.cancelCopy();
                }
            }
        }
    }

    /** Rows left in {@code schema.outbox_event}. */
    public static long count(TestDatabase db, String schema) throws SQLException {
        try (Connection c = db.connect(); Statement s = c.createStatement();
             var rs = s.executeQuery("SELECT count(*) FROM " + Identifiers.qualified(schema, "outbox_event"))) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
