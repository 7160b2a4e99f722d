package dev.outboxkit.benchmarks.load;

import dev.outboxkit.core.EventIds;
import dev.outboxkit.core.Identifiers;
import dev.outboxkit.testkit.TestDatabase;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
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
        long start = System.nanoTime();
        copy(db, schema, n, payloadBytes);
        settle(db, Identifiers.qualified(schema, "outbox_event"));
        log.info("backlog: {} rows of {} B in {} ms", n, payloadBytes, (System.nanoTime() - start) / 1_000_000);
    }

    /**
     * Writes {@code n} rows of {@code payloadBytes} with one COPY, in one transaction, and nothing
     * else: for a CDC relay that streams the rows as they commit (no vacuum or checkpoint after).
     */
    public static void copy(TestDatabase db, String schema, int n, int payloadBytes) throws SQLException {
        copyLines(db, "COPY " + Identifiers.qualified(schema, "outbox_event")
                + " (id, aggregate_type, aggregate_id, event_type, payload) FROM STDIN", n, (i, row) ->
                // COPY text format: tab-separated; our values hold no tab, newline or backslash.
                row.append(EventIds.next()).append('\t').append(SyntheticEvents.AGGREGATE_TYPE).append('\t')
                        .append(SyntheticEvents.aggregateId(i)).append('\t').append(SyntheticEvents.EVENT_TYPE)
                        .append('\t').append(SyntheticEvents.payload(i, payloadBytes)));
    }

    /**
     * The same backlog for the Spring Modulith peer: {@code n} incomplete publications in its registry table
     * ({@code event_publication}), in the rows the peer itself writes: its listener id, event type, status and
     * attempt count ({@link ModulithPeer#registryRow()}), each event serialised by its own serializer; then
     * vacuumed, analysed and checkpointed like {@link #fill}.
     */
    public static void fillModulith(TestDatabase db, ModulithPeer peer, int n, int payloadBytes) throws Exception {
        long start = System.nanoTime();
        List<String> template = peer.registryRow();
        String published = OffsetDateTime.now(ZoneOffset.UTC).toString();
        List<String> events = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            events.add(peer.serializedEvent(EventIds.next(), SyntheticEvents.aggregateId(i), i,
                    SyntheticEvents.payload(i, payloadBytes)));
        }
        copyLines(db, "COPY event_publication (id, listener_id, event_type, status, completion_attempts,"
                + " serialized_event, publication_date) FROM STDIN", n, (i, row) -> {
                    row.append(UUID.randomUUID()).append('\t');
                    for (String value : template) {
                        row.append(value == null ? "\\N" : escape(value)).append('\t');
                    }
                    row.append(escape(events.get(i))).append('\t').append(published);
                });
        settle(db, "event_publication");
        log.info("Modulith backlog: {} publications of {} B in {} ms", n, payloadBytes,
                (System.nanoTime() - start) / 1_000_000);
    }

    /** One line of a COPY (text format), without its newline. */
    @FunctionalInterface
    private interface Line {
        void append(int i, StringBuilder row);
    }

    private static void copyLines(TestDatabase db, String copySql, int n, Line line) throws SQLException {
        try (Connection c = db.connect()) {
            CopyIn copy = c.unwrap(PGConnection.class).getCopyAPI().copyIn(copySql);
            try {
                StringBuilder rows = new StringBuilder();
                for (int i = 0; i < n; i++) {
                    line.append(i, rows);
                    rows.append('\n');
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

    /** COPY text format: backslash, tab, newline and carriage return escaped. */
    static String escape(String value) {
        return value.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r");
    }

    /** So that no drain pays for the load's hint bits, statistics or a checkpoint the load caused. */
    private static void settle(TestDatabase db, String table) throws SQLException {
        try (Connection c = db.connect(); Statement s = c.createStatement()) {
            s.execute("VACUUM (ANALYZE) " + table);
            s.execute("CHECKPOINT");
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
