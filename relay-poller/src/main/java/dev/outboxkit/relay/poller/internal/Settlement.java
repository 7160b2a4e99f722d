package dev.outboxkit.relay.poller.internal;

import dev.outboxkit.relay.PublishFailure;
import dev.outboxkit.relay.poller.AfterPublish;
import dev.outboxkit.runtime.DeadLetterWriter;
import dev.outboxkit.runtime.OperatorActions;
import dev.outboxkit.runtime.PublishFailures;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ends a batch's claim transaction once Kafka has answered (or the loop gave up waiting): rows Kafka
 * refused for good, or that ran out of attempts, are parked in the dead-letter table; the rows that
 * did not make it go back with their attempt counts; the fence is checked; then the commit forgets
 * the acknowledged rows. A batch that was never (wholly) sent is rolled back instead ({@link #giveBack}).
 */
final class Settlement {

    private static final Logger log = LoggerFactory.getLogger(ClaimLoop.class);

    private final String instanceId;
    private final String logPrefix;
    private final int maxAttempts;
    private final Map<String, Object> producerConfig;
    private final PollerSql sql;
    private final DeadLetterWriter deadLetters;
    private final LeaseManager leases;
    private final RelayMetrics metrics;
    private final LoopStatus status;
    private final boolean mark;
    /** Failures that only follow from the producer being stopped by another record's: never an attempt. */
    private final Predicate<Throwable> consequenceOfStop;

    Settlement(SettleTerms terms, PollerSql sql, LeaseManager leases, RelayMetrics metrics, LoopStatus status,
               Predicate<Throwable> consequenceOfStop) {
        this.consequenceOfStop = consequenceOfStop;
        this.instanceId = terms.instanceId();
        this.logPrefix = terms.logPrefix();
        this.maxAttempts = terms.maxAttempts();
        this.producerConfig = terms.producerConfig();
        this.sql = sql;
        this.deadLetters = new DeadLetterWriter(terms.schema());
        this.leases = leases;
        this.metrics = metrics;
        this.status = status;
        this.mark = terms.afterPublish() == AfterPublish.MARK;
    }

    /**
     * Ends the batch's transaction: parks refused rows, puts back the rows that did not make it,
     * checks the fence and commits. Returns false when the commit did not happen.
     */
    boolean finish(Batch b, boolean clean) {
        int acked = b.count(Batch.State.ACKED);
        int refused = b.count(Batch.State.PARKED);
        boolean kafkaAnswered = acked > 0 || refused > 0;
        Sorted rows = sort(b);
        metrics.countPublished(acked);
        noteKafka(b, acked, clean);
        Connection c = b.connection;
        try {
            if (!kafkaAnswered && !rows.counted) {
                c.rollback(); // nothing reached Kafka for good, no attempt to record: every row back exactly as it was
                return true;
            }
            return settle(c, b, rows);
        } catch (SQLException e) {
            Jdbc.rollbackQuietly(c);
            status.databaseTrouble("commit", e);
            return false;
        } finally {
            Jdbc.closeQuietly(c);
        }
    }

    /** The batch's rows by what becomes of them, with each row's attempt count after this batch. */
    private static final class Sorted {
        final List<Integer> park = new ArrayList<>();
        final List<Integer> putBack = new ArrayList<>();
        final int[] attempts;
        /** Whether a failure of this batch counts as an attempt of its row. */
        boolean counted;

        Sorted(int size) {
            attempts = new int[size];
        }
    }

    private Sorted sort(Batch b) {
        Sorted sorted = new Sorted(b.size());
        for (int i = 0; i < b.size(); i++) {
            ClaimedRow row = b.rows[i];
            sorted.attempts[i] = row.attempts;
            switch (b.state(i)) {
                case ACKED -> metrics.commitToAck(b.ackMicros(i) - row.createdAtMicros());
                case PARKED -> {
                    sorted.attempts[i] = row.attempts + 1;
                    sorted.park.add(i);
                }
                case FAILED -> {
                    // The one rule of both relays: Kafka's own answer about this record counts; a timeout, a failure
                    // that needs an operator or one that follows from another record's stop does not.
                    boolean counts = PublishFailures.isAttempt(b.error(i), consequenceOfStop);
                    if (counts) {
                        sorted.attempts[i] = row.attempts + 1;
                        sorted.counted = true;
                    }
                    if (counts && sorted.attempts[i] >= maxAttempts) {
                        sorted.park.add(i);
                    } else {
                        sorted.putBack.add(i);
                    }
                }
                default -> sorted.putBack.add(i);
            }
        }
        return sorted;
    }

    /** Parks, puts back, then commits, fenced: only while every lease the claim relied on is still this instance's. */
    private boolean settle(Connection c, Batch b, Sorted rows) throws SQLException {
        if (!rows.park.isEmpty()) {
            park(c, b, rows.park, rows.attempts);
        }
        if (!rows.putBack.isEmpty()) {
            putBack(c, b, rows.putBack, rows.attempts);
        }
        int[] parts = b.partitions();
        if (!fenceHolds(c, b.claimedUnder, parts)) {
            Jdbc.rollbackQuietly(c);
            Jdbc.closeQuietly(c);
            leases.fenced(b.claimedUnder, parts, "the commit of a batch of " + b.size() + " rows found the lease gone (a newer holder "
                    + "has it, or it expired while this instance stalled)");
            return false;
        }
        c.commit();
        status.lastProgressNanos = System.nanoTime();
        if (!rows.park.isEmpty()) {
            metrics.deadLettered(rows.park.size());
            logParked(b, rows);
        }
        return true;
    }

    private void logParked(Batch b, Sorted rows) {
        for (int i : rows.park) {
            ClaimedRow r = b.rows[i];
            Throwable e = b.error(i);
            log.warn("{}: parked event {} (seq {}, aggregate {}/{}) in outbox_dead_letter after {} "
                            + "attempt(s): {}. Retry or discard it with 'outbox dead-letters'",
                    logPrefix, r.id, r.seq, r.aggregateType, r.aggregateId, rows.attempts[i],
                    PublishFailures.classify(e).describe());
        }
    }

    private void noteKafka(Batch b, int acked, boolean clean) {
        if (clean) {
            status.kafkaTroubleSinceNanos = 0;
            status.kafkaRefused = false;
            return;
        }
        if (status.kafkaTroubleSinceNanos == 0) {
            status.kafkaTroubleSinceNanos = System.nanoTime();
        }
        // The first failure that needs an operator, else the first failure: what health and the log report.
        PublishFailures.Classified sample = null;
        for (int i = 0; i < b.size() && (sample == null || sample.outcome() != PublishFailure.FATAL); i++) {
            if (b.state(i) == Batch.State.FAILED && b.error(i) != null) {
                PublishFailures.Classified c = PublishFailures.classify(b.error(i));
                if (sample == null || c.outcome() == PublishFailure.FATAL) {
                    sample = c;
                }
            }
        }
        int failed = b.count(Batch.State.FAILED);
        boolean fatal = sample != null && sample.outcome() == PublishFailure.FATAL;
        status.kafkaRefused = failed > 0;
        String reason = sample == null ? null : fatal ? operatorReason(b, sample) : sample.describe();
        status.lastError = "Kafka: " + failed + " of " + b.size() + " records not acknowledged"
                + (reason == null ? "" : " (" + (fatal ? PublishFailures.OPERATOR_HINT + ": " : "") + reason + ")");
        if (fatal) {
            log.error("{}: {} of {} records of a batch were not acknowledged by Kafka ({} acknowledged): {}: {}. "
                            + "The rows stay in outbox_event (not counted as attempts, never parked for this) and are "
                            + "retried after a back-off until it is fixed", logPrefix, failed, b.size(), acked,
                    PublishFailures.OPERATOR_HINT, reason);
        } else {
            log.warn("{}: {} of {} records of a batch were not acknowledged by Kafka ({} acknowledged); the rows "
                            + "stay in outbox_event and are retried after a back-off. First error: {}",
                    logPrefix, failed, b.size(), acked, sample == null ? "none" : sample.describe());
        }
        int risks = b.orderRisks();
        if (risks > 0) {
            log.warn("{}: {} acknowledged record(s) follow a failed record of the same aggregate in this batch; "
                    + "Kafka may hold them ahead of it until it is retried. Use ParkPolicy.HOLD_AGGREGATE to rule this out",
                    logPrefix, risks);
        }
    }

    /** "User:relay may not WRITE topic orders; fatal: …" for ACL and login failures, else the failure itself. */
    private String operatorReason(Batch b, PublishFailures.Classified sample) {
        java.util.Set<String> topics = new java.util.TreeSet<>();
        for (int i = 0; i < b.size(); i++) {
            if (b.state(i) == Batch.State.FAILED && b.topic(i) != null) {
                topics.add(b.topic(i));
            }
        }
        String action = OperatorActions.of(sample.cause(), producerConfig, "WRITE", topics);
        return action == null ? sample.describe() : action + "; " + sample.describe();
    }

    private void park(Connection c, Batch b, List<Integer> park, int[] attempts) throws SQLException {
        List<DeadLetterWriter.Letter> letters = new ArrayList<>(park.size());
        for (int i : park) {
            ClaimedRow r = b.rows[i];
            Throwable e = b.error(i);
            PublishFailures.Classified why = PublishFailures.classify(
                    e != null ? e : new IllegalStateException("parked without a recorded error"));
            letters.add(DeadLetterWriter.Letter.of(r.id, r.seq, r.aggregateType, r.aggregateId, r.eventType, r.payload,
                    r.payloadBytes, r.contentType, r.headersJson, r.topic, r.createdAt, why, attempts[i]));
        }
        deadLetters.park(c, letters, instanceId);
        if (mark) {
            try (PreparedStatement ps = c.prepareStatement(sql.deleteParked)) {
                Long[] seqs = park.stream().map(i -> b.rows[i].seq).toArray(Long[]::new);
                ps.setArray(1, c.createArrayOf("int8", seqs));
                ps.executeUpdate();
            }
        }
    }

    private void putBack(Connection c, Batch b, List<Integer> rows, int[] attempts) throws SQLException {
        int n = rows.size();
        Long[] seq = new Long[n];
        Integer[] att = new Integer[n];
        for (int k = 0; k < n; k++) {
            seq[k] = b.rows[rows.get(k)].seq;
            att[k] = attempts[rows.get(k)];
        }
        try (PreparedStatement ps = c.prepareStatement(sql.requeue)) {
            if (mark) {
                ps.setArray(1, c.createArrayOf("int8", seq));
                ps.setArray(2, c.createArrayOf("int4", att));
            } else {
                String[][] text = new String[10][n];
                for (int k = 0; k < n; k++) {
                    ClaimedRow r = b.rows[rows.get(k)];
                    text[0][k] = r.id.toString();
                    text[1][k] = r.aggregateType;
                    text[2][k] = r.aggregateId;
                    text[3][k] = r.eventType;
                    text[4][k] = r.topic;
                    text[5][k] = r.payload;
                    text[6][k] = r.headersJson;
                    text[7][k] = r.createdAtText();
                    text[8][k] = r.payloadBytes == null ? null : HexFormat.of().formatHex(r.payloadBytes);
                    text[9][k] = r.contentType;
                }
                ps.setArray(1, c.createArrayOf("int8", seq));
                for (int col = 0; col < 8; col++) {
                    ps.setArray(2 + col, c.createArrayOf("text", text[col]));
                }
                ps.setArray(10, c.createArrayOf("int4", att));
                if (sql.binaryColumns) {
                    ps.setArray(11, c.createArrayOf("text", text[8]));
                    ps.setArray(12, c.createArrayOf("text", text[9]));
                }
            }
            ps.executeUpdate();
        }
    }

    private boolean fenceHolds(Connection c, Ownership own, int[] parts) throws SQLException {
        long[] fences = new long[parts.length];
        for (int i = 0; i < parts.length; i++) {
            fences[i] = own.fence(parts[i]);
            if (fences[i] < 0) {
                return false;
            }
        }
        return sql.leases.countHeld(c, PollerSql.leaseMap(parts, fences), instanceId) == parts.length;
    }

    /** Rolls back a batch that was not (or not wholly) sent: its rows come back as they were. */
    void giveBack(Batch b) {
        Jdbc.rollbackQuietly(b.connection);
        Jdbc.closeQuietly(b.connection);
    }
}
