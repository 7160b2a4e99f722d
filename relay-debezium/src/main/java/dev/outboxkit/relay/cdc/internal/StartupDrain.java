package dev.outboxkit.relay.cdc.internal;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.OptionalLong;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes the rows already in {@code outbox_event} when the relay starts, through the same mapping
 * and the same ack-before-forget rule as the stream, in {@code seq} order (per aggregate that is commit
 * order, since writers serialise on the aggregate).
 *
 * <p>It reads in one REPEATABLE READ snapshot taken <em>after</em> the slot exists, so every
 * transaction it cannot see commits later and is in the slot's stream. Rows it published are
 * remembered ({@link Result#drainedSeqs}) until the stream passes the snapshot's WAL position, so their
 * WAL copies are not published a second time.
 */
final class StartupDrain {

    private static final Logger log = LoggerFactory.getLogger(StartupDrain.class);

    /**
     * What the drain did: the seqs it handled (published or parked), sorted, each with the WAL position its pass's
     * snapshot was taken at (every row of a pass was written before it), and {@code snapshotLsn}, the latest such
     * position. One pass at start-up; a takeover bridges Debezium's start with more passes, merged by {@link #then}.
     */
    record Result(long[] drainedSeqs, long[] drainedAt, long snapshotLsn, long published, long parked, long[] parkedSeqs) {

        /** One pass whose rows all share the snapshot {@code snapshotLsn}, none of them parked by seq. */
        Result(long[] drainedSeqs, long snapshotLsn, long published, long parked) {
            this(drainedSeqs, filled(drainedSeqs.length, snapshotLsn), snapshotLsn, published, parked, new long[0]);
        }

        /**
         * Whether a streamed insert (seq {@code seq}, written at WAL position {@code lsn}, null when unknown) is the
         * WAL copy of a row this drain already handled. The seq alone no longer says so: {@code outbox dead-letters
         * retry} puts a parked row back under its original seq, and a row the drain parked may be retried at once.
         * That insert is written after the snapshot of the pass that handled the seq, whereas every row that pass
         * saw was written before it.
         */
        boolean drained(long seq, Long lsn) {
            int at = Arrays.binarySearch(drainedSeqs, seq);
            return at >= 0 && (lsn == null || lsn < drainedAt[at]);
        }

        /**
         * Whether a later pass must skip the row {@code seq}: published by an earlier pass, its delete not committed
         * yet. A parked seq seen again is a row put back by {@code outbox dead-letters retry} (parking deletes the row
         * in the same transaction), so it is published.
         */
        boolean publishedBefore(long seq) {
            return Arrays.binarySearch(drainedSeqs, seq) >= 0 && Arrays.binarySearch(parkedSeqs, seq) < 0;
        }

        /** This pass followed by {@code later}: a seq both handled keeps the later pass's snapshot. */
        Result then(Result later) {
            int n = drainedSeqs.length;
            int m = later.drainedSeqs.length;
            long[] seqs = new long[n + m];
            long[] at = new long[n + m];
            int i = 0;
            int j = 0;
            int k = 0;
            while (i < n || j < m) {
                if (j == m || (i < n && drainedSeqs[i] < later.drainedSeqs[j])) {
                    seqs[k] = drainedSeqs[i];
                    at[k++] = drainedAt[i++];
                } else {
                    if (i < n && drainedSeqs[i] == later.drainedSeqs[j]) {
                        i++;
                    }
                    seqs[k] = later.drainedSeqs[j];
                    at[k++] = later.drainedAt[j++];
                }
            }
            long[] parkedNow = Arrays.stream(parkedSeqs).filter(s -> Arrays.binarySearch(later.drainedSeqs, s) < 0).toArray();
            long[] parkedAll = Arrays.copyOf(parkedNow, parkedNow.length + later.parkedSeqs.length);
            System.arraycopy(later.parkedSeqs, 0, parkedAll, parkedNow.length, later.parkedSeqs.length);
            Arrays.sort(parkedAll);
            return new Result(Arrays.copyOf(seqs, k), Arrays.copyOf(at, k), Math.max(snapshotLsn, later.snapshotLsn),
                    published + later.published, parked + later.parked, parkedAll);
        }

        private static long[] filled(int n, long value) {
            long[] a = new long[n];
            Arrays.fill(a, value);
            return a;
        }
    }

    private final String outboxTable;
    private final Publisher publisher;
    private final RowSink sink;
    private final int chunk;
    /** The select of the unpublished rows, built at the first pass (the schema's version decides its columns). */
    private String select;

    /** @param outboxTable the outbox table, qualified */
    StartupDrain(String outboxTable, Publisher publisher, RowSink sink, int chunk) {
        this.outboxTable = outboxTable;
        this.publisher = publisher;
        this.sink = sink;
        this.chunk = chunk;
    }

    /**
     * A WAL position {@code L} such that every transaction committing before {@code L} is visible to any
     * snapshot taken after this returns: {@code L} is read first, then the transactions that were still
     * running at that moment are waited for (a transaction becomes visible a moment after its commit
     * record is written). The drain's snapshot, taken afterwards, therefore sees everything before
     * {@code L}, and the slot may skip the WAL before it. Empty when those transactions did not end within
     * {@code maxWait} (then the slot is not moved).
     */
    static OptionalLong fastForwardPoint(Connection c, Duration maxWait, BooleanSupplier keepGoing)
            throws SQLException, InterruptedException {
        c.setAutoCommit(true);
        long lsn;
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT pg_current_wal_insert_lsn()::text")) {
            rs.next();
            lsn = Lsns.parse(rs.getString(1));
        }
        if (RunningTransactions.awaitEnded(c, maxWait, keepGoing)) {
            return OptionalLong.of(lsn);
        }
        if (keepGoing.getAsBoolean()) {
            log.info("transactions that were running at {} are still open after {}; the slot is not fast-forwarded",
                    Lsns.format(lsn), maxWait);
        }
        return OptionalLong.empty();
    }

    /** The drain at start-up: one pass over every unpublished row. */
    Result run(Connection c, BooleanSupplier keepGoing) throws SQLException, InterruptedException {
        return run(c, keepGoing, null);
    }

    /**
     * One pass over the unpublished rows in a new snapshot, skipping those {@code earlier} passes published (their
     * deletes may not be committed yet); returns this pass alone (merge it with {@link Result#then}).
     */
    Result run(Connection c, BooleanSupplier keepGoing, Result earlier) throws SQLException, InterruptedException {
        long started = System.nanoTime();
        // the caller goes on with this connection (the slot's checks, markDrained): it gets it back at its own level
        int isolation = c.getTransactionIsolation();
        c.setAutoCommit(false);
        c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
        Pass pass = new Pass();
        try {
            try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT pg_current_wal_insert_lsn()::text")) {
                rs.next();
                pass.snapshotLsn = Lsns.parse(rs.getString(1));
            }
            if (select == null) {
                select = unpublished(c, outboxTable) + " ORDER BY seq";
            }
            publishUnpublished(c, keepGoing, earlier, pass);
            c.commit();
        } catch (SQLException | RuntimeException | InterruptedException e) {
            c.rollback();
            throw e;
        } finally {
            c.setAutoCommit(true);
            c.setTransactionIsolation(isolation);
        }
        Result result = pass.result();
        if (pass.count > 0 && earlier == null) {
            log.info("start-up drain published {} rows already in {} ({} parked) in {} ms (first send at {} ms, waiting "
                            + "for Kafka's acknowledgements {} ms)", pass.published, outboxTable, pass.parked,
                    (System.nanoTime() - started) / 1_000_000, (pass.firstSendNanos - started) / 1_000_000,
                    pass.publishNanos / 1_000_000);
        }
        return result;
    }

    /** Reads the unpublished rows in seq order, in the pass's snapshot, and publishes them chunk by chunk. */
    private void publishUnpublished(Connection c, BooleanSupplier keepGoing, Result earlier, Pass pass)
            throws SQLException, InterruptedException {
        try (PreparedStatement ps = c.prepareStatement(select)) {
            ps.setFetchSize(chunk);
            try (ResultSet rs = ps.executeQuery()) {
                List<OutboxRow> rows = new ArrayList<>(chunk);
                boolean more = true;
                while (more) {
                    more = rs.next();
                    if (more && earlier != null && earlier.publishedBefore(rs.getLong(1))) {
                        continue;
                    }
                    if (more) {
                        rows.add(row(rs));
                    }
                    if (rows.size() == chunk || (!more && !rows.isEmpty())) {
                        publishChunk(rows, keepGoing, pass);
                        rows.clear();
                    }
                }
            }
        }
    }

    /**
     * Publishes one chunk and waits for Kafka's answers before the next is sent (so rows go out in seq order); its dead
     * letters are parked, and its acknowledged rows queued for deletion, only after those answers.
     */
    private void publishChunk(List<OutboxRow> rows, BooleanSupplier keepGoing, Pass pass)
            throws SQLException, InterruptedException {
        if (!keepGoing.getAsBoolean()) {
            throw new InterruptedException("start-up drain stopped (relay closing or lease lost)");
        }
        long sending = System.nanoTime();
        if (pass.firstSendNanos == 0) {
            pass.firstSendNanos = sending;
        }
        Publisher.Outcome outcome = publisher.publish(rows);
        pass.publishNanos += System.nanoTime() - sending;
        sink.park(outcome.deadLetters());
        pass.parked(outcome.deadLetters());
        long[] seqs = new long[outcome.acked().size()];
        for (int i = 0; i < seqs.length; i++) {
            seqs[i] = outcome.acked().get(i).seq();
        }
        sink.deleteLater(seqs);
        pass.handled(rows, outcome);
    }

    /** What one pass did so far (the pass's thread only). */
    private static final class Pass {
        private long[] drained = new long[1024];
        private long[] parkedSeqs = new long[0];
        private int count;
        private long published;
        private long parked;
        private long snapshotLsn;
        private long firstSendNanos;
        private long publishNanos;

        void parked(List<Publisher.DeadLetter> deadLetters) {
            if (!deadLetters.isEmpty()) {
                long[] now = deadLetters.stream().mapToLong(d -> d.row().seq()).toArray();
                parkedSeqs = Arrays.copyOf(parkedSeqs, parkedSeqs.length + now.length);
                System.arraycopy(now, 0, parkedSeqs, parkedSeqs.length - now.length, now.length);
            }
        }

        void handled(List<OutboxRow> rows, Publisher.Outcome outcome) {
            for (OutboxRow row : rows) {
                if (count == drained.length) {
                    drained = Arrays.copyOf(drained, count * 2);
                }
                drained[count++] = row.seq();
            }
            published += outcome.acked().size();
            parked += outcome.deadLetters().size();
        }

        Result result() {
            long[] seqs = Arrays.copyOf(drained, count);
            Arrays.sort(seqs);
            Arrays.sort(parkedSeqs);
            return new Result(seqs, Result.filled(seqs.length, snapshotLsn), snapshotLsn, published, parked, parkedSeqs);
        }
    }

    /** The select of the unpublished rows, without an order; {@link #row} reads one of its rows. */
    private static String unpublished(Connection c, String outboxTable) throws SQLException {
        // A schema before version 10 has no binary columns: read it as version 9 did.
        String binary = binaryColumnsPresent(c, outboxTable) ? ", payload_bytes, content_type" : ", NULL::bytea, NULL::text";
        return "SELECT seq, id::text, aggregate_type, aggregate_id, event_type, topic, payload::text, headers::text, "
                + "created_at" + binary + " FROM " + outboxTable + " WHERE published_at IS NULL";
    }

    private static OutboxRow row(ResultSet rs) throws SQLException {
        OffsetDateTime createdAt = rs.getObject(9, OffsetDateTime.class);
        return new OutboxRow(rs.getLong(1), rs.getString(2), rs.getString(3), rs.getString(4),
                rs.getString(5), rs.getString(6), rs.getString(7), rs.getString(8),
                null, createdAt == null ? null : createdAt.toInstant(), rs.getBytes(10), rs.getString(11));
    }

    /**
     * Up to {@code limit} of the newest unpublished rows, read without a lock (a standby's sample of what it will
     * publish once it takes over: {@link StandbyWarmup}).
     */
    static List<OutboxRow> newest(Connection c, String outboxTable, int limit) throws SQLException {
        List<OutboxRow> rows = new ArrayList<>(limit);
        try (PreparedStatement ps = c.prepareStatement(unpublished(c, outboxTable) + " ORDER BY seq DESC LIMIT ?")) {
            ps.setInt(1, limit);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    rows.add(row(rs));
                }
            }
        }
        return rows;
    }

    private static boolean binaryColumnsPresent(Connection c, String outboxTable) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT count(*) = 2 FROM pg_attribute WHERE attrelid = to_regclass(?)"
                + " AND attname IN ('payload_bytes', 'content_type') AND NOT attisdropped")) {
            ps.setString(1, outboxTable);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getBoolean(1);
            }
        }
    }
}
